#!/usr/bin/env bash
# (zzzs) the ascending heads-inner walk (tasc/) against main, A/B only (no tests: not for landing).
set -u
cd "$(dirname "$0")"
source ./device_lib.sh
out=${OUT:-/tmp/ga}; r=/tmp/gar/r; mkdir -p $out $r
device_start $r
device_unpack .
OUT=$out bash ab2.sh gaab ga.json bwd_ms 75 3 "" main:./flexjit:: asc:./flexjit_gw:$PWD/tasc 2>&1 | grep -v "^gaab "
echo "all $(( $(date +%s) - device_t0 )) s"
