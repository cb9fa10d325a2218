#!/usr/bin/env bash
# For the next session (zj2): the GPU tests and compute-sanitizer for what zj1 keeps. Stage in
# .gpu/<s>/: gpu_test_attention built with the kept patch(es), this script.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zj2}; r=/tmp/zj2r/r; mkdir -p $r $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
run_tests() {  # tag filter
  FLEXJIT_CACHE_DIR=/tmp/fc_$1 timeout 540 ./gpu_test_attention --gtest_filter="$2" > $r/tests_$1.txt 2>&1
}
run_tests a 'BwdGpu.Ordered*:BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches' &
run_tests b 'BwdGpu.FastAndDeterministicModes:BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits:BwdGpu.HeadDimsAndHalfPrecision:BwdGpu.FastModeOnePerHeadDim' &
run_tests c 'BwdGpu.SuiteMods:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.Gqa8To1AndBshd:BwdGpu.FullyMaskedRowsGiveZeroGradients:RandomProblemsGpu.*' &
for tool in memcheck synccheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_$tool timeout 540 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.OrderedModeOnePerHeadDim > $r/san_$tool.txt 2>&1 &
done
wait
for f in $r/tests_*.txt; do echo "$(basename $f): $(grep -E '^\[       OK|^\[  FAILED|^\[  PASSED' $f | sed 's/\[ *//;s/ *\]//' | tr '\n' ' ')"; done
for f in $r/san_*.txt; do echo "$(basename $f): $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $f | tr '\n' ' ')"; done
grep -h -B2 -A12 "Failure" $r/tests_*.txt | head -60
echo "$(( $(date +%s) - t0 )) s"
cd /tmp/zj2r && tar czf $out/zj2.tar.gz r
