#!/usr/bin/env bash
# Session (x) x8: the backward GPU tests after the test helper (expect_fast_backward_close).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/x8}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_x8 timeout 200 ./gpu_test_attention --gtest_filter='BwdGpu.WarpSpecializedFastDkdvManyKvTiles:BwdGpu.WarpSpecializedFastDkdv' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[ +(OK|FAILED|PASSED) ' $r/tests.txt | sed -E 's/\[ +(OK|FAILED) +\] //' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; grep -E 'Failure|error:' -A6 $r/tests.txt | head -30
cd $out && tar czf x8.tar.gz r && rm -rf r
