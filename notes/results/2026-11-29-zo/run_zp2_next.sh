#!/usr/bin/env bash
# For the next session, prepared in (zo), not run. One call, about 400 s: the new stress test
# (600 launches per head dim) on main as built (lane 0 waits) and with the old templates (does it
# catch the hazard there?), and the ordered GPU tests on the variant zp1 picks (ZP2_TPL: a tpl_*
# directory, empty for main as built; ZP2_BIN: gpu_test_attention or gpu_test_attention_ranker).
# Also ChainsAtHeadDim256 on the unfixed ranker (tpl_f7e9557): were its 375 TF/s right?
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zp2}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
T=${ZP2_TPL:-}; B=${ZP2_BIN:-gpu_test_attention}
stress=BwdGpu.OrderedModeManyLaunchesOfProblemsWithLongWalks
FLEXJIT_CACHE_DIR=/tmp/fs1 timeout 150 ./gpu_test_attention --gtest_filter=$stress > $out/stress_lane0.log 2>&1 &
FLEXJIT_TEMPLATE_DIR=$PWD/tpl_79d2628 FLEXJIT_CACHE_DIR=/tmp/fs2 timeout 150 ./gpu_test_attention --gtest_filter=$stress > $out/stress_old.log 2>&1 &
FLEXJIT_TEMPLATE_DIR=$PWD/tpl_f7e9557 FLEXJIT_CACHE_DIR=/tmp/fs3 timeout 150 ./gpu_test_attention_ranker --gtest_filter=BwdGpu.OrderedModeChainsAtHeadDim256 > $out/rk_old_chains256.log 2>&1 &
wait
echo "first part $(( $(date +%s) - t0 )) s"
g1='BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.FastAndDeterministicModes:BwdGpu.OrderedModeWritesDqOfQueryTilesNoKeyReaches'
g2='BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.OrderedModeChainsAtHeadDim256:BwdGpu.OrderedModeMoreKvTilesThanResidentCtas:BwdGpu.OrderedModeAscendingPairsBesideADescendingTail:BwdGpu.OrderedModeLongDocuments'
left=$(( 540 - ($(date +%s) - t0) ))
FLEXJIT_TEMPLATE_DIR=${T:+$PWD/$T} FLEXJIT_CACHE_DIR=/tmp/ft1 timeout $left ./$B --gtest_filter=$g1 > $out/g1.log 2>&1 &
FLEXJIT_TEMPLATE_DIR=${T:+$PWD/$T} FLEXJIT_CACHE_DIR=/tmp/ft2 timeout $left ./$B --gtest_filter=$g2 > $out/g2.log 2>&1 &
wait
for f in $out/*.log; do echo "$(basename $f): $(grep -cE '^\[       OK' $f) ok, $(grep -cE '^\[  FAILED  \] [A-Z]' $f) failed, last: $(grep -E '^\[ +(RUN|OK|FAILED) +\]' $f | tail -1)"; done
echo "$(( $(date +%s) - t0 )) s"
