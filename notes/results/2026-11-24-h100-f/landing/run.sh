#!/usr/bin/env bash
# Session f, landing check: session e's binary (old) and this session's final code (new), both
# with their defaults, beside the peers in one device session; then compute-sanitizer on the
# changed families (the fast dK/dV kernel; the wide warp-specialised forward).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/g6}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $out/gpu.txt
t0=$(date +%s)
train=noop_d128,causal_d128,noop_d64,causal_d64,causal_d256,sliding_window_d128,document_causal_d128,document_nested_causal_d128,prefix_lm_d128,alibi_causal_d128,softcap_causal_d128,gqa_causal_d128,long_causal_d128,long_document_causal_d128
timeout 120 ./flexjit_old bench --suite suite.json --only "$train" --json $out/old.jsonl > /dev/null 2>&1 || echo "old bench failed"
timeout 120 ./flexjit bench --suite suite.json --only "$train" --json $out/new.jsonl > /dev/null 2>&1 || echo "new bench failed"
echo "flexjit $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 300 python3 peers.py --suite suite.json --only "$train" > $out/peers.jsonl 2> /tmp/peers.err || tail -3 /tmp/peers.err
echo "peers $(( $(date +%s) - t0 )) s"
python3 compare.py $out/new.jsonl $out/peers.jsonl > $out/compare_new.txt 2>&1
python3 - $out/old.jsonl $out/new.jsonl <<'PY' | tee $out/ab.txt
import json, sys
rows = [{j["name"]: j for j in map(json.loads, open(f)) if "name" in j} for f in sys.argv[1:3]]
print(f"{'problem':28} {'old fwd':>8} {'new fwd':>8} {'old bwd':>8} {'new bwd':>8}")
for n in rows[1]:
    o, w = rows[0].get(n, {}), rows[1][n]
    print(f"{n:28} {o.get('fwd_tflops', 0):8.1f} {w['fwd_tflops']:8.1f} {o.get('bwd_tflops', 0):8.1f} {w.get('bwd_tflops', 0):8.1f}")
PY
for f in BwdGpu.FastModeOnePerHeadDim FwdGpu.WideWarpSpecializedOnePerShape; do
  for tool in memcheck racecheck synccheck; do
    timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter=$f > /tmp/san.log 2>&1
    echo "== $f $tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' /tmp/san.log | tr '\n' ' ')" | tee -a $out/sanitizers.txt
  done
done
echo "total $(( $(date +%s) - t0 )) s"
