#!/bin/bash
# zzg1: problems outside the suite (offsuite.json: shapes and mods a user brings), flexjit forward +
# fast backward (FLEXJIT_AUTOTUNE=off, main 44e8990) beside SDPA's cuDNN and FA2 (plain and causal
# rows) and FlexAttention (Triton; the other rows), one call. Looking for rows where a peer leads.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzg1}; r=/tmp/zzg1r/r; mkdir -p $r $out
save() { (cd /tmp/zzg1r && tar czf $out/zzg1.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_g1
timeout 230 ./flexjit bench --suite offsuite.json --json $r/flexjit.jsonl > $r/flexjit.log 2>&1 || tail -5 $r/flexjit.log
echo "flexjit $(( $(date +%s) - t0 )) s"; save
timeout 120 python3 offsuite_peers.py --suite offsuite.json --no-flex > $r/sdpa.jsonl 2> $r/sdpa.err || tail -3 $r/sdpa.err
echo "sdpa $(( $(date +%s) - t0 )) s"; save
left=$(( 520 - ($(date +%s) - t0) ))
timeout $left python3 offsuite_peers.py --suite offsuite.json --no-sdpa > $r/flex.jsonl 2> $r/flex.err || tail -3 $r/flex.err
echo "flex $(( $(date +%s) - t0 )) s"; save
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
fj = rows(f"{r}/flexjit.jsonl"); peers = rows(f"{r}/sdpa.jsonl")
for n, s in rows(f"{r}/flex.jsonl").items(): peers.setdefault(n, {}).update(s)
for n, s in fj.items():
    o = list(s.values())[0]
    line = f"{n:26s} flexjit {o.get('fwd_tflops', 0):6.1f} / {o.get('bwd_tflops', 0):6.1f} |"
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
