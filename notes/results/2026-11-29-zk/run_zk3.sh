#!/usr/bin/env bash
# Session (zk), third call: the GPU tests and compute-sanitizer on this tree (the ascending turns
# under data-cut masks, codegen::ordered_dq_ascending). Three groups of tests side by side, then
# memcheck and synccheck on OrderedModeOnePerHeadDim and OrderedModeMoreKvTilesThanResidentCtas,
# racecheck on OrderedModeOnePerHeadDim (descending masked and unmasked, ascending documents, per
# head dim; also the racecheck (zj) owed on the d256 kernels' piece in the Q stage).
# Stage in .gpu/<s>/: gpu_test_attention (this tree), this script.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zk3}; r=/tmp/zk3r/r; mkdir -p $r $out
save() { (cd /tmp/zk3r && tar czf $out/zk3.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
run_tests() {  # tag filter
  FLEXJIT_CACHE_DIR=/tmp/fc_$1 timeout 400 ./gpu_test_attention --gtest_filter="$2" > $r/tests_$1.txt 2>&1
}
run_tests a 'BwdGpu.Ordered*:BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits' &
run_tests b 'BwdGpu.FastAndDeterministicModes:BwdGpu.HeadDimsAndHalfPrecision:BwdGpu.DeterministicModeTakesTheFasterWayPerCall:BwdGpu.DeterministicModeMeasuresTheWayWhenTuning:ErrorWordsGpu.*' &
run_tests c 'BwdGpu.SuiteMods:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.Gqa8To1AndBshd:BwdGpu.FullyMaskedRowsGiveZeroGradients:BwdGpu.ShortSequencesWithAnOddGqaRatio:RandomProblemsGpu.*' &
wait
echo "tests $(( $(date +%s) - t0 )) s"; save
for tool in memcheck synccheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_$tool timeout 300 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.OrderedModeMoreKvTilesThanResidentCtas > $r/san_$tool.txt 2>&1 &
done
FLEXJIT_CACHE_DIR=/tmp/fc_race timeout $(( 560 - ($(date +%s) - t0) )) compute-sanitizer --tool racecheck --print-limit 20 ./gpu_test_attention --gtest_filter=BwdGpu.OrderedModeOnePerHeadDim > $r/san_racecheck.txt 2>&1 &
wait
for f in $r/tests_*.txt; do echo "$(basename $f): $(grep -E '^\[  FAILED|^\[  PASSED' $f | tr '\n' ' ') ok=$(grep -c '^\[       OK' $f)"; done
for f in $r/san_*.txt; do echo "$(basename $f): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $f | tr '\n' ' ')"; done
grep -h -B2 -A12 "Failure" $r/tests_*.txt | head -60
echo "$(( $(date +%s) - t0 )) s"
save
