#!/bin/bash
# Prepared for the next session (not run): what zzg owed a GPU. The deterministic-mode test whose
# GQA rows now split by the call's own choice (DeterministicModeSumsDqInOrder ran out of device
# time in zzg), the other ordered and GQA backward tests, and synccheck on both split tests.
# Stage: a stripped gpu_test_attention of main in .gpu/<dir>/ beside this script.
cd "$(dirname "$0")"
out=${OUT:-/tmp/next}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
tests='BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.Ordered*:BwdGpu.FastAndDeterministicModes:BwdGpu.CapturedInAGraphAndReplayedGivesTheSameGradients:SeqLensGpu.WarpSpecializedOrderedBackward:BufferGradGpu.*'
FLEXJIT_CACHE_DIR=/tmp/fct timeout 420 ./gpu_test_attention --gtest_filter="$tests" > $out/tests.txt 2>&1; echo "rc=$?" >> $out/tests.txt
grep -E '^\[  (PASSED|FAILED) |^\[ +OK|FAILED  \]|rc=|Failure' $out/tests.txt | tail -30; echo "tests $(( $(date +%s) - t0 )) s"
for t in BwdGpu.FastModeSplitsGqaGroupsOverCtas BwdGpu.OrderedModeSplitsGqaGroupsOverCtas; do
  FLEXJIT_CACHE_DIR=/tmp/fct timeout 150 compute-sanitizer --tool synccheck ./gpu_test_attention --gtest_filter=$t > $out/sync_$t.txt 2>&1
  grep -E "ERROR SUMMARY|PASSED|FAILED" $out/sync_$t.txt | tail -2
done
echo "$(( $(date +%s) - t0 )) s"
