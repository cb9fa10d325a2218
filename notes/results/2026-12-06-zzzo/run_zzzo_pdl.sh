#!/usr/bin/env bash
# (zzzo) call P1, carry .gpu/pdl: bwd-pdl (the branch, `flexjit`, `gta`) against main (`flexjit_main`).
#  1. A/B main / pdl, whole backward (bench's bwd_ms), 3 rounds on a quiet GPU;
#  2. the backward GPU tests that order work on streams and read every gradient (run_next_pdl.sh's
#     list, (zzzn)), in parallel processes; the tuning test after them.
#  3. compute-sanitizer memcheck / synccheck / racecheck of BwdGpu.FastModeOnePerHeadDim beside the tests.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/pdl}; r=/tmp/pdlr/r; mkdir -p $r $out
save() { (cd /tmp/pdlr && tar czf $out/pdl.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
OUT=$r bash ab2.sh pdlab ${AB_SUITE:-pdl_ab.json} bwd_ms ${AB_BUDGET:-200} ${AB_ROUNDS:-3} "" main:./flexjit_main:: pdl:./flexjit:: 2>&1 | grep -v "^pdlab "
cp /tmp/pdlabr/r/*.jsonl $r/ 2>/dev/null
echo "ab $(( $(date +%s) - t0 )) s"
save
left=$(( ${TEST_END:-480} - ($(date +%s) - t0) ))
i=0
for f in 'BwdGpu.LaterWorkOnTheCallersStreamSeesEveryGradient:BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches:BwdGpu.SuiteMods' \
         'BwdGpu.FastAndDeterministicModes:BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits' \
         'SeqLensGpu.WarpSpecializedBackward:SeqLensGpu.WarpSpecializedOrderedBackward:BwdGpu.OddLengthsAndDifferentLengths' \
         'RandomProblemsGpu.*:BwdGpu.Gqa8To1AndBshd' 'BwdGpu.ScoreModsWithConstantFactors:BwdGpu.DiagonalTableOnePerHeadDim'; do
  i=$((i + 1))
  (FLEXJIT_CACHE_DIR=/tmp/fj_t$i timeout $left ./gta --gtest_filter="$f" > $r/tests_$i.txt 2>&1; echo "tests $i rc=$? $(( $(date +%s) - t0 )) s") &
done
# the sanitizers beside the tests (correctness only; nothing here is timed)
for tool in memcheck synccheck racecheck; do
  (FLEXJIT_CACHE_DIR=/tmp/fjs_$tool timeout $left compute-sanitizer --tool $tool ./gta --gtest_filter='BwdGpu.FastModeOnePerHeadDim' > $r/$tool.txt 2>&1
   echo "$tool rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY\|PASSED\|FAILED' $r/$tool.txt | tail -2 | tr '\n' ' ')") &
done
wait
left=$(( ${TUNE_END:-540} - ($(date +%s) - t0) ))
(FLEXJIT_AUTOTUNE=on FLEXJIT_CACHE_DIR=/tmp/fj_tune timeout $left ./gta --gtest_filter='BwdGpu.TuningLaunchesLeaveNoDqBehind' > $r/tests_tune.txt 2>&1; echo "tune test rc=$?")
grep -hE "^\[ +(OK|FAILED) |Failure|FAILED TEST|tests? from .* ran" $r/tests_*.txt | grep -v "^\[       OK" | head -30
cat $r/tests_*.txt | grep -c "^\[       OK" | sed "s/^/OK tests: /"
echo "all $(( $(date +%s) - t0 )) s"
save
