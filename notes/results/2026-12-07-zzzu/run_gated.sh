#!/usr/bin/env bash
# (zzzu) early-convert gated to GQA (c129e7e): its binary's GPU tests (the new test, the fast mode,
# many kv tiles, streams and graphs, GQA, lengths, random problems) and memcheck of the new test,
# then an A/B main / gated over 1:1 and GQA problems (ab.json). Carry .gpu/zzzu2.
set -u
cd "$(dirname "$0")"
source ./device_lib.sh
out=${OUT:-/tmp/zzzu2}; r=/tmp/zzzu2r/r; mkdir -p $out $r
save() { (cd /tmp/zzzu2r && tar czf $out/g_tests.tar.gz r); }
device_start $r
device_unpack .
device_tests new ./gta_g 'BwdGpu.FastModeConvertsDqAsEachKvHeadLands:BwdGpu.Gqa8To1AndBshd' 200
device_tests fast ./gta_g 'BwdGpu.FastModeOnePerHeadDim:BwdGpu.WarpSpecializedFastDkdvManyKvTiles' 200
device_tests streams ./gta_g 'BwdGpu.LaterWorkOnTheCallersStreamSeesEveryGradient:BwdGpu.CapturedInAGraphAndReplayedGivesTheSameGradients:BwdGpu.FastModeSplitsGqaGroupsOverCtas' 200
device_tests lens ./gta_g 'SeqLensGpu.WarpSpecializedBackward' 200
FLEXJIT_RANDOM_PROBLEMS=6 device_tests random ./gta_g 'RandomProblemsGpu.*' 200
device_sanitize memcheck ./gta_g 'BwdGpu.FastModeConvertsDqAsEachKvHeadLands' 200
wait
device_failures
save
OUT=$out bash ab2.sh gab ab.json bwd_ms ${BUDGET:-150} 3 "" main:./flexjit:: g:./flexjit_g:: 2>&1 | grep -v "^gab "
echo "all $(( $(date +%s) - device_t0 )) s"
save
