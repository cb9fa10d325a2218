#!/usr/bin/env bash
# For the next session, prepared in (zn), not run: the ordered-mode GPU tests and compute-sanitizer
# on the ranker build (branch zn-ranker). Two test groups side by side, then memcheck, synccheck
# and racecheck (kns=bwd_dkdv) side by side. Stage in .gpu/<s>/: gpu_test_attention (the branch's),
# this script. About 300 s + 330 s: two calls (ZO2_PART=tests, then ZO2_PART=sanitizers).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zo2}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
if [ "${ZO2_PART:-tests}" = tests ]; then
  g1='BwdGpu.FastAndDeterministicModes:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.OrderedModeChainsAtHeadDim256:BwdGpu.OrderedModeTablesAloneTakeTwoChains:BwdGpu.OrderedModeWritesDqOfQueryTilesNoKeyReaches'
  g2='BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.OrderedModeLongDocuments:BwdGpu.OrderedModeAscendingPairsBesideADescendingTail:BwdGpu.OrderedModeMoreKvTilesThanResidentCtas:BwdGpu.OrderedModeNamesEachTileAfterItLands:BwdGpu.DeterministicModeTakesTheFasterWayPerCall:BwdGpu.DeterministicModeMeasuresTheWayWhenTuning:SeqLensGpu.DefaultConfigsBshdSqBelowSkvAndDeterminism'
  FLEXJIT_CACHE_DIR=/tmp/fc1 timeout 570 ./gpu_test_attention --gtest_filter=$g1 > $out/g1.log 2>&1 & p1=$!
  FLEXJIT_CACHE_DIR=/tmp/fc2 timeout 570 ./gpu_test_attention --gtest_filter=$g2 > $out/g2.log 2>&1 & p2=$!
  wait $p1; echo "g1 rc=$? $(( $(date +%s) - t0 )) s"; wait $p2; echo "g2 rc=$? $(( $(date +%s) - t0 )) s"
  grep -hE "^\[ +(OK|FAILED) +\]|PASSED|FAILED" $out/g1.log $out/g2.log | tail -30
else
  F='BwdGpu.OrderedModeChainsAtHeadDim256:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.OrderedModeAscendingPairsBesideADescendingTail'
  for tool in memcheck synccheck; do
    FLEXJIT_CACHE_DIR=/tmp/fc_$tool timeout 420 compute-sanitizer --tool $tool --kernel-name kns=bwd_dkdv --error-exitcode 1 ./gpu_test_attention --gtest_filter=$F > $out/san_$tool.txt 2>&1 &
  done
  FLEXJIT_CACHE_DIR=/tmp/fc_race timeout 420 compute-sanitizer --tool racecheck --kernel-name kns=bwd_dkdv --print-limit 3000 ./gpu_test_attention --gtest_filter=$F > $out/san_racecheck.txt 2>&1 &
  wait
  for f in $out/san_*.txt; do echo "$(basename $f): $(grep -E '^\[  FAILED|^\[  PASSED|ERROR SUMMARY|RACECHECK SUMMARY' $f | tr '\n' ' ') ok=$(grep -c '^\[       OK' $f)"; done
  grep -A1 'Error: Race' $out/san_racecheck.txt | sed -E 's/\+0x[0-9a-f]+//g; s/\[[0-9]+ hazards\]//; s/\(.*\) in / in /; s/<[^>]*>//g' | grep -v '^--' | paste - - | sort | uniq -c | sort -rn | head -8
fi
echo "$(( $(date +%s) - t0 )) s"
