#!/bin/bash
# (zzzd) call 4 (carry .gpu/zzzd2; about 330 s): main with FMu (bwd-fm) beside FlexAttention
# (Triton) and SDPA's cuDNN and FA2 backends (`peers.py`, no --flash: FA4 / FLASH not installed in
# this call), the issue's suite, forward + fast backward; flexjit before and after the peers.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzdd}; r=/tmp/zzzddr/r; mkdir -p $r $out
save() { (cd /tmp/zzzddr && tar czf $out/zzzdd.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_b PYTHONUNBUFFERED=1
timeout 120 ./flexjit bench --suite suite.json --json $r/flexjit.jsonl > $r/flexjit.log 2>&1 || tail -3 $r/flexjit.log
echo "flexjit $(( $(date +%s) - t0 )) s"; save
left=$(( 280 - ($(date +%s) - t0) ))
timeout $left python3 peers.py --suite suite.json > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s $(grep -c '"name"' $r/peers.jsonl) rows"; save
left=$(( 335 - ($(date +%s) - t0) ))
[ $left -gt 20 ] && timeout $left ./flexjit bench --suite suite.json --json $r/flexjit_r2.jsonl > $r/flexjit_r2.log 2>&1
echo "flexjit again $(( $(date +%s) - t0 )) s"
python3 - $r <<'PY'
import json, sys, os
r = sys.argv[1]
def load(f):
    d = {}
    if os.path.exists(f):
        for line in open(f):
            if line.startswith("{") and '"name"' in line:
                o = json.loads(line); d[o["name"]] = o
    return d
fast, again = load(f"{r}/flexjit.jsonl"), load(f"{r}/flexjit_r2.jsonl")
peers = {}
if os.path.exists(f"{r}/peers.jsonl"):
    for line in open(f"{r}/peers.jsonl"):
        if line.startswith("{") and '"name"' in line:
            o = json.loads(line); peers.setdefault(o["name"], {})[o["system"]] = o
for n, o in fast.items():
    a = again.get(n, {})
    ps = " ".join(f"{s} {v.get('fwd_tflops')}/{v.get('bwd_tflops')}" for s, v in sorted(peers.get(n, {}).items()))
    print(f"{n:28s} fwd {o.get('fwd_tflops', 0):6.1f} / {a.get('fwd_tflops', 0):6.1f}  bwd {o.get('bwd_tflops', 0):6.1f} / {a.get('bwd_tflops', 0):6.1f} | {ps}")
PY
echo "$(( $(date +%s) - t0 )) s"; save
