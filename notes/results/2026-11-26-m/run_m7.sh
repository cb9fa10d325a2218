#!/usr/bin/env bash
# Session (m) m7: the backward's wgmma descriptors (built once per GEMM, one add per wgmma) as
# committed: every backward GPU test, the new many-tiles forward test, and compute-sanitizer on one
# backward per head dim in both modes.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/m7}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
timeout 420 ./gpu_test_attention --gtest_filter='BwdGpu.*:FwdGpu.WarpSpecializedManyTilesPerCta:BufferGradGpu.*' > $r/t.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t.txt | tr '\n' ' ')"
grep -A6 Failure $r/t.txt | head -30
grep -E '^\[ +(OK|FAILED) ' $r/t.txt | sed 's/^/  /'
for tool in memcheck synccheck racecheck; do timeout 70 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter='BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim' > $r/san_$tool.log 2>&1; echo "$tool rc=$?: $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $r/san_$tool.log | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; done
grep -A1 "Error: Race" $r/san_racecheck.log | grep -v "^--" | sed "s/+0x[0-9a-f]*//" | sort | uniq -c | head
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
