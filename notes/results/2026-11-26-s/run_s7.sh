#!/usr/bin/env bash
# Session (s) s7: claim2, the ticket claimed after the tile's loads only where there are tickets
# (masks); the unmasked kernels' stride as before (s5 and s6 moved that too and noop, which has no
# tickets, read 0.977). Three interleaved rounds, forward TF/s.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/s7}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
V="base claim2"
for round in 1 2 3; do
  for v in $V; do
    env=""; [ $v = base ] || env="FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_$v"
    export FLEXJIT_CACHE_DIR=/tmp/fc7_$v
    env $env timeout 60 ./flexjit bench --suite suite.json --only noop_d128,causal_d128,prefix_lm_d128,document_causal_d128,gqa_causal_d128 --no-bwd --json $r/${v}_$round.jsonl > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
  done
  echo "round $round $(( $(date +%s) - t0 )) s"
done
python3 - $r "$V" <<'PY' | tee $r/summary.txt
import json, sys, statistics
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
runs = {v: [load(f"{d}/{v}_{i}.jsonl") for i in (1, 2, 3)] for v in V}
print(f"{'problem (fwd TF/s)':22} " + " ".join(f"{v:>20}" for v in V) + "  median claim2/base")
for n in runs["base"][0]:
    cells, med = [], {}
    for v in V:
        a = [x.get(n, {}).get("fwd_tflops") or 0 for x in runs[v]]
        med[v] = statistics.median(a)
        cells.append("/".join(f"{y:.0f}" for y in a).rjust(20))
    print(f"{n:22} " + " ".join(cells) + f"  {med['claim2'] / max(med['base'], 1):.3f}")
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
