#!/usr/bin/env bash
# (zzzx, for the next session) Call 1 of three on one warm machine, about 520 s: the fa4 arm's GPU
# tests and memcheck, and the five-arm A/B of the fast backward. Prepare with prep_next.sh, then
# run `bash .gpu/zzzx/run_next.sh` carrying `.gpu/zzzx`; then, at once, run_next_det.sh
# (racecheck / synccheck of fa4, the walk diagnostic, the deterministic A/B) and, for an arm other
# than fa4 that wins, run_next_arm.sh.
# 1. GPU tests of the fa4 arm (templates tfa4: the dv arm's change and all of dK after dQ, so a
#    superset of the dv arm's code paths) and memcheck of one fast backward per head dim (d128 is
#    the one with the exchange): scripts/device_bwd_tests.sh, the groups (zzzw)'s landing ran.
# 2. ab2.sh over ab_x.json: main / dv / fa4 / late / row, four rotating rounds (rounds start until
#    220 s; the first compiles, about 125 s; after it a round of the five arms takes about 40 s).
set -u
cd "$(dirname "$0")"
source ./device_lib.sh
source ./device_bwd_tests.sh
out=${OUT:-/tmp/zzzx}; r=/tmp/zzzxr/t; mkdir -p $out $r
device_start $r
device_unpack .
device_bwd_tests $PWD/tfa4/templates 240
wait
device_failures
(cd /tmp/zzzxr && tar czf $out/x_tests.tar.gz t)
echo "tests $(( $(date +%s) - device_t0 )) s"
OUT=$out bash ab2.sh xab ab_x.json bwd_ms ${BUDGET:-220} ${ROUNDS:-4} "" main:./flexjit:tmain/templates \
  dv:./flexjit:tdv/templates fa4:./flexjit:tfa4/templates late:./flexjit:tlate/templates \
  row:./flexjit:trow/templates 2>&1 | grep -v "^xab "
echo "all $(( $(date +%s) - device_t0 )) s"
