#!/usr/bin/env bash
# (zzzx, for the next session) Call 2, on the same warm machine right after run_next.sh (about
# 420 s): racecheck and synccheck of the fa4 arm on one fast backward per head dim (reusing the
# kernels run_next.sh's `dims` group compiled), then dv and fa4 against main in the deterministic
# mode (the ordered dK/dV kernel also takes the exchange at d128; late does not apply there).
set -u
cd "$(dirname "$0")"
source ./device_lib.sh
source ./bwd_tests.sh
out=${OUT:-/tmp/zzzx}; r=/tmp/zzzxr/d; mkdir -p $out $r
device_start $r
device_unpack .
bwd_arm_race_sync $PWD/tfa4/templates
wait
(cd /tmp/zzzxr && tar czf $out/x_det.tar.gz d)
echo "sanitizers $(( $(date +%s) - device_t0 )) s"
OUT=$out bash ab2.sh xdet ab_x_det.json bwd_ms ${BUDGET:-120} ${ROUNDS:-3} "--bwd-mode deterministic" \
  main:./flexjit:tmain/templates dv:./flexjit:tdv/templates fa4:./flexjit:tfa4/templates 2>&1 | grep -v "^xdet "
(cd /tmp/zzzxr && tar czf $out/x_det.tar.gz d)
echo "all $(( $(date +%s) - device_t0 )) s"
