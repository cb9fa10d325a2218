#!/usr/bin/env bash
# Session f, call 1: the merged wide ws tiles. 1) every forward GPU test (the ping-pong ring is
# new for the default config too), 2) forward A/B of the defaults, session e's binary (old) vs
# the merge (new), every training problem of the suite, 3) the wide configs on unmasked problems,
# 4) memcheck + synccheck on one forward per wide shape.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/m1}; mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc-m1 FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$out/summary.txt"
start=$(date +%s); el() { echo $(( $(date +%s) - start )); }
shards=14
for i in $(seq 0 $((shards - 1))); do
  ( GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout 200 ./gpu_test_attention --gtest_filter="${FILTER:-FwdGpu.*}" \
      > "$out/test.$i.log" 2>&1; rc=$?; [ $rc -eq 0 ] || echo "shard $i exited with $rc (124: timed out)" ) &
done
wait
cat "$out"/test.*.log > "$out/fwd_tests.log"; rm -f "$out"/test.*.log
{ echo "== tests ($(el) s): $(grep -c '^\[       OK' "$out/fwd_tests.log") ok, $(grep -c '^\[  SKIPPED' "$out/fwd_tests.log") skipped, $(grep -c '^\[  FAILED  \] [A-Z]' "$out/fwd_tests.log") failed"
  grep -E "^\[  FAILED  \] [A-Z]|Failure$|Expected|Which is|actual" "$out/fwd_tests.log" | head -30; } | tee -a "$out/summary.txt"
fwd=noop_d128,causal_d128,noop_d64,causal_d64,causal_d256,sliding_window_d128,document_causal_d128,document_nested_causal_d128,prefix_lm_d128,alibi_causal_d128,relpos_learnable_causal_d128,relpos_learnable_causal_d64,softcap_causal_d128,gqa_causal_d128,long_causal_d128,long_document_causal_d128
for round in 1 2; do
  for bin in flexjit_old flexjit; do
    [ "$(el)" -gt 420 ] && continue
    timeout 100 ./$bin bench --suite suite.json --only "$fwd" --no-bwd --json "$out/ab_${bin}_r$round.jsonl" > "$out/ab.log" 2>&1 || tail -3 "$out/ab.log" | tee -a "$out/summary.txt"
    echo "== r$round $bin ($(el) s): $(grep -E '^[a-z_0-9]+ ' "$out/ab.log" | awk '{print $1, $2}' | tr '\n' ';')" | tee -a "$out/summary.txt"
  done
done
for cfg in m128n176w8s2ws m192n128w12s2ws m128n128w8s2ws; do
  [ "$(el)" -gt 470 ] && continue
  timeout 60 ./flexjit bench --suite suite_wide.json --no-bwd --config "$cfg" > "$out/wide.log" 2>&1 || tail -3 "$out/wide.log" | tee -a "$out/summary.txt"
  echo "== wide $cfg ($(el) s): $(grep -E '^[a-z_0-9]+ ' "$out/wide.log" | awk '{print $1, $2}' | tr '\n' ';')" | tee -a "$out/summary.txt"
done
for tool in memcheck synccheck; do
  [ "$(el)" -gt 520 ] && continue
  timeout 40 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention \
    --gtest_filter='FwdGpu.WideWarpSpecializedOnePerShape' > "$out/$tool.log" 2>&1
  echo "== $tool rc=$? ($(el) s): $(grep -E 'ERROR SUMMARY|PASSED|FAILED' "$out/$tool.log" | tr '\n' ' ')" | tee -a "$out/summary.txt"
done
echo "total $(el) s" | tee -a "$out/summary.txt"
