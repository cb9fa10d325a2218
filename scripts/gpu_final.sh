#!/usr/bin/env bash
# The benchmark session: re-check the GPU tests named in $TESTS, tune the suite (warming the
# kernel and autotune caches), time it with `flexjit bench` in a fresh process, measure cold
# compile and warm load latency on one core, then run the peers (PyTorch FlexAttention, SDPA FA2
# and cuDNN) in the same session and put them side by side.
#   bash scripts/gpu_final.sh BUILD_DIR PEERS_DIR   (PEERS_DIR holds peers.py and compare.py)
# PHASE=flexjit runs everything up to flexjit's bench, PHASE=peers the peers and the comparison
# (against $FLEXJIT_JSONL, default $OUT/flexjit.jsonl), so the two fit in separate device calls.
set -u
build=$1 peers=$2
out=${OUT:-/tmp}
phase=${PHASE:-all}
step() { echo "== $1 ($(date +%H:%M:%S))"; }
if [ "$phase" != peers ]; then
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/flexjit-final-cache
rm -rf "$FLEXJIT_CACHE_DIR"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$out/device.txt" 2>&1

step tests
for bin in ${TESTS:-}; do
  name=${bin%%:*} filter=${bin#*:}
  shards=8
  for i in $(seq 0 $((shards - 1))); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i "$build/tests/$name" --gtest_filter="$filter" > "/tmp/$name.$i.log" 2>&1 &
  done
  wait
  cat /tmp/$name.*.log | grep -E "^\[       OK|^\[  FAILED|Failure|exception|Expected|actual" | sort -u
done > "$out/tests.log" 2>&1
grep -c "OK \]" "$out/tests.log"; grep "FAILED" "$out/tests.log" | head

step "cold compile and warm load (one core)"
{
  rm -rf /tmp/cold && mkdir -p /tmp/cold
  for i in 1 2; do
    start=$(date +%s%N)
    FLEXJIT_CACHE_DIR=/tmp/cold taskset -c 0 "$build/flexjit" emit --family fwd --mask "q_idx >= kv_idx" \
        --config m128n128w8s2g --format cubin -o /tmp/cold.cubin
    echo "emit run $i: $(( ($(date +%s%N) - start) / 1000000 )) ms wall (process start to exit)"
  done
  FLEXJIT_CACHE_DIR=/tmp/cold FLEXJIT_AUTOTUNE=off taskset -c 0 "$build/flexjit" bench --only causal_d128 --no-bwd --config m128n128w8s2g
} > "$out/latency.log" 2>&1
tail -3 "$out/latency.log"

step tune
timeout 240 "$build/flexjit" tune --suite bench/suite.json > "$out/tune.log" 2>&1
tail -45 "$out/tune.log"

step bench
timeout 150 "$build/flexjit" bench --suite bench/suite.json --json "$out/flexjit.jsonl" > "$out/bench.log" 2>&1
tail -16 "$out/bench.log"

fi
if [ "$phase" != flexjit ]; then
step peers
cd "$peers" && timeout 280 env PYTHONUNBUFFERED=1 python3 peers.py --suite "$OLDPWD/bench/suite.json" > "$out/peers.jsonl" 2> "$out/peers.err"
cd "$OLDPWD"
python3 "$peers/compare.py" "${FLEXJIT_JSONL:-$out/flexjit.jsonl}" "$out/peers.jsonl" > "$out/compare.txt" 2>&1
cat "$out/compare.txt"
fi
step done
