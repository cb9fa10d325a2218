#!/usr/bin/env bash
# (zzzr) call: the GQA-documents first stores (branch gqa-first, rule version): tests and sanitizers.
set -u
cd "$(dirname "$0")"
source ./device_lib.sh
out=${OUT:-/tmp/z5}; r=/tmp/z5r/r; mkdir -p $out
device_start $r
device_unpack .
device_tests m1 ./gta 'BwdGpu.WarpSpecializedFastDkdvManyKvTiles:BwdGpu.Gqa*' 200
device_tests m2 ./gta 'RandomProblemsGpu.*:BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches:BwdGpu.FullyMasked*' 200
device_tests m3 ./gta 'BwdGpu.SuiteMods:BwdGpu.FastModeOverLengthsTheTilesDivide' 200
device_sanitize memcheck ./gta 'BwdGpu.WarpSpecializedFastDkdvManyKvTiles' 220
device_sanitize synccheck ./gta 'BwdGpu.WarpSpecializedFastDkdvManyKvTiles' 220
wait
device_failures
grep -h "^\[ *RUN\|^\[       OK" $r/tests_m*.txt | grep -c OK
echo "all $(( $(date +%s) - device_t0 )) s"
(cd /tmp/z5r && tar czf $out/z5.tar.gz r)
