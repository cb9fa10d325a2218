#!/usr/bin/env bash
# Session (v) v3: the ordered backward's NaN dK / dV (guard off): tmpl_diag2 checks the dV and dK
# accumulators after each tile and prints the tile that first made them non-finite, with the
# stage's Q / dO non-finite words and the tile's largest probability.
set -u
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export DIAG_NO_GUARD=1 FLEXJIT_DETERMINISTIC_DQ=ordered
echo "== diag2"; FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_diag2 FLEXJIT_CACHE_DIR=/tmp/fc_v3a DIAG_RUNS=24 timeout 200 ./gpu_test_diag --gtest_filter=BwdGpuDiag.* > /tmp/v3a.txt 2>&1
grep -E '^run|^BAD' /tmp/v3a.txt; grep -c DIAG /tmp/v3a.txt; grep DIAG /tmp/v3a.txt | head -80
