#!/usr/bin/env bash
# Session f: compute-sanitizer on one fast backward per head dim (forward on the 'g' kernel).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/g3}; mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc-g3
./gpu_test_attention --gtest_filter='BwdGpu.FastModeOnePerHeadDim' > "$out/plain.log" 2>&1; echo "plain rc=$?" | tee "$out/summary.txt"
for tool in memcheck racecheck synccheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter='BwdGpu.FastModeOnePerHeadDim' > "$out/$tool.log" 2>&1
  echo "== $tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED|Race reported' "$out/$tool.log" | sort | uniq -c | tr '\n' ' ')" | tee -a "$out/summary.txt"
done
