#!/bin/bash
# zzj1: L2 prefetches (main's templates A against B): the forward's producer asks the L2 for the
# next work tile's Q and first K/V tiles; the dK/dV kernel's producer for the K/V of the CTA one
# SM-count of launch positions later. Alternating rounds, forward + fast backward, short and
# mid lengths (short5.json) and the suite's S=4096 rows.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzj1}; r=/tmp/zzj1r/r; mkdir -p $r $out
save() { (cd /tmp/zzj1r && tar czf $out/zzj1.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
left() { echo $(( 560 - ($(date +%s) - t0) )); }
arm() { a=$1; n=$2; shift 2; [ $(left) -lt 60 ] && return; FLEXJIT_TEMPLATE_DIR=$PWD/tpl$a FLEXJIT_CACHE_DIR=/tmp/fc_$a timeout $(left) ./flexjit bench --json $r/${a}_$n.jsonl "$@" > $r/${a}_$n.log 2>&1 || tail -3 $r/${a}_$n.log; echo "$a $n $(( $(date +%s) - t0 )) s"; save; }
for round in 1 2; do
  arm A s$round --suite short5.json
  arm B s$round --suite short5.json
  arm B l$round --suite suite.json --only noop_d128,causal_d128,document_causal_d128,sliding_window_d128,causal_d64
  arm A l$round --suite suite.json --only noop_d128,causal_d128,document_causal_d128,sliding_window_d128,causal_d64
done
python3 - $r > $r/ab.txt <<'PY'
import json, sys, glob
r = sys.argv[1]
def rows(arm):
    d = {}
    for f in sorted(glob.glob(f"{r}/{arm}_*.jsonl")):
        for line in open(f):
            if line.startswith("{") and '"name"' in line:
                o = json.loads(line)
                for k in ("fwd_tflops", "bwd_tflops"):
                    if o.get(k): d.setdefault(o["name"], {}).setdefault(k, []).append(o[k])
    return d
A, B = rows("A"), rows("B")
for n in A:
    line = f"{n:24s}"
    for k in ("fwd_tflops", "bwd_tflops"):
        a, b = A[n].get(k, []), B.get(n, {}).get(k, [])
        if a and b: line += f" | {k[:3]} A {'/'.join(f'{x:.1f}' for x in a)} B {'/'.join(f'{x:.1f}' for x in b)} x{max(b)/max(a):.3f}"
    print(line)
PY
cat $r/ab.txt; save
