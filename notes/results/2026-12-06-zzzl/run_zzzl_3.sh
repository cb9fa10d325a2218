#!/bin/bash
# (zzzl) call 3 (carry .gpu/zzzl; right after call 2, which installed FA4 into /tmp/site; about
# 430 s): the branch beside every peer, FA4 and FlexAttention's FLASH backend included (`--flash`),
# on the issue's suite (issue_suite.json, 13 rows): flexjit forward + fast backward, the peers,
# flexjit again (the form of (zzv)'s run_zzv2.sh, on an H100).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzl3}; r=/tmp/zzzl3r/r; mkdir -p $r $out
save() { (cd /tmp/zzzl3r && tar czf $out/zzzl3.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
test -d /tmp/site/flash_attn || echo "FA4 not installed (call 2's install): the peers run without --flash"
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_b
timeout 120 ./flexjit bench --suite issue_suite.json --json $r/flexjit.jsonl > $r/flexjit.log 2>&1 || tail -3 $r/flexjit.log
echo "flexjit $(( $(date +%s) - t0 )) s"; save
export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages PYTHONUNBUFFERED=1
flash=--flash; test -d /tmp/site/flash_attn || flash=
left=$(( 420 - ($(date +%s) - t0) ))
timeout $left python3 peers.py $flash --suite issue_suite.json > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s $(grep -c '"name"' $r/peers.jsonl) rows"; save
left=$(( 520 - ($(date +%s) - t0) ))
[ $left -gt 20 ] && timeout $left ./flexjit bench --suite issue_suite.json --json $r/flexjit_r2.jsonl > $r/flexjit_r2.log 2>&1
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
    print(f"{n:24s} fwd {o.get('fwd_tflops', 0):6.1f} / {a.get('fwd_tflops', 0):6.1f}  bwd {o.get('bwd_tflops', 0):6.1f} / {a.get('bwd_tflops', 0):6.1f} | {ps}")
PY
echo "$(( $(date +%s) - t0 )) s"; save
