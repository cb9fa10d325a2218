#!/usr/bin/env bash
# Session (zc) zc5: one ordered dQ chain (the landing build): the deterministic-mode GPU tests and
# compute-sanitizer on the ordered mode's one-per-head-dim test.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zc5}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 300 ./gpu_test_attention --gtest_filter='BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.OrderedModeNamesEachTileAfterItLands:BwdGpu.DeterministicModeTakesTheFasterWayPerCall:BwdGpu.FastAndDeterministicModes:BwdGpu.FastModeOnePerHeadDim' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[  (PASSED|FAILED) |tests ran' $r/tests.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
grep -E "^\[       OK|FAILED|Failure|error" $r/tests.txt | head -12
for tool in memcheck racecheck synccheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 100 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.OrderedModeOnePerHeadDim > $r/san_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$tool.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
done
grep -h "Race reported\|Hazard" $r/san_racecheck.txt | sort | uniq -c | head -5
cd $out && tar czf zc5.tar.gz r && rm -rf r
