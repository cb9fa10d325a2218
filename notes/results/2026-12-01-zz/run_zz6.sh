#!/usr/bin/env bash
# (zz6) memcheck on the final build's score_scale kernels: the forward test of constant factors,
# and the backward one (fast and deterministic, d64 and d128) in parallel.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zz6}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/m1 timeout 200 compute-sanitizer --tool memcheck ./gpu_test_attention --gtest_filter=FwdGpu.ScoreModsWithConstantFactors > $out/memcheck_fwd.log 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/m2 timeout 200 compute-sanitizer --tool memcheck --kernel-name kns=bwd_dkdv ./gpu_test_attention --gtest_filter=BwdGpu.ScoreModsWithConstantFactors > $out/memcheck_bwd.log 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/m3 timeout 200 ./gpu_test_attention --gtest_filter='*ScoreModsWithConstantFactors' > $out/tests.log 2>&1 &
wait
for f in $out/*.log; do echo "$(basename $f): $(grep -E 'ERROR SUMMARY|^\[  (PASSED|FAILED)' $f | tr '\n' ' ')"; done
echo "$(( $(date +%s) - t0 )) s"
