#!/usr/bin/env bash
# Session f: equality propagation in the emitted mods. 1) the attention, mask and expression GPU
# tests; 2) forward and backward A/B (before / after, same process pair, two rounds) on the
# problems whose masks have an equality: documents, nested documents, long documents.
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
[ -e /work/main/tests ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
cd "$(dirname "$0")"
out=${OUT:-/tmp/g5}; mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc-g5
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$out/summary.txt"
start=$(date +%s); el() { echo $(( $(date +%s) - start )); }
for bin in gpu_test_attention gpu_test_mask gpu_test_expr; do
  for i in $(seq 0 15); do
    GTEST_TOTAL_SHARDS=16 GTEST_SHARD_INDEX=$i timeout 280 ./$bin > /tmp/$bin.$i.log 2>&1 &
  done
  wait
  cat /tmp/$bin.*.log > "$out/$bin.log"
  { echo "== $bin ($(el) s): $(grep -c '^\[       OK' "$out/$bin.log") ok, $(grep -c '^\[  SKIPPED' "$out/$bin.log") skipped, $(grep -c '^\[  FAILED  \] [A-Z]' "$out/$bin.log") failed"
    grep -E "^\[  FAILED  \] [A-Z]|Failure$|Expected|Which is|actual" "$out/$bin.log" | head -20; } | tee -a "$out/summary.txt"
done
export FLEXJIT_AUTOTUNE=off
only=document_causal_d128,document_nested_causal_d128,long_document_causal_d128,causal_d128
for r in 1 2; do
  for bin in flexjit_old flexjit; do
    timeout 100 ./$bin bench --suite suite.json --only "$only" > /tmp/b.log 2>&1 || tail -3 /tmp/b.log | tee -a "$out/summary.txt"
    echo "== r$r $bin ($(el) s): $(grep -E '^[a-z_0-9]+ ' /tmp/b.log | awk '{print $1, $2, $3}' | tr '\n' ';')" | tee -a "$out/summary.txt"
  done
done
echo "total $(el) s" | tee -a "$out/summary.txt"
