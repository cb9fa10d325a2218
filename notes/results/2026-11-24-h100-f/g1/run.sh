#!/usr/bin/env bash
# Session f, call 7 (final code): every attention and tuner GPU test; the training suite with the
# defaults (deterministic backward, wgmma d256 backward) and with --bwd-mode fast; sanitizers on a
# fast backward and on the wgmma d256 backward defaults.
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
[ -e /work/main/tests ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
cd "$(dirname "$0")"
out=${OUT:-/tmp/g1}; mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc-g1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$out/summary.txt"
start=$(date +%s); el() { echo $(( $(date +%s) - start )); }
for bin in gpu_test_attention gpu_test_tune; do
  for i in $(seq 0 15); do
    GTEST_TOTAL_SHARDS=16 GTEST_SHARD_INDEX=$i timeout 280 ./$bin > /tmp/$bin.$i.log 2>&1 &
  done
  wait
  cat /tmp/$bin.*.log > "$out/$bin.log"
  { echo "== $bin ($(el) s): $(grep -c '^\[       OK' "$out/$bin.log") ok, $(grep -c '^\[  SKIPPED' "$out/$bin.log") skipped, $(grep -c '^\[  FAILED  \] [A-Z]' "$out/$bin.log") failed"
    grep -E "^\[  FAILED  \] [A-Z]|Failure$|Expected|Which is|actual" "$out/$bin.log" | head -20; } | tee -a "$out/summary.txt"
done
export FLEXJIT_AUTOTUNE=off
train=noop_d128,causal_d128,noop_d64,causal_d64,causal_d256,sliding_window_d128,document_causal_d128,document_nested_causal_d128,prefix_lm_d128,alibi_causal_d128,relpos_learnable_causal_d128,relpos_learnable_causal_d64,alibi_learnable_causal_d128,softcap_causal_d128,gqa_causal_d128,long_causal_d128,long_document_causal_d128,long_sliding_window_d128
for mode in deterministic fast; do
  [ "$(el)" -gt 480 ] && continue
  timeout 150 ./flexjit bench --suite suite.json --only "$train" --bwd-mode $mode --json "$out/bench_$mode.jsonl" > /tmp/bench.log 2>&1 || tail -3 /tmp/bench.log | tee -a "$out/summary.txt"
  echo "== $mode ($(el) s): $(grep -E '^[a-z_0-9]+ ' /tmp/bench.log | awk '{print $1, $2, $3}' | tr '\n' ';')" | tee -a "$out/summary.txt"
done
[ "$(el)" -lt 540 ] && { timeout 50 compute-sanitizer --tool racecheck ./gpu_test_attention --gtest_filter='BwdGpu.FastModeOnePerHeadDim' > /tmp/rc.log 2>&1
  echo "== racecheck fast bwd ($(el) s): $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED|Race reported' /tmp/rc.log | sort | uniq -c | tr '\n' ' ')" | tee -a "$out/summary.txt"; }
echo "total $(el) s" | tee -a "$out/summary.txt"
