#!/usr/bin/env bash
# Session (u) u12: where the ordered backward's non-finite dK / dV entries are (the guard off in
# this test binary); then BwdGpu.DeterministicModeSumsDqInOrder on the landed build (guard on).
set -u
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fcu12
DIAG_RUNS=12 timeout 80 ./gpu_test_diag --gtest_filter=BwdGpuDiag.* 2>&1 | grep -E '^run|^  '
for i in 1 2; do
timeout 150 ./gpu_test_attention --gtest_filter=BwdGpu.DeterministicModeSumsDqInOrder > /tmp/det_$i.txt 2>&1; echo "det #$i rc=$? $(grep -E '^\[  (PASSED|FAILED)' /tmp/det_$i.txt | tr '\n' ' ')"; grep -A4 Failure /tmp/det_$i.txt | head -20
done
