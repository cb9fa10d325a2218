#!/usr/bin/env bash
# Session (s) s1: the GPU tests and compute-sanitizer on the new templates (embedded): the
# backward's dK in two halves (DK_SPLIT) and the late dQ arrival (DQ_LATE_ARRIVAL), the forward's
# key-tile starts read a tile ahead (KV_START_AHEAD).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/s1}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_new
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
timeout 240 ./gpu_test_attention --gtest_filter='BwdGpu.*:Configs/NanGpu.*' > $r/t_bwd.txt 2>&1; echo "bwd tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t_bwd.txt | tr '\n' ' ')"
grep -E '^\[  FAILED' $r/t_bwd.txt | head; grep -B2 -A8 Failure $r/t_bwd.txt | head -30
timeout 150 ./gpu_test_attention --gtest_filter='FwdGpu.*' > $r/t_fwd.txt 2>&1; echo "fwd tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t_fwd.txt | tr '\n' ' ')"
grep -E '^\[  FAILED' $r/t_fwd.txt | head; grep -B2 -A8 Failure $r/t_fwd.txt | head -30
for tool in memcheck racecheck synccheck; do
  for t in BwdGpu.FastModeOnePerHeadDim BwdGpu.OrderedModeOnePerHeadDim FwdGpu.WarpSpecializedOnePerHeadDim; do
    [ $tool = memcheck ] && [ $t = BwdGpu.OrderedModeOnePerHeadDim ] && continue
    timeout 90 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter=$t > $r/san_${tool}_$t.txt 2>&1; echo "$tool $t rc=$? $(( $(date +%s) - t0 )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_${tool}_$t.txt | tr '\n' ' ')"
  done
done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
