#!/usr/bin/env bash
# Session (w) w6: the column values on the synchronous forward (mma.sync and 'g' wgmma).
# 1) tests on both kernels; 2) sanitizers on the out-of-bounds test; 3) A/B forward TF/s at
# synchronous configs, base = main bb14813's binary, new = this build, three rounds.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/w6}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_w6t timeout 300 ./gpu_test_attention --gtest_filter='FwdGpu.MaskColumnValues*:FwdGpu.HopperWgmmaPath:FwdGpu.GuardedBufferReadsAreNotReported:FwdGpu.BufferReadsWithThirtyTwoAndSixtyFourBitOffsets:FwdGpu.OutOfBounds*:SeqLensGpu.MmaSyncIndirectBufferMask:FwdGpu.SuiteMods' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[ +(OK|FAILED|PASSED) ' $r/tests.txt | sed -E 's/\[ +(OK|FAILED) +\] //' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; grep -E 'Failure|error:' -A6 $r/tests.txt | head -30
for tool in racecheck synccheck memcheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_w6t timeout 100 compute-sanitizer --tool $tool ./gpu_test_attention --gtest_filter='FwdGpu.MaskColumnValuesOutOfBounds' > $r/san_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED)' $r/san_$tool.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
done
export FLEXJIT_AUTOTUNE=off
for round in 1 2 3; do
  order="base new"; [ $round = 2 ] && order="new base"
  for v in $order; do
    bin=./flexjit; [ $v = base ] && bin=./base/flexjit
    export FLEXJIT_CACHE_DIR=/tmp/fc_w6_$v
    : > $r/${v}_$round.log
    for c in m128n64w4s2 m128n128w8s2g; do
      timeout 60 $bin bench --suite suite.json --only document_causal_d128,document_nested_causal_d128 --config $c --no-bwd | sed "s/\"name\":\"/\"name\":\"$c:/" >> $r/${v}_$round.log 2>&1
      timeout 60 $bin bench --suite suite64x.json --only document_causal_d64 --config $c --no-bwd | sed "s/\"name\":\"/\"name\":\"$c:/" >> $r/${v}_$round.log 2>&1
    done
    echo "$v $round: $(grep -o '"fwd_tflops":[0-9.]*,[^}]*"name":"[a-z_0-9:]*"' $r/${v}_$round.log | sed -E 's/"fwd_tflops":([0-9.]+),.*"name":"([a-z_0-9:]+)"/\2=\1/' | tr '\n' ' ')"
  done
done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf w6.tar.gz r && rm -rf r
