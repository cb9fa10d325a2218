#!/usr/bin/env bash
# One GPU session's worth of checks, for the device machine: environment, every GPU test binary
# (sharded over the CPU cores so NVRTC compiles run in parallel), then a benchmark of the named
# suite problems. Usage: bash scripts/gpu_check.sh BUILD_DIR [PROBLEMS] [extra bench flags]
# Writes a combined log to $OUT/gpu_check.log when $OUT is set.
set -u
build=${1:-build-gpu}
problems=${2:-noop_d128,causal_d128}
shift $(( $# > 2 ? 2 : $# ))
out=${OUT:-/tmp}
log=$out/gpu_check.log
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=${FLEXJIT_CACHE_DIR:-$(mktemp -d)}
{
  echo "== device"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
  echo "== flexjit info"; "$build/flexjit" info
} 2>&1 | tee "$log"
shards=$(nproc)
for bin in "$build"/tests/gpu_test_*; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  start=$(date +%s)
  for i in $(seq 0 $((shards - 1))); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i "$bin" > "/tmp/$name.$i.log" 2>&1 &
  done
  wait
  failed=$(cat /tmp/$name.*.log | grep -c "^\[  FAILED  \]" || true)
  echo "== $name: $(( $(date +%s) - start )) s, failed lines: $failed" | tee -a "$log"
  cat /tmp/$name.*.log | grep -E "^\[       OK \]|^\[  FAILED  \]|^\[  SKIPPED \]|Failure|error|Error|exception|seed|Expected|Which is|actual|median" >> "$log"
done
echo "== bench" | tee -a "$log"
"$build/flexjit" bench --suite bench/suite.json --only "$problems" "$@" 2>&1 | tee -a "$log"
