#!/usr/bin/env bash
# Session (p) pr: racecheck on the final backward (dQ by turns at d64; same SASS as 7c0caa5/c299b08)
# for one fast and one ordered backward per head dim.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/pr}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
timeout 280 compute-sanitizer --tool racecheck --error-exitcode 1 ./gpu_test_attention --gtest_filter='BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim' > $r/san_racecheck.log 2>&1; echo "racecheck rc=$? $(( $(date +%s) - t0 )) s: $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED' $r/san_racecheck.log | tr '\n' ' ')"
grep -A1 'Race reported' $r/san_racecheck.log | grep -E 'and (Read|Write)' | sed 's/+0x[0-9a-f]*//; s/ \[[0-9]* hazards\]//; s/(.*)//' | sort | uniq -c | sort -rn | head
grep 'Race reported' $r/san_racecheck.log | sed 's/+0x[0-9a-f]*//; s/(.*)//' | sort | uniq -c | sort -rn | head -5
cd $out && tar czf r.tar.gz r && rm -rf r
