#!/bin/bash
# zzq2: the statistics read as 8-byte pairs in the d64 fast dK/dV kernel (tv_new) against main's
# templates (tv_main), fast backward, d64 suite, rounds alternating; then the d64 GPU tests and a
# synccheck on the new templates.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzq2}; r=/tmp/zzq2r/r; mkdir -p $r $out
save() { (cd /tmp/zzq2r && tar czf $out/zzq2.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
export FLEXJIT_TEMPLATE_DIR=$PWD/tv_new
FLEXJIT_CACHE_DIR=/tmp/fct timeout 400 ./gpu_test_attention --gtest_filter='BwdGpu.WarpSpecializedFastDkdvManyKvTiles:BwdGpu.FastAndDeterministicModes:BwdGpu.FastModeOnePerHeadDim:BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches:SeqLensGpu.WgmmaHeadDim64:BwdGpu.FastModeSplitsGqaGroupsOverCtas' > $r/tests.txt 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -hE "OK \]|FAILED|PASSED|Failure" $r/tests.txt | head -30; save
FLEXJIT_CACHE_DIR=/tmp/fct timeout 120 compute-sanitizer --tool synccheck ./gpu_test_attention --gtest_filter='SeqLensGpu.WgmmaHeadDim64' > $r/synccheck.txt 2>&1
echo "synccheck rc=$? $(( $(date +%s) - t0 )) s"; grep -hE "ERROR SUMMARY|OK \]|FAILED" $r/synccheck.txt | head; save
