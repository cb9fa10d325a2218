#!/usr/bin/env bash
# Session (q) q3: the forward's TMA-store epilogue and balanced ticket sections: GPU tests of the
# forward, then compute-sanitizer memcheck, racecheck and synccheck on one ws forward per head dim.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/q3}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
timeout 330 ./gpu_test_attention --gtest_filter='FwdGpu.*:Configs/NanGpu.*:NegativeScaleGpu.*' > $r/t.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t.txt | tr '\n' ' ')"
grep -B2 -A8 Failure $r/t.txt | head -40
grep -E '^\[ +FAILED ' $r/t.txt
for tool in memcheck synccheck racecheck; do
  timeout 80 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedOnePerHeadDim' > $r/san_$tool.txt 2>&1; echo "$tool rc=$? $(( $(date +%s) - t0 )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$tool.txt | tr '\n' ' ')"
done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
