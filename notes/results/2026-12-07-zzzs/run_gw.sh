#!/usr/bin/env bash
# (zzzs) branch gqa-walk: the fast ws dK/dV kernel walks a GQA group's heads inner with the query
# tiles descending (desc), against main. First copies .fa4a (carried beside) for the next call. Tests of both walks, memcheck, then a 3-round A/B over gw.json. Carry .gpu/gw.
set -u
cd "$(dirname "$0")"
source ./device_lib.sh
out=${OUT:-/tmp/gw}; r=/tmp/gwr/r; mkdir -p $out
save() { (cd /tmp/gwr && tar czf $out/gw.tar.gz r); }
device_start $r
mkdir -p /tmp/fa4a && cp ../../.fa4a/* /tmp/fa4a/ && echo "fa4a: $(ls /tmp/fa4a | wc -l) files"
device_unpack .
device_tests t1 ./gta_gw 'BwdGpu.WarpSpecializedFastDkdvManyKvTiles' 100
device_tests t3 ./gta_gw 'BwdGpu.Gqa8To1AndBshd:BwdGpu.ShortSequencesWithAnOddGqaRatio:BwdGpu.FastModeSplitsGqaGroupsOverCtas' 100
FLEXJIT_RANDOM_PROBLEMS=8 device_tests t2 ./gta_gw 'RandomProblemsGpu.PaddedBatchesForwardAndBackward' 100
device_sanitize memcheck ./gta_gw 'BwdGpu.Gqa8To1AndBshd' 100
wait
device_failures
save
OUT=$out bash ab2.sh gwab gw.json bwd_ms 130 3 "" main:./flexjit:: desc:./flexjit_gw:: 2>&1 | grep -v "^gwab "
echo "all $(( $(date +%s) - device_t0 )) s"
save
