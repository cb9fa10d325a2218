#!/usr/bin/env bash
# Session (m) m16: the review's refactor (tile names, descriptor origins, the convert kernel's
# column offsets): the ordered and fast backward tests and memcheck on the final code.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/m16}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
timeout 300 ./gpu_test_attention --gtest_filter='BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.DeterministicModeTakesTheFasterWayPerCall:BwdGpu.FastModeOnePerHeadDim:BwdGpu.SuiteMods:BwdGpu.HeadDimsAndHalfPrecision:BwdGpu.CapturedInAGraphAndReplayedGivesTheSameGradients' > $r/t.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t.txt | tr '\n' ' ')"
grep -A6 Failure $r/t.txt | head -20
grep -E '^\[ +(OK|FAILED) ' $r/t.txt
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 1 ./gpu_test_attention --gtest_filter='BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim' > $r/san.log 2>&1; echo "memcheck rc=$?: $(grep 'ERROR SUMMARY' $r/san.log | tr '\n' ' ')"
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
