#!/usr/bin/env bash
# Session (p) p4: every backward GPU test (and the backward NaN tests) on the final d64 kernel (K
# and V in registers, dQ's columns split), the d256 forward mods, then the sanitizers on one fast
# and one ordered backward per head dim.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/p4}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
timeout 420 ./gpu_test_attention --gtest_filter='BwdGpu.*:Configs/NanGpu.Backward*:FwdGpu.WarpSpecializedModsHeadDim256' > $r/t.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t.txt | tr '\n' ' ')"
grep -B2 -A8 Failure $r/t.txt | head -30
grep -E '^\[ +(OK|FAILED) ' $r/t.txt
for tool in synccheck memcheck racecheck; do
  left=$(( 570 - ($(date +%s) - t0) )); [ $left -lt 20 ] && { echo "$tool skipped: time"; continue; }
  timeout $left compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter='BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim' > $r/san_$tool.log 2>&1; echo "$tool rc=$? $(( $(date +%s) - t0 )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $r/san_$tool.log | tr '\n' ' ')"
done
grep -A3 'Race reported' $r/san_racecheck.log | grep -o 'at [a-z_:]*[a-z_]*' | sort | uniq -c | sort -rn | head -8
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
