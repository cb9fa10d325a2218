#!/usr/bin/env bash
# Session (n) s12: the landing A/B in one device session: session (m)'s binary (m8, the previous
# path: d256 deterministic with the dQ kernel) against the final one (fast and deterministic), two
# rounds, then the peers (FlexAttention, FA2, cuDNN) on the d256 problems.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/s12}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
for round in 1 2; do
  timeout 100 ./flexjit_prev bench --suite suite256.json --json $r/prev_$round.jsonl > $r/prev_$round.log 2>&1 || tail -3 $r/prev_$round.log
  timeout 100 ./flexjit bench --suite suite256.json --json $r/fast_$round.jsonl > $r/fast_$round.log 2>&1 || tail -3 $r/fast_$round.log
  timeout 100 ./flexjit bench --suite suite256.json --bwd-mode deterministic --json $r/det_$round.jsonl > $r/det_$round.log 2>&1 || tail -3 $r/det_$round.log
done
echo "flexjit $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 300 python3 peers.py --suite suite256.json > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
python3 compare.py $r/fast_1.jsonl $r/peers.jsonl > $r/compare.txt 2>&1
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys
d = sys.argv[1]
def load(f):
    out = {}
    for l in open(f):
        try: j = json.loads(l)
        except Exception: continue
        if "name" in j: out.setdefault(j["name"], {})[j.get("system", "flexjit")] = j
    return out
runs = {k: [load(f"{d}/{k}_{i}.jsonl") for i in (1, 2)] for k in ("prev", "fast", "det")}
peers = load(d + "/peers.jsonl")
for n in runs["fast"][0]:
    cell = lambda k, key: "/".join(f"{x.get(n, {}).get('flexjit', {}).get(key, 0):.0f}" for x in runs[k])
    p = peers.get(n, {})
    ps = " ".join(f"{s}={v.get('fwd_tflops', 0):.0f}/{v.get('bwd_tflops') or 0:.0f}" for s, v in p.items())
    print(f"{n:22} bwd prev {cell('prev','bwd_tflops')} fast {cell('fast','bwd_tflops')} det {cell('det','bwd_tflops')} | fwd prev {cell('prev','fwd_tflops')} new {cell('fast','fwd_tflops')} | {ps}")
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
