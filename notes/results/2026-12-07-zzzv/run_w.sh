#!/usr/bin/env bash
# (zzzv, for the next session) uniform-noop (branch, notes/results/2026-12-07-zzzv/uniform_noop.patch):
# its GPU tests (gta_uni embeds the branch's templates), then an A/B of the fast backward, one
# binary (main's C++), main's templates (tmain) against the branch's (tuni). Carry .gpu/zzzw.
set -u
cd "$(dirname "$0")"
source ./device_lib.sh
out=${OUT:-/tmp/zzzw}; r=/tmp/zzzwr/t; mkdir -p $out $r
device_start $r
device_unpack .
device_tests suite ./gta_uni 'BwdGpu.SuiteMods:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.Gqa8To1AndBshd:BwdGpu.NanInDoReachesOnlyTheGradientsThatReadIt' 200
device_tests dims ./gta_uni 'BwdGpu.HeadDimsAndHalfPrecision:BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.HalfSlabSlicesAtHeadDimsAbove128' 200
device_tests ws ./gta_uni 'BwdGpu.WarpSpecializedFastDkdv:BwdGpu.WarpSpecializedFastDkdvManyKvTiles:BwdGpu.FastModeConvertsDqAsEachKvHeadLands:BwdGpu.FastModeOverLengthsTheTilesDivide' 200
FLEXJIT_RANDOM_PROBLEMS=6 device_tests random ./gta_uni 'RandomProblemsGpu.*' 200
device_sanitize memcheck ./gta_uni 'BwdGpu.FastModeOnePerHeadDim' 200
wait
device_failures
(cd /tmp/zzzwr && tar czf $out/w_tests.tar.gz t)
OUT=$out bash ab2.sh wab ab.json bwd_ms ${BUDGET:-200} ${ROUNDS:-5} "" main:./flexjit:tmain/templates uni:./flexjit:tuni/templates 2>&1 | grep -v "^wab "
echo "all $(( $(date +%s) - device_t0 )) s"
