#!/usr/bin/env bash
# (zzzr) call: d64-wider (the d64 stats read-ahead over any lengths and with GQA): tests, memcheck, A/B against main.
set -u
cd "$(dirname "$0")"
source ./device_lib.sh
out=${OUT:-/tmp/z7}; r=/tmp/z7r/r; mkdir -p $out
save() { (cd /tmp/z7r && tar czf $out/z7.tar.gz r); }
device_start $r
device_unpack .
device_tests w1 ./gta_w 'BwdGpu.SuiteMods:BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches' 80
device_tests w2 ./gta_w 'BwdGpu.WarpSpecializedFastDkdvManyKvTiles:BwdGpu.Gqa*' 80
device_tests w3 ./gta_w 'RandomProblemsGpu.*' 80
device_sanitize memcheck ./gta_w 'BwdGpu.WarpSpecializedFastDkdvManyKvTiles' 85
wait
device_failures
save
OUT=$out bash ab2.sh wab w.json bwd_ms 60 3 "" main:./flexjit:: w:./flexjit_w:: 2>&1 | grep -v "^wab "
echo "all $(( $(date +%s) - device_t0 )) s"
save
