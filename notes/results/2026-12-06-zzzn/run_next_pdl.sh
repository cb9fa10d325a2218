#!/usr/bin/env bash
# Prepared in (zzzn), not run: the branch bwd-pdl (programmatic dependent launches in the backward:
# preprocess -> warp-specialised dK/dV -> dQ conversion; `bwd_pdl.patch`).
# Folder to carry (.gpu/<tag>): flexjit and gta from bwd-pdl's build (stripped), flexjit_main
# from main's, ab2.sh (notes/results/2026-12-04-zzv/), pdl_ab.json (this folder), this script.
#  1. the backward GPU tests that order work on streams and read every gradient, in parallel
#     processes (visibility of the preprocess's writes and of dK/dV's to the conversion and to
#     later work): LaterWorkOnTheCallersStreamSeesEveryGradient, FastModeWritesDqOfQueryTilesNoKeyReaches,
#     TuningLaunchesLeaveNoDqBehind, SuiteMods, FastAndDeterministicModes, the SeqLens and Random ones;
#  2. memcheck / synccheck / racecheck on FastModeOnePerHeadDim;
#  3. A/B main / pdl, whole fast backward, 3 rounds (expected: a few us a call, 1-3 % at 257-1024
#     tokens, under 0.5 % at 4096).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/pdl}; r=/tmp/pdlr/r; mkdir -p $r $out
save() { (cd /tmp/pdlr && tar czf $out/pdl.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
i=0
for f in 'BwdGpu.LaterWorkOnTheCallersStreamSeesEveryGradient:BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches:BwdGpu.SuiteMods' \
         'BwdGpu.FastAndDeterministicModes:BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits' \
         'SeqLensGpu.WarpSpecializedBackward:SeqLensGpu.WarpSpecializedOrderedBackward:BwdGpu.OddLengthsAndDifferentLengths' \
         'RandomProblemsGpu.*:BwdGpu.Gqa8To1AndBshd' 'BwdGpu.ScoreModsWithConstantFactors:BwdGpu.DiagonalTableOnePerHeadDim'; do
  i=$((i + 1))
  (FLEXJIT_CACHE_DIR=/tmp/fj_t$i timeout 280 ./gta --gtest_filter="$f" > $r/tests_$i.txt 2>&1; echo "tests $i rc=$? $(( $(date +%s) - t0 )) s") &
done
wait
(FLEXJIT_AUTOTUNE=on FLEXJIT_CACHE_DIR=/tmp/fj_tune timeout 200 ./gta --gtest_filter='BwdGpu.TuningLaunchesLeaveNoDqBehind' > $r/tests_tune.txt 2>&1; echo "tune test rc=$?")
grep -hE "^\[ +(OK|FAILED) |Failure|FAILED TEST" $r/tests_*.txt | head -40
save
for tool in memcheck synccheck racecheck; do
  FLEXJIT_CACHE_DIR=/tmp/fjs_$tool timeout 150 compute-sanitizer --tool $tool ./gta --gtest_filter='BwdGpu.FastModeOnePerHeadDim' > $r/$tool.txt 2>&1
  echo "$tool rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' $r/$tool.txt | tail -1)"
done
save
OUT=$r bash ab2.sh pdlab pdl_ab.json bwd_ms 200 3 "" main:./flexjit_main:: pdl:./flexjit:: 2>&1 | grep -v "^pdlab "
echo "all $(( $(date +%s) - t0 )) s"
save
