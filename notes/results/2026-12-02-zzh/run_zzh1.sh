#!/bin/bash
# zzh1: short sequences, flexjit's configs side by side, beside cuDNN / FA2.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzh1}; r=/tmp/zzh1r/r; mkdir -p $r $out
save() { (cd /tmp/zzh1r && tar czf $out/zzh1.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
arm() { n=$1; shift; FLEXJIT_CACHE_DIR=/tmp/fc_$n timeout 150 ./flexjit bench --suite short.json --json $r/$n.jsonl "$@" > $r/$n.log 2>&1 || tail -3 $r/$n.log; echo "$n $(( $(date +%s) - t0 )) s"; save; }
arm def
timeout 100 python3 offsuite_peers.py --suite short.json --no-flex > $r/sdpa.jsonl 2> $r/sdpa.err || tail -3 $r/sdpa.err
echo "sdpa $(( $(date +%s) - t0 )) s"; save
arm m64ws --no-bwd --config m64n128w4s2ws
arm m64g --no-bwd --config m64n128w4s2g
arm n64ws --no-bwd --config m128n64w8s2ws
arm nbm --no-bwd --no-block-mask
FLEXJIT_AUTOTUNE=on arm tuned
python3 - $r <<'PY'
import json, sys, os, glob
r = sys.argv[1]
def rows(f):
    d = {}
    if os.path.exists(f):
        for line in open(f):
            if line.startswith("{") and '"name"' in line:
                o = json.loads(line); d.setdefault(o["name"], {})[o.get("system", "flexjit")] = o
    return d
arms = ["def","m64ws","m64g","n64ws","nbm","tuned"]
A = {a: rows(f"{r}/{a}.jsonl") for a in arms}
P = rows(f"{r}/sdpa.jsonl")
for n in A["def"]:
    line = f"{n:22s}"
    for a in arms:
        o = A[a].get(n, {}).get("flexjit", {})
        line += f" {a} {o.get('fwd_tflops',0) or 0:5.0f}/{o.get('bwd_tflops',0) or 0:4.0f}"
    for s, v in sorted(P.get(n, {}).items()):
        line += f" | {s} {v.get('fwd_tflops')}/{v.get('bwd_tflops')}"
    print(line)
PY
grep -h -i 'config\|choice' $r/tuned.log | head -20
save
