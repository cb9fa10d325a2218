#!/usr/bin/env bash
# (zzzx, for the next session) Where two arms win apart (late and row change different templates, so
# their patches apply together; prep_next.sh builds that pair as tlr), the pair against main and
# against each arm alone, before both land: ab2.sh over ab_x.json, rotating rounds (about 250 s).
#   bash .gpu/zzzx/run_next_combo.sh                 (main / tlr / tlate / trow)
#   ARMS="tlr tfa4" bash .gpu/zzzx/run_next_combo.sh (any folders of .gpu/zzzx)
# The pair's own GPU tests: ARM=tlr bash .gpu/zzzx/run_next_arm.sh.
set -u
cd "$(dirname "$0")"
source ./device_lib.sh
out=${OUT:-/tmp/zzzx}; mkdir -p $out
device_start /tmp/zzzxr/c
device_unpack .
arms=()
for a in ${ARMS:-tlr tlate trow}; do arms+=("${a#t}:./flexjit:$a/templates"); done
OUT=$out bash ab2.sh xcombo ab_x.json bwd_ms ${BUDGET:-200} ${ROUNDS:-4} "" main:./flexjit:tmain/templates \
  "${arms[@]}" 2>&1 | grep -v "^xcombo "
echo "all $(( $(date +%s) - device_t0 )) s"
