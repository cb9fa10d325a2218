#!/usr/bin/env bash
# (zzzx, for the next session) The second call, on the same warm machine as run_next.sh (about
# 250-450 s): dv and fa4 against main in the deterministic mode (the ordered dK/dV kernel also takes
# the exchange at d128; late does not apply there), then, with ARM_TESTS=tdv or tlate, that arm's
# own GPU tests and racecheck (for the arm that won run_next.sh's A/B where it is not fa4, whose
# tests run_next.sh ran).
set -u
cd "$(dirname "$0")"
source ./device_lib.sh
out=${OUT:-/tmp/zzzx}; r=/tmp/zzzxr/d; mkdir -p $out $r
device_start $r
device_unpack .
OUT=$out bash ab2.sh xdet ab_x_det.json bwd_ms ${BUDGET:-150} ${ROUNDS:-3} "--bwd-mode deterministic" \
  main:./flexjit:tmain/templates dv:./flexjit:tdv/templates fa4:./flexjit:tfa4/templates 2>&1 | grep -v "^xdet "
if [ -n "${ARM_TESTS:-}" ]; then
  export FLEXJIT_TEMPLATE_DIR=$PWD/$ARM_TESTS/templates
  device_tests suite ./gta 'BwdGpu.SuiteMods:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.Gqa8To1AndBshd' 200
  device_tests dims ./gta 'BwdGpu.HeadDimsAndHalfPrecision:BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim' 200
  device_tests ws ./gta 'BwdGpu.WarpSpecializedFastDkdv:BwdGpu.FastModeOverLengthsTheTilesDivide:BwdGpu.ScoreDiagonalValues' 200
  FLEXJIT_RANDOM_PROBLEMS=6 device_tests random ./gta 'RandomProblemsGpu.*' 200
  device_sanitize memcheck ./gta 'BwdGpu.FastModeOnePerHeadDim' 240
  device_sanitize synccheck ./gta 'BwdGpu.FastModeOnePerHeadDim' 240
  device_sanitize racecheck ./gta 'BwdGpu.FastModeOnePerHeadDim' 240
  wait
  device_failures
fi
(cd /tmp/zzzxr && tar czf $out/x_det.tar.gz d)
echo "all $(( $(date +%s) - device_t0 )) s"
