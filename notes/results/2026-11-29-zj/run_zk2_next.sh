#!/usr/bin/env bash
# For the next session (zk2), prepared in (zj): the GPU tests and compute-sanitizer for the
# ascending turns (zk_ascending_turns.patch), if zk1 keeps them. The patch adds
# BwdGpu.OrderedModeMoreKvTilesThanResidentCtas (141 kv tiles in one pair at d256: the launch
# order's guarantee, which the reversed waits rely on). Stage in .gpu/<s>/: gpu_test_attention
# built with the patch, this script.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zk2}; r=/tmp/zk2r/r; mkdir -p $r $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
run_tests() {  # tag filter
  FLEXJIT_CACHE_DIR=/tmp/fc_$1 timeout 500 ./gpu_test_attention --gtest_filter="$2" > $r/tests_$1.txt 2>&1
}
run_tests a 'BwdGpu.Ordered*:BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits' &
run_tests b 'BwdGpu.FastAndDeterministicModes:BwdGpu.HeadDimsAndHalfPrecision:BwdGpu.DeterministicModeTakesTheFasterWayPerCall:ErrorWordsGpu.*' &
run_tests c 'BwdGpu.SuiteMods:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.Gqa8To1AndBshd:BwdGpu.FullyMaskedRowsGiveZeroGradients:BwdGpu.ShortSequencesWithAnOddGqaRatio:RandomProblemsGpu.*' &
for tool in memcheck synccheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_$tool timeout 500 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.OrderedModeMoreKvTilesThanResidentCtas > $r/san_$tool.txt 2>&1 &
done
FLEXJIT_CACHE_DIR=/tmp/fc_race timeout 500 compute-sanitizer --tool racecheck --print-limit 20 ./gpu_test_attention --gtest_filter=BwdGpu.OrderedModeOnePerHeadDim > $r/san_racecheck.txt 2>&1 &
wait
for f in $r/tests_*.txt; do echo "$(basename $f): $(grep -E '^\[  FAILED|^\[  PASSED' $f | tr '\n' ' ') ok=$(grep -c '^\[       OK' $f)"; done
for f in $r/san_*.txt; do echo "$(basename $f): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $f | tr '\n' ' ')"; done
grep -h -B2 -A12 "Failure" $r/tests_*.txt | head -60
echo "$(( $(date +%s) - t0 )) s"
cd /tmp/zk2r && tar czf $out/zk2.tar.gz r
