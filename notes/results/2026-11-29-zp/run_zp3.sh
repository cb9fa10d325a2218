#!/usr/bin/env bash
# (zp) call 3, about 480 s: the rest of the deterministic and fast backward GPU tests on branch
# zp-ranker256's build (three processes), beside compute-sanitizer on the dK/dV kernels
# (kns=bwd_dkdv): memcheck and synccheck on the d256 ordered chains and the fast per-head-dim test,
# racecheck on the d256 ordered chains (to its end or the limit; the hazards grouped by pair).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zp3}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
T=470
g2='BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.OrderedModeLongDocuments:BwdGpu.OrderedModeMoreKvTilesThanResidentCtas:BwdGpu.OrderedModeNamesEachTileAfterItLands'
g3='BwdGpu.OrderedModeAscendingPairsBesideADescendingTail:BwdGpu.DeterministicModeTakesTheFasterWayPerCall:BwdGpu.DeterministicModeMeasuresTheWayWhenTuning:SeqLensGpu.DefaultConfigsBshdSqBelowSkvAndDeterminism:BwdGpu.OrderedModeTablesAloneTakeTwoChains'
g4='BwdGpu.FastAndDeterministicModes:BwdGpu.WarpSpecializedFastDkdv:BwdGpu.HeadDimsAndHalfPrecision:BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits'
for g in g2 g3 g4; do FLEXJIT_CACHE_DIR=/tmp/fc_$g timeout $T ./gpu_test_new --gtest_filter=${!g} > $out/$g.log 2>&1 & done
S='BwdGpu.OrderedModeChainsAtHeadDim256:BwdGpu.FastModeOnePerHeadDim'
for tool in memcheck synccheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_$tool timeout $T compute-sanitizer --tool $tool --kernel-name kns=bwd_dkdv --error-exitcode 1 ./gpu_test_new --gtest_filter=$S > $out/san_$tool.log 2>&1 &
done
FLEXJIT_CACHE_DIR=/tmp/fc_race timeout $T compute-sanitizer --tool racecheck --kernel-name kns=bwd_dkdv --print-limit 3000 ./gpu_test_new --gtest_filter=BwdGpu.OrderedModeChainsAtHeadDim256 > $out/san_racecheck.log 2>&1 &
wait
for f in $out/*.log; do echo "$(basename $f): $(grep -cE '^\[       OK' $f) ok, $(grep -cE '^\[  FAILED  \] [A-Z]' $f) failed, last: $(grep -E '^\[ +(RUN|OK|FAILED) +\]' $f | tail -1)"; done
grep -hE '^\[ +(OK|FAILED) +\]' $out/*.log
grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' $out/san_*.log
grep -A1 'Error: Race' $out/san_racecheck.log | sed -E 's/\+0x[0-9a-f]+//g; s/\[[0-9]+ hazards\]//; s/\(.*\) in / in /; s/<[^>]*>//g' | grep -v '^--' | paste - - | sort | uniq -c | sort -rn | head -8
echo "$(( $(date +%s) - t0 )) s"
