#!/usr/bin/env bash
# Session (ze) ze5: branch ze-fast-first-store with the rule (codegen::dkdv_first_stores: the fast
# mode's first dQ stores in masked head-dim-128 ws kernels, no switch) and the way memo: the
# backward GPU tests that touch the fast mode's dQ sums and the memo, then compute-sanitizer on
# one fast backward per head dim.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/ze5}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 330 ./gpu_test_attention --gtest_filter='BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches:BwdGpu.TuningLaunchesLeaveNoDqBehind:BwdGpu.FastModeOnePerHeadDim:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.Gqa8To1AndBshd:BwdGpu.FullyMaskedRowsGiveZeroGradients:BwdGpu.SuiteMods:BwdGpu.WarpSpecializedFastDkdv:BwdGpu.WarpSpecializedFastDkdvManyKvTiles:BwdGpu.DeterministicModeMeasuresTheWayWhenTuning:BwdGpu.CapturedInAGraphAndReplayedGivesTheSameGradients:Configs/NanGpu.BackwardPropagatesNan/*:Configs/NanGpu.MaskedNanScoresDoNotLeak/*' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $r/tests.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
grep -E "^\[       OK|FAILED|Failure" $r/tests.txt | head -24
for tool in memcheck racecheck synccheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 90 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.FastModeOnePerHeadDim > $r/san_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$tool.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
done
cd $out && tar czf ze5.tar.gz r && rm -rf r
