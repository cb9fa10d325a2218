#!/bin/bash
# (zzzj) call 2 (carry .gpu/zzzk2; about 450 s): compute-sanitizer memcheck on the table form's
# GPU test, then the table build beside FlexAttention and SDPA's cuDNN / FA2 (peers.py, no --flash)
# on the diagonal-table peer suite, forward + fast backward (run_zzzd_d.sh).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzk2}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fjm timeout 170 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 9 \
  ./gta --gtest_filter='FwdGpu.DiagonalTableErrorsCountWhereTilesReadThem' > $out/memcheck.txt 2>&1
echo "memcheck rc=$? $(( $(date +%s) - t0 )) s"
grep -hE "ERROR SUMMARY|^\[ +(OK|FAILED) " $out/memcheck.txt | head
OUT=$out bash run_zzzd_d.sh
echo "all done $(( $(date +%s) - t0 )) s"
