#!/bin/bash
# zzg5: the one test zzg4's test step ran out of time on (SeqLensGpu.WarpSpecializedBackward, with
# its new split-group checks), on the same build.
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzg5}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
FLEXJIT_CACHE_DIR=/tmp/fct timeout 170 ./gpu_test_attention --gtest_filter='SeqLensGpu.WarpSpecializedBackward' > $out/tests5.txt 2>&1; echo "rc=$?" >> $out/tests5.txt
grep -E '^\[  (PASSED|FAILED) |^\[ +OK|FAILED  \]|rc=|Failure' $out/tests5.txt | tail -20
