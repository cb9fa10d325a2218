#!/usr/bin/env bash
# Session (u) u9: diagnosis of the deterministic mode's "softcap f16 bshd" failure (main's too):
# the case alone 8 times, then racecheck, initcheck and synccheck on one run of it.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/u9}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fcu9 FLEXJIT_DETERMINISTIC_DQ=ordered
t0=$(date +%s)
DIAG_RUNS=8 timeout 150 ./gpu_test_diag --gtest_filter=BwdGpuDiag.* > $r/diag.txt 2>&1; echo "diag rc=$? $(( $(date +%s) - t0 )) s"; grep -E '^run |Failure|seed' $r/diag.txt | head -30
san() {  # tool timeout
  DIAG_RUNS=1 timeout $2 compute-sanitizer --tool $1 --error-exitcode 1 ./gpu_test_diag --gtest_filter=BwdGpuDiag.* > $r/san_$1.txt 2>&1
  echo "$1 rc=$? $(( $(date +%s) - t0 )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$1.txt | tr '\n' ' ')"
  grep -E 'Error|Race|access|at 0x|in attention|\.cu' $r/san_$1.txt | head -12
}
san initcheck 120
san racecheck 150
san synccheck 90
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
