#!/usr/bin/env bash
# Session (zd): the landing tests of branch zd-ordered-first-store (the ordered sums store each
# chain's first share; no zeroed dq_accum in the deterministic mode) and compute-sanitizer, then
# an ncu comparison of the d64 ordered and fast dK/dV kernels on sliding window d64.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zd1}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 300 ./gpu_test_attention --gtest_filter='BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.OrderedModeWritesDqOfQueryTilesNoKeyReaches:BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches:BwdGpu.TuningLaunchesLeaveNoDqBehind:BwdGpu.DeterministicModeTakesTheFasterWayPerCall:BwdGpu.FastModeOnePerHeadDim' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $r/tests.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
grep -E "^\[       OK|FAILED|Failure" $r/tests.txt | head -12
for tool in memcheck racecheck synccheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 100 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.OrderedModeOnePerHeadDim > $r/san_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$tool.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
done
grep -h "Race reported\|Hazard" $r/san_racecheck.txt | sort | uniq -c | head -5
# Where the d64 ordered dK/dV kernel loses to the fast one (zc's run_zd_next.sh, the branch's kernels).
export FLEXJIT_CACHE_DIR=/tmp/fc_zd
for mode in fast deterministic; do
  p=sliding_window_d64
  timeout 60 ./flexjit bench --suite suite64x.json --only $p --bwd-mode $mode > $r/bench_${mode}.log 2>&1
  timeout 150 ncu --kernel-name regex:'bwd_dkdv$' --launch-skip 1 --launch-count 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SourceCounters \
    --section LaunchStats --section MemoryWorkloadAnalysis --import-source no -o $r/rep_$mode ./flexjit bench --suite suite64x.json --only $p \
    --bwd-mode $mode > $r/ncu_$mode.log 2>&1
  echo "$mode rc=$? $(( $(date +%s) - t0 )) s"
  ncu -i $r/rep_$mode.ncu-rep --print-details all > $r/details_$mode.txt 2>&1
  ncu -i $r/rep_$mode.ncu-rep --page source --csv --print-source sass > $r/src_$mode.csv 2>&1
  grep -E 'Duration|Tensor|Issue Slots Busy|Executed Ipc A' $r/details_$mode.txt | head -8
done
rm -f $r/*.ncu-rep
cd $out && tar czf zd1.tar.gz r && rm -rf r
