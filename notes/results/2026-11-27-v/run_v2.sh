#!/usr/bin/env bash
# Session (v) v2: the ordered backward's NaN dK / dV (guard off): printf diagnosis (tmpl_diag:
# non-finite f16 words in a stage's Q and dO after its full barrier, probabilities >= 60000), and
# the ring's shared memory zeroed at the start (tmpl_zero).
set -u
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export DIAG_NO_GUARD=1 FLEXJIT_DETERMINISTIC_DQ=ordered
echo "== diag"; FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_diag FLEXJIT_CACHE_DIR=/tmp/fc_v2a DIAG_RUNS=14 timeout 150 ./gpu_test_diag --gtest_filter=BwdGpuDiag.* > /tmp/v2a.txt 2>&1
grep -E '^run|^BAD' /tmp/v2a.txt; grep -c DIAG /tmp/v2a.txt; grep DIAG /tmp/v2a.txt | sort | uniq | head -60
echo "== zero"; FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_zero FLEXJIT_CACHE_DIR=/tmp/fc_v2b DIAG_RUNS=14 timeout 100 ./gpu_test_diag --gtest_filter=BwdGpuDiag.* 2>&1 | grep -E '^run|^BAD'
echo "== zero GQA2"; FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_zero FLEXJIT_CACHE_DIR=/tmp/fc_v2b DIAG_GQA=2 DIAG_RUNS=14 timeout 100 ./gpu_test_diag --gtest_filter=BwdGpuDiag.* 2>&1 | grep -E '^run|^BAD'
