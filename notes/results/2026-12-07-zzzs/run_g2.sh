#!/usr/bin/env bash
# Prepared in (zzzr), not run: GQA 2:1 with first stores under bounded masks (branch gqa2-first)
# against main 724c3b0: tests, memcheck, A/B (3 rounds). About 200 s. Carry .gpu/zzzs.
set -u
cd "$(dirname "$0")"
source ./device_lib.sh
out=${OUT:-/tmp/zs}; r=/tmp/zsr/r; mkdir -p $out
save() { (cd /tmp/zsr && tar czf $out/g2.tar.gz r); }
device_start $r
device_unpack .
device_tests g1 ./gta_g2 'BwdGpu.WarpSpecializedFastDkdvManyKvTiles:BwdGpu.Gqa*' 90
device_tests g2 ./gta_g2 'RandomProblemsGpu.*:BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches' 90
device_sanitize memcheck ./gta_g2 'BwdGpu.WarpSpecializedFastDkdvManyKvTiles' 95
wait
device_failures
save
OUT=$out bash ab2.sh g2ab g2.json bwd_ms 80 3 "" main:./flexjit:: g2:./flexjit_g2:: 2>&1 | grep -v "^g2ab "
echo "all $(( $(date +%s) - device_t0 )) s"
save
