#!/usr/bin/env bash
# (zn) float64 GPU tests of the ordered mode on the early-look writers, two groups side by side.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zn4}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
g1='BwdGpu.FastAndDeterministicModes:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.OrderedModeChainsAtHeadDim256:BwdGpu.OrderedModeTablesAloneTakeTwoChains:BwdGpu.OrderedModeWritesDqOfQueryTilesNoKeyReaches'
g2='BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.OrderedModeLongDocuments:BwdGpu.OrderedModeAscendingPairsBesideADescendingTail:BwdGpu.OrderedModeMoreKvTilesThanResidentCtas:BwdGpu.OrderedModeNamesEachTileAfterItLands:BwdGpu.DeterministicModeTakesTheFasterWayPerCall:BwdGpu.DeterministicModeMeasuresTheWayWhenTuning:SeqLensGpu.DefaultConfigsBshdSqBelowSkvAndDeterminism'
FLEXJIT_CACHE_DIR=/tmp/fc1 timeout 570 ./gpu_test_attention --gtest_filter=$g1 > $out/g1.log 2>&1 & p1=$!
FLEXJIT_CACHE_DIR=/tmp/fc2 timeout 570 ./gpu_test_attention --gtest_filter=$g2 > $out/g2.log 2>&1 & p2=$!
wait $p1; echo "g1 rc=$? $(( $(date +%s) - t0 )) s"; wait $p2; echo "g2 rc=$? $(( $(date +%s) - t0 )) s"
grep -hE "^\[ +(OK|FAILED) +\]|PASSED|FAILED" $out/g1.log $out/g2.log | tail -30
