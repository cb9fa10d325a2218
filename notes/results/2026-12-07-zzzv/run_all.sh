#!/usr/bin/env bash
# (zzzv) one call: run_t.sh's GPU tests (limits 200 s), then run_ab.sh's A/B (rounds started within
# BUDGET s). Carry .gpu/zzzv.
set -u
cd "$(dirname "$0")"
t0=$(date +%s)
sed 's/ 240$/ 200/' run_t.sh > run_t200.sh
bash run_t200.sh
echo "tests done $(( $(date +%s) - t0 )) s"
BUDGET=${BUDGET:-190} ROUNDS=${ROUNDS:-5} bash run_ab.sh
echo "all $(( $(date +%s) - t0 )) s"
