#!/usr/bin/env bash
# Session (zg) zg7: what zg6's 200 s left unrun on the lean ordered kernels:
# BwdGpu.DeterministicModeSumsDqInOrder (bitwise repeats), and compute-sanitizer racecheck and
# synccheck on BwdGpu.OrderedModeOnePerHeadDim, side by side.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zg7}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 215 ./gpu_test_attention --gtest_filter='BwdGpu.DeterministicModeSumsDqInOrder' > $out/tests.txt 2>&1 &
for tool in racecheck synccheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_$tool timeout 215 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.OrderedModeOnePerHeadDim > $out/san_$tool.txt 2>&1 &
done
wait
echo "tests: $(grep -E '^\[ +(OK|FAILED) ' $out/tests.txt | tr '\n' ' ')"
for tool in racecheck synccheck; do echo "$tool: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $out/san_$tool.txt | tr '\n' ' ')"; done
echo "$(( $(date +%s) - t0 )) s"
