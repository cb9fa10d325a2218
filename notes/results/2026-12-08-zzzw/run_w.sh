#!/usr/bin/env bash
# (zzzv, for the next session) Two template-only experiments on main's C++ (one binary, template
# dirs): uniform-noop (tuni: uniform_noop.patch) and select-probs (tsel: select_probs.patch), and
# both (tboth). First the GPU tests of tboth (gta_uni reads FLEXJIT_TEMPLATE_DIR), then an A/B of
# the fast backward, main's templates (tmain) against each. Carry .gpu/zzzw; about 550 s.
set -u
cd "$(dirname "$0")"
source ./device_lib.sh
out=${OUT:-/tmp/zzzw}; r=/tmp/zzzwr/t; mkdir -p $out $r
device_start $r
device_unpack .
export FLEXJIT_TEMPLATE_DIR=$PWD/tboth/templates
device_tests suite ./gta_uni 'BwdGpu.SuiteMods:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.Gqa8To1AndBshd:BwdGpu.NanInDoReachesOnlyTheGradientsThatReadIt:BwdGpu.FullyMaskedRowsGiveZeroGradients' 180
device_tests dims ./gta_uni 'BwdGpu.HeadDimsAndHalfPrecision:BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.HalfSlabSlicesAtHeadDimsAbove128' 180
device_tests ws ./gta_uni 'BwdGpu.WarpSpecializedFastDkdv:BwdGpu.WarpSpecializedFastDkdvManyKvTiles:BwdGpu.FastModeConvertsDqAsEachKvHeadLands:BwdGpu.FastModeOverLengthsTheTilesDivide:BwdGpu.ScoreDiagonalValues' 180
FLEXJIT_RANDOM_PROBLEMS=6 device_tests random ./gta_uni 'RandomProblemsGpu.*' 180
device_sanitize memcheck ./gta_uni 'BwdGpu.FastModeOnePerHeadDim' 180
wait
unset FLEXJIT_TEMPLATE_DIR
device_failures
(cd /tmp/zzzwr && tar czf $out/w_tests.tar.gz t)
OUT=$out bash ab2.sh wab ab.json bwd_ms ${BUDGET:-200} ${ROUNDS:-4} "" main:./flexjit:tmain/templates \
  uni:./flexjit:tuni/templates sel:./flexjit:tsel/templates both:./flexjit:tboth/templates 2>&1 | grep -v "^wab "
echo "all $(( $(date +%s) - device_t0 )) s"
