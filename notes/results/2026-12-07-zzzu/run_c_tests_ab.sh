#!/usr/bin/env bash
# (zzzt, for the next session) early-convert: tests of the branch's binary (the new stream test,
# the fast mode over head dims, many kv tiles, streams and graphs, GQA, lengths, random problems),
# memcheck and synccheck of the new test, then a 3-round A/B main / ec of the suite's fast
# backward. Carry .gpu/zzzu (zzzu: after calls A and B on the same machine).
set -u
cd "$(dirname "$0")"
source ./device_lib.sh
out=${OUT:-/tmp/zzzuc}; r=/tmp/zzzucr/r; mkdir -p $out $r
save() { (cd /tmp/zzzucr && tar czf $out/ec_tests.tar.gz r); }
device_start $r
device_unpack .
device_tests new ./gta_ec 'BwdGpu.FastModeConvertsDqAsEachKvHeadLands' 120
device_tests fast ./gta_ec 'BwdGpu.FastModeOnePerHeadDim:BwdGpu.WarpSpecializedFastDkdvManyKvTiles' 150
device_tests streams ./gta_ec 'BwdGpu.*Stream*:BwdGpu.CapturedInAGraphAndReplayedGivesTheSameGradients:BwdGpu.Gqa8To1AndBshd:BwdGpu.FastModeSplitsGqaGroupsOverCtas:SeqLensGpu.WarpSpecializedBackward' 150
FLEXJIT_RANDOM_PROBLEMS=6 device_tests random ./gta_ec 'RandomProblemsGpu.*' 150
device_sanitize memcheck ./gta_ec 'BwdGpu.FastModeConvertsDqAsEachKvHeadLands' 150
device_sanitize synccheck ./gta_ec 'BwdGpu.FastModeConvertsDqAsEachKvHeadLands' 150
wait
device_failures
save
OUT=$out bash ab2.sh ecab suite.json bwd_ms ${BUDGET:-150} 3 "" main:./flexjit:: ec:./flexjit_ec:: 2>&1 | grep -v "^ecab "
echo "all $(( $(date +%s) - device_t0 )) s"
save
