#!/usr/bin/env bash
# (zzzt) upper bounds, timing only (wrong gradients on masked tiles): main against U2 (no masked
# tiles: partial tiles walked as full, no verdicts, no masked pass) and U1 (no verdicts: every
# score of a partial tile kept, the masked pass kept). Carry .gpu/zzzt.
set -u
cd "$(dirname "$0")"
source ./device_lib.sh
out=${OUT:-/tmp/u}; r=/tmp/ur/r; mkdir -p $out $r
device_start $r
device_unpack .
OUT=$out bash ab2.sh uab u.json bwd_ms ${BUDGET:-200} 3 "" main:./flexjit:: nomask:./flexjit:$PWD/tnomask allkeep:./flexjit:$PWD/tallkeep 2>&1 | grep -v "^uab "
echo "all $(( $(date +%s) - device_t0 )) s"
