#!/usr/bin/env bash
# (zzzt) one-walk: GQA consumers read the group's one walk from registers. Tests of the new
# binary (GQA backward, lengths, NaN, random problems) and memcheck, then a 3-round A/B
# main / new on GQA problems (causal 1:1 as the control: same kernel). Carry .gpu/zzzt2.
set -u
cd "$(dirname "$0")"
source ./device_lib.sh
out=${OUT:-/tmp/gq}; r=/tmp/gqr/r; mkdir -p $out $r
save() { (cd /tmp/gqr && tar czf $out/gq_tests.tar.gz r); }
device_start $r
device_unpack .
device_tests many ./gta_new 'BwdGpu.WarpSpecializedFastDkdvManyKvTiles' 120
device_tests gqa ./gta_new 'BwdGpu.Gqa8To1AndBshd:BwdGpu.ShortSequencesWithAnOddGqaRatio:BwdGpu.FastModeSplitsGqaGroupsOverCtas:BwdGpu.FastModeOnePerHeadDim' 120
device_tests lens ./gta_new 'SeqLensGpu.WarpSpecializedBackward:BufferGradGpu.RelativePositionTableCausalGqaOddLengths:NanGpu.*:*FullyMasked*' 120
FLEXJIT_RANDOM_PROBLEMS=6 device_tests random ./gta_new 'RandomProblemsGpu.*' 120
device_sanitize memcheck ./gta_new 'BwdGpu.Gqa8To1AndBshd' 120
wait
device_failures
save
OUT=$out bash ab2.sh gqab gq.json bwd_ms ${BUDGET:-170} 3 "" main:./flexjit:: new:./flexjit_new:: 2>&1 | grep -v "^gqab "
echo "all $(( $(date +%s) - device_t0 )) s"
save
