#!/usr/bin/env bash
# (zzzx, for the next session) Call 3, only where run_next.sh's A/B has dv, late or row ahead
# (fa4's tests ran in run_next.sh): that arm's GPU tests and its three sanitizers (about 450 s).
#   ARM=tdv bash .gpu/zzzx/run_next_arm.sh   (or ARM=tlate, ARM=trow)
set -u
cd "$(dirname "$0")"
source ./device_lib.sh
source ./device_bwd_tests.sh
out=${OUT:-/tmp/zzzx}; r=/tmp/zzzxr/a; mkdir -p $out $r
device_start $r
device_unpack .
device_bwd_tests $PWD/${ARM:?ARM=tdv, tlate or trow}/templates 240
wait
device_bwd_race_sync $PWD/$ARM/templates 240
wait
device_failures
(cd /tmp/zzzxr && tar czf $out/x_arm.tar.gz a)
echo "all $(( $(date +%s) - device_t0 )) s"
