#!/usr/bin/env bash
# Session (v) v1: where the ordered backward's non-finite dK / dV entries lie (guard off via
# DIAG_NO_GUARD in this diagnosis binary only), main's templates vs u13 (names read after the
# full barrier).
set -u
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export DIAG_NO_GUARD=1 FLEXJIT_DETERMINISTIC_DQ=ordered
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== main templates"; FLEXJIT_CACHE_DIR=/tmp/fc_v1a DIAG_RUNS=14 timeout 100 ./gpu_test_diag --gtest_filter=BwdGpuDiag.* 2>&1 | grep -E '^run|^  |^BAD'
echo "== u13"; FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_u13 FLEXJIT_CACHE_DIR=/tmp/fc_v1b DIAG_RUNS=14 timeout 100 ./gpu_test_diag --gtest_filter=BwdGpuDiag.* 2>&1 | grep -E '^run|^  |^BAD'
echo "== main templates GQA 2"; FLEXJIT_CACHE_DIR=/tmp/fc_v1a DIAG_GQA=2 DIAG_RUNS=10 timeout 100 ./gpu_test_diag --gtest_filter=BwdGpuDiag.* 2>&1 | grep -E '^run|^  |^BAD'
echo "== u13 GQA 2"; FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_u13 FLEXJIT_CACHE_DIR=/tmp/fc_v1b DIAG_GQA=2 DIAG_RUNS=10 timeout 100 ./gpu_test_diag --gtest_filter=BwdGpuDiag.* 2>&1 | grep -E '^run|^  |^BAD'
