#!/usr/bin/env bash
# Session (zl), second call: the GPU tests and compute-sanitizer for the new rule
# (codegen::ordered_dq_ascending: ascending under any mask without GQA, and under documents with
# GQA up to head dim 128; the pairs of the last wave descending). The branch's
# BwdGpu.OrderedModeAscendingPairsBesideADescendingTail runs both directions in one launch (causal,
# sliding window, documents, documents with GQA). Stage in .gpu/<s>/: gpu_test_attention, this script.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zl2}; r=/tmp/zl2r/r; mkdir -p $r $out
save() { (cd /tmp/zl2r && tar czf $out/zl2.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
run_tests() {  # tag filter
  FLEXJIT_CACHE_DIR=/tmp/fc_$1 timeout 300 ./gpu_test_attention --gtest_filter="$2" > $r/tests_$1.txt 2>&1
}
run_tests a 'BwdGpu.Ordered*:BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits' &
run_tests b 'BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.DeterministicModeTakesTheFasterWayPerCall:BwdGpu.FastAndDeterministicModes' &
run_tests c 'BwdGpu.SuiteMods:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.Gqa8To1AndBshd:BwdGpu.FullyMaskedRowsGiveZeroGradients:BwdGpu.ShortSequencesWithAnOddGqaRatio:RandomProblemsGpu.*' &
wait
echo "tests $(( $(date +%s) - t0 )) s"; save
F=BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.OrderedModeAscendingPairsBesideADescendingTail:BwdGpu.OrderedModeMoreKvTilesThanResidentCtas
for tool in memcheck synccheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_$tool timeout 250 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter=$F > $r/san_$tool.txt 2>&1 &
done
FLEXJIT_CACHE_DIR=/tmp/fc_race timeout 250 compute-sanitizer --tool racecheck --kernel-name kns=bwd_dkdv --print-limit 2000 ./gpu_test_attention --gtest_filter=$F > $r/san_racecheck.txt 2>&1 &
wait
for f in $r/tests_*.txt $r/san_*.txt; do echo "$(basename $f): $(grep -E '^\[  FAILED|^\[  PASSED|ERROR SUMMARY|RACECHECK SUMMARY' $f | tr '\n' ' ') ok=$(grep -c '^\[       OK' $f)"; done
grep -A1 'Error: Race' $r/san_racecheck.txt | sed -E 's/\+0x[0-9a-f]+//g; s/\[[0-9]+ hazards\]//; s/\(.*\) in / in /; s/<[^>]*>//g' | grep -v '^--' | paste - - | sort | uniq -c | sort -rn | head -8
grep -h -B2 -A12 "Failure" $r/tests_*.txt | head -60
echo "$(( $(date +%s) - t0 )) s"
save
