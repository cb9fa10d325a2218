#!/usr/bin/env bash
# Session f, call 6: does the tuner find better backward tiles than the defaults (deterministic
# mode)? FLEXJIT_AUTOTUNE=on vs off on the backward problems furthest from cuDNN.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/f6}; mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc-f6 FLEXJIT_TUNE_JOBS=16
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$out/summary.txt"
start=$(date +%s); el() { echo $(( $(date +%s) - start )); }
only=causal_d256,noop_d64,causal_d64,gqa_causal_d128,noop_d128,document_causal_d128
for mode in off on; do
  FLEXJIT_AUTOTUNE=$mode timeout 400 ./flexjit bench --suite suite.json --only "$only" > "$out/bench_$mode.log" 2>&1 || tail -3 "$out/bench_$mode.log" | tee -a "$out/summary.txt"
  echo "== autotune $mode ($(el) s)" | tee -a "$out/summary.txt"
  grep -E '^[a-z_0-9]+ ' "$out/bench_$mode.log" | awk '{print $1, $2, $3, $(NF-3), $(NF-2), $(NF-1), $NF}' | tee -a "$out/summary.txt"
done
FLEXJIT_AUTOTUNE=on timeout 100 ./flexjit bench --suite suite.json --only "$only" > "$out/bench_cached.log" 2>&1
echo "== tuned, from the cache ($(el) s)" | tee -a "$out/summary.txt"
grep -E '^[a-z_0-9]+ ' "$out/bench_cached.log" | awk '{print $1, $2, $3}' | tee -a "$out/summary.txt"
echo "total $(el) s" | tee -a "$out/summary.txt"
