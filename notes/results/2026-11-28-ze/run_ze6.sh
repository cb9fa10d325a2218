#!/usr/bin/env bash
# Session (ze) ze6: the fast backward, main + the way memo (flexjit_base) against the branch with
# the rule (flexjit), the suite (d128 masked problems take the first stores; d64 and unmasked are
# controls), three rounds alternating, FLEXJIT_AUTOTUNE=off; then FlexAttention (Triton) on the
# documents problems in the same call.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/ze6}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
run() {  # binary tag round
  FLEXJIT_CACHE_DIR=/tmp/fc_$2 timeout 100 ./$1 bench --suite suite.json --bwd-mode fast > $r/b_$2_r$3.jsonl 2> $r/b_$2_r$3.err
  echo "$2 r$3 rc=$? $(( $(date +%s) - t0 )) s"
}
run flexjit_base base 1; run flexjit new 1
run flexjit new 2; run flexjit_base base 2
run flexjit_base base 3; run flexjit new 3
PYTHONUNBUFFERED=1 timeout 120 python3 peers.py --no-sdpa --suite suite.json --only document_causal_d128,long_document_causal_d128,sliding_window_d128 > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s"
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    tag = re.search(r"b_(base|new)_", f).group(1)
    for line in open(f):
        if not line.startswith("{"): continue
        o = json.loads(line)
        if o.get("bwd_tflops") is None: continue
        rows[o["name"]][tag].append(o["bwd_tflops"])
tri = {}
for line in open(f"{r}/peers.jsonl"):
    try: o = json.loads(line)
    except Exception: continue
    if o.get("bwd_tflops"): tri[o["name"]] = o["bwd_tflops"]
m = statistics.median
for n, d in rows.items():
    b, nw = d["base"], d["new"]
    t = f" Triton {tri[n]:.0f}: base {m(b) / tri[n]:.2f}x new {m(nw) / tri[n]:.2f}x" if n in tri else ""
    print(f"{n:28s} base {[round(v) for v in b]} new {[round(v) for v in nw]} median ratio {m(nw) / m(b):.3f}{t}")
PY
cd $out && tar czf ze6.tar.gz r && rm -rf r
