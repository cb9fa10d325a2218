#!/usr/bin/env bash
# Session (q) q2: the persistent forward's ticket order under masks. Sections of heads sized by an
# 8 MB L2 budget (base) against 32 MB (b32) and sections of at least 2 or 4 tiles per CTA (bal2,
# bal4), two interleaved rounds, forward only.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/q2}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
V="base b32 bal2 bal4"
for round in 1 2; do
  for v in $V; do
    env=""; [ $v = base ] || env="FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_$v"
    f=$r/${v}_$round.jsonl
    env $env timeout 120 ./flexjit bench --suite suite.json --only causal_d128,gqa_causal_d128,long_causal_d128,document_causal_d128,sliding_window_d128,prefix_lm_d128,alibi_causal_d128,long_document_causal_d128 --no-bwd --json $f.a > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    env $env timeout 60 ./flexjit bench --suite suite256x.json --only causal_d256,gqa_causal_d256,document_causal_d256 --no-bwd --json $f.b >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    env $env timeout 60 ./flexjit bench --suite suite64x.json --only causal_d64,gqa_causal_d64 --no-bwd --json $f.c >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    cat $f.a $f.b $f.c > $f
  done
done
echo "bench $(( $(date +%s) - t0 )) s"
python3 - $r "$V" <<'PY' | tee $r/summary.txt
import json, sys
d = sys.argv[1]; V = sys.argv[2].split()
def load(f):
    out = {}
    try:
        for l in open(f):
            try: j = json.loads(l)
            except Exception: continue
            if "name" in j: out[j["name"]] = j
    except FileNotFoundError: pass
    return out
runs = {v: [load(f"{d}/{v}_{i}.jsonl") for i in (1, 2)] for v in V}
print(f"{'problem':28} " + " ".join(f"{v:>12}" for v in V))
for n in runs["base"][0]:
    cells = []
    for v in V:
        a = [x.get(n, {}).get("fwd_tflops") or 0 for x in runs[v]]
        cells.append(f"{a[0]:5.0f}/{a[1]:<5.0f}")
    b = sum(x.get(n, {}).get("fwd_tflops") or 0 for x in runs["base"])
    rat = " ".join(f"{sum(x.get(n, {}).get('fwd_tflops') or 0 for x in runs[v]) / max(b, 1):.3f}" for v in V[1:])
    print(f"{n:28} " + " ".join(cells) + "  x " + rat)
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
