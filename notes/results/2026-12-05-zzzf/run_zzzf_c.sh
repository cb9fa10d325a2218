#!/bin/bash
# (zzzf) call C (carry .gpu/zzze; about 250 s): the binary that lands (BIN, default ./flexjit = B)
# beside FlexAttention (Triton) and SDPA's cuDNN and FA2 backends (`peers.py`, no --flash: FA4 /
# FLASH are not installed in this call), the issue's suite and the diagonal tables, forward + fast
# backward; flexjit before and after the peers.
set -u
cd "$(dirname "$0")"
BIN=${BIN:-./flexjit}
out=${OUT:-/tmp/zzzfc}; r=/tmp/zzzfcr/r; mkdir -p $r $out
save() { (cd /tmp/zzzfcr && tar czf $out/zzzfc.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_c PYTHONUNBUFFERED=1
python3 - <<'PY'
import json
s = json.load(open("suite.json")); rows = s["problems"] if isinstance(s, dict) else s
f = json.load(open("diagonal_tables.json"))["problems"]
json.dump({"problems": rows + f}, open("suite_c.json", "w"))
PY
timeout 150 $BIN bench --suite suite_c.json --json $r/flexjit.jsonl > $r/flexjit.log 2>&1 || tail -3 $r/flexjit.log
echo "flexjit $(( $(date +%s) - t0 )) s"; save
left=$(( 400 - ($(date +%s) - t0) ))
timeout $left python3 peers.py --suite suite_c.json > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s $(grep -c '"name"' $r/peers.jsonl) rows"; save
left=$(( 540 - ($(date +%s) - t0) ))
[ $left -gt 20 ] && timeout $left $BIN bench --suite suite_c.json --json $r/flexjit_r2.jsonl > $r/flexjit_r2.log 2>&1
echo "flexjit again $(( $(date +%s) - t0 )) s"
python3 - $r <<'PY' | tee $r/table.txt
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
