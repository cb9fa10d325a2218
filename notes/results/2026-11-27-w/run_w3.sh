#!/usr/bin/env bash
# Session (w) w3: the mask's row values computed once per query (dK/dV ws kernel).
# 1) backward tests; 2) compute-sanitizer on the two small position-value tests; 3) A/B backward
# TF/s, base = main bb14813's binary, new = this build (forward column values too), three rounds.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/w3}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_w3t timeout 280 ./gpu_test_attention --gtest_filter='BwdGpu.WarpSpecializedMaskRowValues*:BwdGpu.BufferReadsWith*:BwdGpu.SuiteMods:BwdGpu.FastAndDeterministicModes:BwdGpu.WarpSpecializedFastDkdv:BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.FullyMaskedRowsGiveZeroGradients:BufferGradGpu.BiasIndexedByTheKeysDocumentAndZeroForTheQuerys' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[ +(OK|FAILED|PASSED) ' $r/tests.txt | sed -E 's/\[ +(OK|FAILED) +\] //' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; grep -E 'Failure|error:' -A6 $r/tests.txt | head -40
for tool in racecheck synccheck memcheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_w3t timeout 100 compute-sanitizer --tool $tool ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedMaskColumnValuesOutOfBounds:BwdGpu.WarpSpecializedMaskRowValuesGuardedReads' > $r/san_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED)' $r/san_$tool.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
done
grep -E 'Race reported|Hazard' -A3 $r/san_racecheck.txt | grep -oE 'at [a-zA-Z_0-9<>:, ]+\+0x[0-9a-f]+|(Read|Write) (Port|port)[^\n]*' | sort | uniq -c | head -8
export FLEXJIT_AUTOTUNE=off
for round in 1 2 3; do
  order="base new"; [ $round = 2 ] && order="new base"
  for v in $order; do
    bin=./flexjit; [ $v = base ] && bin=./base/flexjit
    export FLEXJIT_CACHE_DIR=/tmp/fc_w3_$v
    timeout 100 $bin bench --suite suite.json --only document_causal_d128,document_nested_causal_d128,long_document_causal_d128,causal_d128 > $r/${v}_$round.log 2>&1
    timeout 60 $bin bench --suite suite64x.json --only document_causal_d64 >> $r/${v}_$round.log 2>&1
    FLEXJIT_DETERMINISTIC=1 timeout 60 $bin bench --suite suite.json --only document_causal_d128 > $r/${v}_det_$round.log 2>&1
    echo "$v $round: $(grep -o '"bwd_tflops":[0-9.]*,[^}]*"name":"[a-z_0-9]*"' $r/${v}_$round.log | sed -E 's/"bwd_tflops":([0-9.]+),.*"name":"([a-z_0-9]+)"/\2=\1/' | tr '\n' ' ') det: $(grep -o '"bwd_tflops":[0-9.]*' $r/${v}_det_$round.log | tr '\n' ' ')"
  done
done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf w3.tar.gz r && rm -rf r
