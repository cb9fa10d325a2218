#!/bin/bash
# zzt5: the landed build beside main's binary and the peers (FlexAttention's Triton backend, FA2 and
# cuDNN through SDPA; no --flash: FA4 and FLASH did not fit this session's device time) on the
# issue's suite, one call. FLEXJIT_AUTOTUNE=off, fast backward.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzt5}; r=/tmp/zzt5r/r; mkdir -p $r $out
save() { (cd /tmp/zzt5r && tar czf $out/zzt5.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_new timeout 120 ./flexjit bench --suite suite.json --json $r/flexjit.jsonl > $r/flexjit.log 2>&1; echo "flexjit $(( $(date +%s) - t0 )) s"
FLEXJIT_CACHE_DIR=/tmp/fc_main timeout 100 ./flexjit_main bench --suite suite.json --json $r/main.jsonl > $r/main.log 2>&1; echo "main $(( $(date +%s) - t0 )) s"
save
left=$(( 400 - ($(date +%s) - t0) ))
timeout $left python3 peers.py --suite suite.json > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s $(grep -c '"name"' $r/peers.jsonl) rows"
save
python3 compare.py $r/flexjit.jsonl $r/peers.jsonl > $r/compare.txt 2>&1; tail -30 $r/compare.txt
python3 - $r <<'PY'
import json, sys
r = sys.argv[1]
def load(f):
    d = {}
    for l in open(f):
        if l.startswith("{") and '"name"' in l:
            o = json.loads(l); d[o["name"]] = o
    return d
new, main = load(f"{r}/flexjit.jsonl"), load(f"{r}/main.jsonl")
for n, o in new.items():
    m = main.get(n, {})
    print(f"{n:28s} new fwd/bwd {o.get('fwd_tflops', 0):6.1f} / {o.get('bwd_tflops', 0):6.1f}   main {m.get('fwd_tflops', 0):6.1f} / {m.get('bwd_tflops', 0):6.1f}")
PY
echo "done $(( $(date +%s) - t0 )) s"; save
