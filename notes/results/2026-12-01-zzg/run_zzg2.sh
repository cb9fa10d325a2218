#!/bin/bash
# zzg2: GQA with few kv heads (tensor-parallel shards: Hkv 1-2 per GPU), where the dK/dV kernel's
# CTAs (one per kv tile and kv head, walking every query head of the group) are fewer than the SMs
# or very unequal. flexjit forward + fast backward + deterministic backward beside SDPA's cuDNN and
# FA2 (main 44e8990), one call.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzg2}; r=/tmp/zzg2r/r; mkdir -p $r $out
save() { (cd /tmp/zzg2r && tar czf $out/zzg2.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_g2
timeout 150 ./flexjit bench --suite gqa_few_heads.json --json $r/flexjit.jsonl > $r/flexjit.log 2>&1 || tail -5 $r/flexjit.log
echo "flexjit $(( $(date +%s) - t0 )) s"; save
timeout 120 ./flexjit bench --suite gqa_few_heads.json --bwd-mode deterministic --json $r/flexjit_det.jsonl > $r/flexjit_det.log 2>&1 || tail -5 $r/flexjit_det.log
echo "flexjit det $(( $(date +%s) - t0 )) s"; save
timeout 150 python3 offsuite_peers.py --suite gqa_few_heads.json --no-flex > $r/sdpa.jsonl 2> $r/sdpa.err || tail -3 $r/sdpa.err
echo "sdpa $(( $(date +%s) - t0 )) s"; save
python3 - $r <<'PY'
import json, sys, os
r = sys.argv[1]
def rows(f):
    d = {}
    if os.path.exists(f):
        for line in open(f):
            if line.startswith("{") and '"name"' in line:
                o = json.loads(line); d.setdefault(o["name"], {})[o.get("system", "flexjit")] = o
    return d
fj = rows(f"{r}/flexjit.jsonl"); det = rows(f"{r}/flexjit_det.jsonl"); peers = rows(f"{r}/sdpa.jsonl")
for n, s in fj.items():
    o = list(s.values())[0]; d = list(det.get(n, {"x": {}}).values())[0]
    line = f"{n:28s} flexjit {o.get('fwd_tflops', 0):6.1f} / {o.get('bwd_tflops', 0):6.1f} det {d.get('bwd_tflops', 0):6.1f} |"
    bf = bb = 0
    for sysname, v in sorted(peers.get(n, {}).items()):
        if "error" in v: line += f" {sysname} ERR"; continue
        line += f" {sysname} {v.get('fwd_tflops')}/{v.get('bwd_tflops')}"
        bf = max(bf, v.get('fwd_tflops') or 0); bb = max(bb, v.get('bwd_tflops') or 0)
    if bf: line += f" | fwd x{o.get('fwd_tflops', 0) / bf:.2f} bwd x{(o.get('bwd_tflops') or 0) / max(bb, 1e-9):.2f}"
    print(line)
PY
echo "$(( $(date +%s) - t0 )) s"
save
