#!/usr/bin/env bash
# Session (n) s11 tests: the backward GPU tests (every BwdGpu test) and compute-sanitizer on the
# final code (d256: column slices, staged tensor reductions, pairs at GQA 8:1, ordered form).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/s11}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
timeout 420 ./gpu_test_attention --gtest_filter='BwdGpu.*' > $r/t.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t.txt | tr '\n' ' ')"
grep -B2 -A8 Failure $r/t.txt | head -40
grep -E '^\[ +(OK|FAILED) ' $r/t.txt
for tool in memcheck synccheck racecheck; do
  timeout 80 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter='BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim' > $r/san_$tool.log 2>&1; echo "$tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $r/san_$tool.log | tr '\n' ' ')"
done
grep "Error: Race reported between" $r/san_racecheck.log | sed 's/+0x[0-9a-f]*//' | sort | uniq -c
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
