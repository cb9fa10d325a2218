#!/usr/bin/env bash
# Session (u) u10: which settings make the ordered backward's dK/dV come out inf.
set -u
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fcu10 FLEXJIT_DETERMINISTIC_DQ=ordered DIAG_RUNS=12
d() { echo "== $*"; env "$@" timeout 60 ./gpu_test_diag --gtest_filter=BwdGpuDiag.* 2>&1 | grep -E '^run|BAD'; }
d X=1
d DIAG_BF16=1
d DIAG_FAST=1
d DIAG_BHSD=1
d DIAG_NOSCORE=1
d DIAG_GQA1=1
d FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_base
