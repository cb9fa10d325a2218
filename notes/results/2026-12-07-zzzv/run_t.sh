#!/usr/bin/env bash
# (zzzv) dq-v4: the dQ accumulator's chunks XOR row % 4 (staging from one live address). GPU tests
# of every dK/dV form that stages dQ (d64..d256, fast and ordered, slices, half-slab slices, GQA
# splits, lengths, random problems) and memcheck of the per-head-dim fast test. Carry .gpu/zzzv.
set -u
cd "$(dirname "$0")"
source ./device_lib.sh
out=${OUT:-/tmp/zzzv}; r=/tmp/zzzvr/t; mkdir -p $out $r
device_start $r
device_unpack .
device_tests suite ./gta_x 'BwdGpu.SuiteMods:BwdGpu.FastModeOverLengthsTheTilesDivide:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.Gqa8To1AndBshd:BwdGpu.NanInDoReachesOnlyTheGradientsThatReadIt' 240
device_tests dims ./gta_x 'BwdGpu.HeadDimsAndHalfPrecision:BwdGpu.TilesWithAWholeSlabPastTheHeadDim:BwdGpu.HalfSlabSlicesAtHeadDimsAbove128:BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim' 240
device_tests ws ./gta_x 'BwdGpu.WarpSpecializedFastDkdv:BwdGpu.WarpSpecializedFastDkdvManyKvTiles:BwdGpu.FastModeSplitsGqaGroupsOverCtas:BwdGpu.FastModeConvertsDqAsEachKvHeadLands:BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches:BwdGpu.OrderedModeWritesDqOfQueryTilesNoKeyReaches' 240
device_tests ord ./gta_x 'BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.OrderedModeChainsAtHeadDim256:BwdGpu.OrderedModeLongDocuments:BwdGpu.OrderedModeSplitsGqaGroupsOverCtas:BwdGpu.FastAndDeterministicModes' 240
device_tests lens ./gta_x 'SeqLensGpu.WarpSpecializedBackward:SeqLensGpu.WarpSpecializedOrderedBackward:SeqLensGpu.WgmmaHeadDim64' 240
FLEXJIT_RANDOM_PROBLEMS=6 device_tests random ./gta_x 'RandomProblemsGpu.*' 240
FLEXJIT_RANDOM_PROBLEMS=2 device_tests gated ./gta_g 'BwdGpu.FastModeConvertsDqAsEachKvHeadLands:BwdGpu.Gqa8To1AndBshd:BwdGpu.FastModeSplitsGqaGroupsOverCtas:BwdGpu.LaterWorkOnTheCallersStreamSeesEveryGradient:BwdGpu.FastModeOnePerHeadDim:RandomProblemsGpu.*' 240
device_sanitize memcheck ./gta_x 'BwdGpu.FastModeOnePerHeadDim' 240
wait
device_failures
(cd /tmp/zzzvr && tar czf $out/v_tests.tar.gz t)
echo "tests $(( $(date +%s) - device_t0 )) s"
