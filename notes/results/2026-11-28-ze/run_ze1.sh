#!/usr/bin/env bash
# Session (ze) ze1: branch ze-fast-first-store (rebased on 2b199e1), switch FLEXJIT_EXP_DQ_FIRST=1:
# the backward GPU tests that cover the fast mode's dQ sums, then compute-sanitizer on one fast
# backward per head dim.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/ze1}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader
t0=$(date +%s)
FLEXJIT_EXP_DQ_FIRST=1 FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 300 ./gpu_test_attention --gtest_filter='BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches:BwdGpu.TuningLaunchesLeaveNoDqBehind:BwdGpu.FastModeOnePerHeadDim:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.Gqa8To1AndBshd:BwdGpu.FullyMaskedRowsGiveZeroGradients:BwdGpu.SuiteMods' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $r/tests.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
grep -E "^\[       OK|FAILED|Failure" $r/tests.txt | head -20
for tool in memcheck racecheck synccheck; do
  FLEXJIT_EXP_DQ_FIRST=1 FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 90 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.FastModeOnePerHeadDim > $r/san_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$tool.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
done
cd $out && tar czf ze1.tar.gz r && rm -rf r
