#!/bin/bash
# zzr5 (final build: STATS_PAIRS in the masked or score-modded fast kernel up to head dim 64, the
# plain kernel back to main's text): the backward GPU tests against float64, three processes.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzr5}; r=/tmp/zzr5r/r; mkdir -p $r $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
go() { n=$1; f=$2; FLEXJIT_CACHE_DIR=/tmp/fct_$n timeout 500 ./gpu_test_attention --gtest_filter="$f" > $r/tests_$n.txt 2>&1; echo "tests_$n rc=$? $(( $(date +%s) - t0 )) s" >> $r/rc.txt; }
go a 'RandomProblemsGpu.*:BwdGpu.FastModeOnePerHeadDim' &
go b 'BwdGpu.SuiteMods:BwdGpu.WarpSpecializedFastDkdv*:BwdGpu.NanInDoReachesOnlyTheGradientsThatReadIt:BwdGpu.FastModeSplitsGqaGroupsOverCtas' &
go c 'SeqLensGpu.WarpSpecializedBackward:SeqLensGpu.WgmmaHeadDim64:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.ShortSequencesWithAnOddGqaRatio:BwdGpu.HeadDimsThatAreNoMultipleOf64' &
wait
FLEXJIT_CACHE_DIR=/tmp/fct_c timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 ./gpu_test_attention --gtest_filter='SeqLensGpu.WgmmaHeadDim64' > $r/memcheck.txt 2>&1; echo "memcheck rc=$? $(( $(date +%s) - t0 )) s" >> $r/rc.txt
cat $r/rc.txt; grep -hE "OK \]|FAILED|PASSED|Failure|ERROR SUMMARY" $r/*.txt | head -60
(cd /tmp/zzr5r && tar czf $out/zzr5.tar.gz r)
