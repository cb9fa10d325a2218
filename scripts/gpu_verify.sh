#!/usr/bin/env bash
# Final verification on a GPU: every GPU test binary (sharded), the examples' GPU path, the
# selftest twice over one cache (the second process must load from disk without compiling), and
# the first-call cost of a forward kernel in fresh processes with a warm cache.
#   bash scripts/gpu_verify.sh BUILD_DIR
set -u
build=$1
out=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
FLEXJIT_CACHE_DIR=/tmp/verify-tests bash scripts/gpu_check.sh "$build" noop_d128 --no-bwd > /dev/null 2>&1
grep -E "^==|FAILED|exception" "$out/gpu_check.log" | head -20
echo "tests OK: $(grep -cE '^\[       OK' "$out/gpu_check.log")"
for e in "$build"/examples/*; do
  [ -f "$e" ] && [ -x "$e" ] || continue
  FLEXJIT_CACHE_DIR=/tmp/verify-examples "$e" > "/tmp/$(basename $e).log" 2>&1
  echo "$(basename $e): exit $? | $(grep -iE 'error|passed|FAILED' /tmp/$(basename $e).log | tr '\n' ' ' | cut -c1-220)"
done
rm -rf /tmp/verify-selftest
for i in 1 2; do
  start=$(date +%s%N)
  FLEXJIT_CACHE_DIR=/tmp/verify-selftest "$build/flexjit" selftest --out /tmp/selftest$i > "/tmp/selftest$i.log" 2>&1
  rc=$?
  echo "selftest run $i: exit $rc, $(( ($(date +%s%N) - start) / 1000000 )) ms wall"
  cat "/tmp/selftest$i.log"
done
for i in 1 2 3; do
  FLEXJIT_CACHE_DIR=/tmp/verify-bench FLEXJIT_AUTOTUNE=off "$build/flexjit" bench --only causal_d128 --no-bwd 2>&1 | tail -1
done
