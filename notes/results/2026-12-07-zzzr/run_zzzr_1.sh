#!/usr/bin/env bash
# (zzzr) call 2: ahead-d64's tests, memcheck, then a 3-arm A/B (main / lse-only / d64) of the fast backward.
set -u
cd "$(dirname "$0")"
source ./device_lib.sh
out=${OUT:-/tmp/z1}; r=/tmp/z1r/r; mkdir -p $out
save() { (cd /tmp/z1r && tar czf $out/z1.tar.gz r); }
device_start $r
device_unpack .
device_tests t1 ./gta_d64 'BwdGpu.FastModeOverLengthsTheTilesDivide:NanGpu.*' 120
device_tests t2 ./gta_d64 'BwdGpu.SuiteMods:BwdGpu.FullyMaskedRowsGiveZeroGradients' 120
device_sanitize memcheck ./gta_d64 'BwdGpu.FastModeOverLengthsTheTilesDivide' 120
wait
device_failures
save
OUT=$r bash ab2.sh zab suite.json bwd_ms 200 3 "" main:./flexjit:: lse:./flexjit_lse:: d64:./flexjit_d64:: 2>&1 | grep -v "^zab "
echo "all $(( $(date +%s) - device_t0 )) s"
save
