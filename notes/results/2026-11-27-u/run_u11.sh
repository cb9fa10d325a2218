#!/usr/bin/env bash
# Session (u) u11: the ordered backward's inf dK/dV: head dims, GQA ratios, masks, divisible lengths.
set -u
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fcu11 FLEXJIT_DETERMINISTIC_DQ=ordered DIAG_RUNS=10
d() { echo "== $*"; env "$@" timeout 50 ./gpu_test_diag --gtest_filter=BwdGpuDiag.* 2>&1 | grep -E '^run|BAD'; }
d DIAG_D=128
d DIAG_GQA=2
d DIAG_CAUSAL=1
d DIAG_SQ=768 DIAG_SKV=1280
d DIAG_SQ=768
d DIAG_SKV=1280
d DIAG_D=128 DIAG_BF16=1
d DIAG_GQA=3 DIAG_BF16=1 DIAG_SQ=777 DIAG_RUNS=20
