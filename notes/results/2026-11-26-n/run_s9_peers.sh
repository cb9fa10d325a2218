#!/usr/bin/env bash
# Session (n) s9 peers: the d256 problems, flexjit's fast and deterministic backward beside
# FlexAttention, FlashAttention-2 and cuDNN (SDPA) in one run.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/s9p}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
timeout 100 ./flexjit bench --suite suite256.json --json $r/flexjit.jsonl > $r/flexjit.log 2>&1 || tail -3 $r/flexjit.log
timeout 100 ./flexjit bench --suite suite256.json --bwd-mode deterministic --json $r/flexjit_det.jsonl > $r/flexjit_det.log 2>&1 || tail -3 $r/flexjit_det.log
echo "flexjit $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 400 python3 peers.py --suite suite256.json > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s"
python3 compare.py $r/flexjit.jsonl $r/peers.jsonl > $r/compare.txt 2>&1
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
fast, det, peers = load(d + "/flexjit.jsonl"), load(d + "/flexjit_det.jsonl"), load(d + "/peers.jsonl")
for n in fast:
    f = fast[n]["flexjit"]; t = det.get(n, {}).get("flexjit", {}); p = peers.get(n, {})
    fb, db = f.get("bwd_tflops", 0), t.get("bwd_tflops", 0)
    ps = " ".join(f"{s}={v.get('fwd_tflops', 0):.0f}/{v.get('bwd_tflops') or 0:.0f}" for s, v in p.items())
    print(f"{n:24} fwd {f.get('fwd_tflops',0):4.0f} bwd {fb:4.0f} ({f.get('bwd_mode','')}) det {db:4.0f} | {ps}")
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
