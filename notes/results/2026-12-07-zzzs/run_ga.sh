#!/usr/bin/env bash
# (zzzs) branch gqa-walk with the query tiles ascending (templates in tasc/, FLEXJIT_TEMPLATE_DIR),
# heads inner: ManyKvTiles on that walk, then a 3-round A/B against main. Carry .gpu/ga.
set -u
cd "$(dirname "$0")"
source ./device_lib.sh
out=${OUT:-/tmp/ga}; r=/tmp/gar/r; mkdir -p $out
save() { (cd /tmp/gar && tar czf $out/ga.tar.gz r); }
device_start $r
device_unpack .
export FLEXJIT_TEMPLATE_DIR=$PWD/tasc
device_tests a1 ./gta_gw 'BwdGpu.WarpSpecializedFastDkdvManyKvTiles' 90
device_tests a2 ./gta_gw 'BwdGpu.Gqa8To1AndBshd:BwdGpu.ShortSequencesWithAnOddGqaRatio' 90
unset FLEXJIT_TEMPLATE_DIR
wait
device_failures
save
OUT=$out bash ab2.sh gaab ga.json bwd_ms 100 3 "" main:./flexjit:: asc:./flexjit_gw:$PWD/tasc 2>&1 | grep -v "^gaab "
echo "all $(( $(date +%s) - device_t0 )) s"
save
