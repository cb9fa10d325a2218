#!/bin/bash
# (zzza) prepared, not run. Call 4, after a call that copied .fa4a to /tmp/fa4a (`mkdir -p
# /tmp/fa4a && cp .fa4a/* /tmp/fa4a/`, carrying .fa4a). Carry .fa4b and .gpu/zzza (about 450 s).
# The backward beside the peers that (zzz) owed: flexjit main and FM (one bench each, forward and
# fast backward), then peers.py --flash over the issue's suite (FA4, FLASH, Triton, cuDNN, FA2),
# and each flexjit backward beside the best peer's of the same call.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzad}; r=/tmp/zzzadr/r; mkdir -p $r $out
save() { (cd /tmp/zzzadr && tar czf $out/zzzad.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
( cd ../.. && timeout 150 bash .fa4b/join_install.sh ) > $r/install.txt 2>&1 &
inst=$!
FLEXJIT_CACHE_DIR=/tmp/fc_dm timeout 120 ./flexjit bench --suite suite.json --json $r/main_1.jsonl > $r/main_1.log 2>&1 || tail -3 $r/main_1.log
FLEXJIT_TEMPLATE_DIR=$PWD/tv_FM/templates FLEXJIT_CACHE_DIR=/tmp/fc_dfm timeout 120 ./flexjit bench --suite suite.json \
  --json $r/FM_1.jsonl > $r/FM_1.log 2>&1 || tail -3 $r/FM_1.log
echo "flexjit $(( $(date +%s) - t0 )) s"
save
wait $inst; echo "install: $(tail -1 $r/install.txt)"
export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages PYTHONUNBUFFERED=1
left=$(( 560 - ($(date +%s) - t0) ))
timeout $left python3 peers.py --flash --suite suite.json > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s $(grep -c '"name"' $r/peers.jsonl) rows"
save
python3 - $r <<'PY'
import json, sys, glob
r = sys.argv[1]
def load(f):
    d = {}
    for l in open(f):
        if l.startswith("{") and '"name"' in l:
            o = json.loads(l); d[o["name"]] = o
    return d
arms = {a: load(f"{r}/{a}_1.jsonl") for a in ("main", "FM")}
peers = {}
for l in open(f"{r}/peers.jsonl"):
    if l.startswith("{") and '"name"' in l:
        o = json.loads(l); peers.setdefault(o["name"], {})[o["system"]] = o
for n in sorted(arms["main"]):
    p = {s: o.get("bwd_tflops") for s, o in peers.get(n, {}).items() if o.get("bwd_tflops")}
    best = max(((x, s) for s, x in p.items()), default=(None, None))
    line = f"{n:28s} " + " ".join(f"{a} fwd {arms[a].get(n, {}).get('fwd_tflops', 0):.0f} bwd {arms[a].get(n, {}).get('bwd_tflops', 0):.0f}" for a in arms)
    line += " | " + " ".join(f"{s} {x:.0f}" for s, x in sorted(p.items()))
    if best[0]: line += f" | bwd/best({best[1]}) " + " ".join(f"{a} {arms[a].get(n, {}).get('bwd_tflops', 0) / best[0]:.3f}" for a in arms)
    print(line)
PY
echo "done $(( $(date +%s) - t0 )) s"; save
