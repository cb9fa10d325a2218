#!/bin/bash
# zzq4 (build c0c7552): what zzq3's 300 s cut: the random problems at their default count and the
# warp-specialised lengths tests.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzq4}; r=/tmp/zzq4r/r; mkdir -p $r $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fct timeout 500 ./gpu_test_attention --gtest_filter='SeqLensGpu.WarpSpecializedBackward:SeqLensGpu.DefaultConfigsBshdSqBelowSkvAndDeterminism:RandomProblemsGpu.*' > $r/tests.txt 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -hE "OK \]|FAILED|PASSED|Failure" $r/tests.txt | head -30
(cd /tmp/zzq4r && tar czf $out/zzq4.tar.gz r)
