#!/usr/bin/env bash
# Session (zm), fourth call: the GPU tests and compute-sanitizer for the chains rule
# (codegen::ordered_dq_chains: one chain where the ordered sums ascend; two only where they
# descend). New and changed tests: OrderedModeChainsAtHeadDim256 (one chain ascending, two
# descending: no mask, a mask without tables), OrderedModeTablesAloneTakeTwoChains (the 2-chain
# walk through tables alone), OrderedModeLongDocuments (one chain now). Stage in .gpu/<s>/:
# gpu_test_attention, this script.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zm4}; r=/tmp/zm4r/r; mkdir -p $r $out
save() { (cd /tmp/zm4r && tar czf $out/zm4.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
run_tests() {  # tag filter
  FLEXJIT_CACHE_DIR=/tmp/fc_$1 timeout 240 ./gpu_test_attention --gtest_filter="$2" > $r/tests_$1.txt 2>&1
}
run_tests a 'BwdGpu.OrderedModeChainsAtHeadDim256:BwdGpu.OrderedModeTablesAloneTakeTwoChains:BwdGpu.OrderedModeLongDocuments:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits' &
run_tests b 'BwdGpu.OrderedModeAscendingPairsBesideADescendingTail:BwdGpu.OrderedModeMoreKvTilesThanResidentCtas:BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.DeterministicModeTakesTheFasterWayPerCall:BwdGpu.FastAndDeterministicModes' &
wait
echo "tests $(( $(date +%s) - t0 )) s"; save
F=BwdGpu.OrderedModeChainsAtHeadDim256
for tool in memcheck synccheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_$tool timeout 200 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter=$F > $r/san_$tool.txt 2>&1 &
done
FLEXJIT_CACHE_DIR=/tmp/fc_race timeout 200 compute-sanitizer --tool racecheck --kernel-name kns=bwd_dkdv --print-limit 2000 ./gpu_test_attention --gtest_filter=$F > $r/san_racecheck.txt 2>&1 &
wait
for f in $r/tests_*.txt $r/san_*.txt; do echo "$(basename $f): $(grep -E '^\[  FAILED|^\[  PASSED|ERROR SUMMARY|RACECHECK SUMMARY' $f | tr '\n' ' ') ok=$(grep -c '^\[       OK' $f)"; done
grep -A1 'Error: Race' $r/san_racecheck.txt | sed -E 's/\+0x[0-9a-f]+//g; s/\[[0-9]+ hazards\]//; s/\(.*\) in / in /; s/<[^>]*>//g' | grep -v '^--' | paste - - | sort | uniq -c | sort -rn | head -8
grep -h -B2 -A12 "Failure" $r/tests_*.txt $r/san_*.txt | head -60
echo "$(( $(date +%s) - t0 )) s"
save
