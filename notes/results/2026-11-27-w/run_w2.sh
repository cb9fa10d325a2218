#!/usr/bin/env bash
# Session (w) w2: the mask's column values computed once per key (forward, ws).
# 1) the new and the buffer-reading forward tests; 2) racecheck / synccheck / memcheck on the
# out-of-bounds column test (both paths: no error, and the per-value error pass); 3) A/B forward
# TF/s, base = main bb14813's binary, new = this build, three rounds, order alternating.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/w2}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_w2t timeout 330 ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedMaskColumnValues*:FwdGpu.GuardedBufferReadsAreNotReported:FwdGpu.BufferReadsWithThirtyTwoAndSixtyFourBitOffsets:FwdGpu.OutOfBounds*:FwdGpu.WarpSpecializedModsTwoConsumers:FwdGpu.WarpSpecializedModsThreeStages:FwdGpu.WarpSpecializedModsOneConsumer:FwdGpu.WarpSpecializedModsHeadDim256:FwdGpu.SuiteMods' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[ +(OK|FAILED|PASSED) ' $r/tests.txt | sed -E 's/\[ +(OK|FAILED) +\] FwdGpu\.//' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; grep -E 'Failure|error:' -A6 $r/tests.txt | head -40
for tool in racecheck synccheck memcheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_w2t timeout 120 compute-sanitizer --tool $tool ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedMaskColumnValuesOutOfBounds' > $r/san_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED)' $r/san_$tool.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
done
export FLEXJIT_AUTOTUNE=off
for round in 1 2 3; do
  order="base new"; [ $round = 2 ] && order="new base"
  for v in $order; do
    bin=./flexjit; [ $v = base ] && bin=./base/flexjit
    export FLEXJIT_CACHE_DIR=/tmp/fc_w2_$v
    timeout 100 $bin bench --suite suite.json --only document_causal_d128,document_nested_causal_d128,long_document_causal_d128,causal_d128,sliding_window_d128 --no-bwd > $r/${v}_$round.log 2>&1
    timeout 60 $bin bench --suite suite64x.json --only document_causal_d64,causal_d64,sliding_window_d64 --no-bwd >> $r/${v}_$round.log 2>&1
    echo "$v $round: $(grep -o '"fwd_tflops":[0-9.]*,[^}]*"name":"[a-z_0-9]*"' $r/${v}_$round.log | sed -E 's/"fwd_tflops":([0-9.]+),.*"name":"([a-z_0-9]+)"/\2=\1/' | tr '\n' ' ')"
  done
done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf w2.tar.gz r && rm -rf r
