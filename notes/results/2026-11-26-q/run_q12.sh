#!/usr/bin/env bash
# Session (q) q12: the final build (952a7ed) on every forward GPU test, and compute-sanitizer
# racecheck on one warp-specialised forward per head dim.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/q12}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
timeout 330 ./gpu_test_attention --gtest_filter='FwdGpu.*:Configs/NanGpu.Forward*:Configs/NanGpu.Masked*:NegativeScaleGpu.*' > $r/t.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t.txt | tr '\n' ' ')"
grep -B2 -A8 Failure $r/t.txt | head -30
timeout 100 compute-sanitizer --tool racecheck --error-exitcode 1 ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedOnePerHeadDim' > $r/san_racecheck.txt 2>&1; echo "racecheck rc=$? $(( $(date +%s) - t0 )) s: $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED' $r/san_racecheck.txt | tr '\n' ' ')"
grep -E "access at" $r/san_racecheck.txt | sed -E 's/.*(Read|Write) access at .* in ([a-zA-Z_.]+:[0-9]+).*/\1 \2/' | sort | uniq -c
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
