#!/usr/bin/env bash
# Session (v) v6, the landing build 32f048e (unmasked ordered consumers wait, then read the name; the masked ordered and fast kernels as main):
# 1) the ordered-mode tests; 2) compute-sanitizer on OrderedModeOnePerHeadDim (now with an
# unmasked case, Sq 140); 3) the unmasked ordered kernels' speed, main's templates vs the fix,
# three rounds, order alternating (the masked kernels' SASS is identical to main's).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/v6}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_v6t timeout 300 ./gpu_test_attention --gtest_filter='BwdGpu.OrderedModeNamesEachTileAfterItLands:BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.HeadDimsAndHalfPrecision:BwdGpu.DeterministicModeTakesTheFasterWayPerCall:BwdGpu.OrderedModeOnePerHeadDim' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[ +(OK|FAILED|PASSED) ' $r/tests.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; grep -E 'Failure' -A4 $r/tests.txt | head -30
for tool in memcheck synccheck racecheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_v6t timeout 150 compute-sanitizer --tool $tool ./gpu_test_attention --gtest_filter='BwdGpu.OrderedModeOnePerHeadDim' > $r/san_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED)' $r/san_$tool.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
done
grep -E 'Race reported|Hazard' -A3 $r/san_racecheck.txt | grep -oE 'at [a-zA-Z_0-9<>:, ]+\+0x[0-9a-f]+|(Read|Write) (Port|port)[^\n]*' | sort | uniq -c | head -12
export FLEXJIT_AUTOTUNE=off FLEXJIT_DETERMINISTIC=1 FLEXJIT_CACHE_DIR=/tmp/fc_v6b
for round in 1 2 3; do
  order="main fixed"; [ $round = 2 ] && order="fixed main"
  for v in $order; do
    [ $v = main ] && export FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_main || export FLEXJIT_TEMPLATE_DIR=$PWD/../../templates
    timeout 60 ./flexjit bench --suite suite.json --only noop_d128 > $r/${v}_$round.log 2>&1
    timeout 60 ./flexjit bench --suite suite64x.json --only noop_d64 >> $r/${v}_$round.log 2>&1
    echo "$v $round: $(grep -o '"bwd_tflops":[0-9.]*,[^}]*"name":"[a-z_0-9]*"' $r/${v}_$round.log | sed -E 's/"bwd_tflops":([0-9.]+),.*"name":"([a-z_0-9]+)"/\2=\1/' | tr '\n' ' ')"
  done
done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
