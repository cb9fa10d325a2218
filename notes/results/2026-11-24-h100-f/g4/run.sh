#!/usr/bin/env bash
# Session f: the full forward search (FLEXJIT_AUTOTUNE=max) on the dense problems furthest from
# cuDNN (causal d64/d128/d256), against the defaults, then the tuned choices again from the cache.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/g4}; mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc-g4 FLEXJIT_TUNE_JOBS=16
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$out/summary.txt"
start=$(date +%s); el() { echo $(( $(date +%s) - start )); }
only=causal_d256,causal_d64,causal_d128
FLEXJIT_AUTOTUNE=off timeout 60 ./flexjit bench --suite suite.json --only "$only" --no-bwd > /tmp/b.log 2>&1
echo "== defaults ($(el) s): $(grep -E '^[a-z_0-9]+ ' /tmp/b.log | awk '{print $1, $2, $(NF-2), $(NF-1)}' | tr '\n' ';')" | tee -a "$out/summary.txt"
FLEXJIT_AUTOTUNE=max timeout 420 ./flexjit tune --suite suite.json --only "$only" --no-bwd --max > "$out/tune.log" 2>&1 || tail -3 "$out/tune.log" | tee -a "$out/summary.txt"
echo "== tuned ($(el) s)" | tee -a "$out/summary.txt"; grep -E "fwd" "$out/tune.log" | tail -6 | tee -a "$out/summary.txt"
for r in 1 2; do
  FLEXJIT_AUTOTUNE=on timeout 60 ./flexjit bench --suite suite.json --only "$only" --no-bwd > /tmp/b.log 2>&1
  echo "== tuned from cache r$r ($(el) s): $(grep -E '^[a-z_0-9]+ ' /tmp/b.log | awk '{print $1, $2, $(NF-2), $(NF-1)}' | tr '\n' ';')" | tee -a "$out/summary.txt"
  FLEXJIT_AUTOTUNE=off timeout 60 ./flexjit bench --suite suite.json --only "$only" --no-bwd > /tmp/b.log 2>&1
  echo "== defaults r$r ($(el) s): $(grep -E '^[a-z_0-9]+ ' /tmp/b.log | awk '{print $1, $2, $(NF-2), $(NF-1)}' | tr '\n' ';')" | tee -a "$out/summary.txt"
done
