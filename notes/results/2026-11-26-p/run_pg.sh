#!/usr/bin/env bash
# Session (p) pg: noop and causal d128 fast backward, four interleaved rounds: a6769d1
# (flexjit_prev), 4f6ed10 (flexjit), and 4f6ed10 with 1ff2630's templates (the 16-byte-chunk dQ
# layout): whether the final code's noop d128 loss in pf (0.96x) is the layout or the spread.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/pg}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
for round in 1 2 3 4; do
  timeout 40 ./flexjit_prev bench --suite suite.json --only noop_d128,causal_d128 --json $r/prev_$round.jsonl > /dev/null 2>&1
  timeout 40 ./flexjit bench --suite suite.json --only noop_d128,causal_d128 --json $r/new_$round.jsonl > /dev/null 2>&1
  FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_prev timeout 40 ./flexjit bench --suite suite.json --only noop_d128,causal_d128 --json $r/oldlayout_$round.jsonl > /dev/null 2>&1
done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys
d = sys.argv[1]
def load(f):
    out = {}
    for l in open(f):
        try: j = json.loads(l)
        except Exception: continue
        if "name" in j: out[j["name"]] = j
    return out
for n in ("noop_d128", "causal_d128"):
    for v in ("prev", "new", "oldlayout"):
        xs = [load(f"{d}/{v}_{i}.jsonl")[n]["bwd_tflops"] for i in (1, 2, 3, 4)]
        print(f"{n:12} {v:10} bwd " + " ".join(f"{x:.0f}" for x in xs) + f"  median {sorted(xs)[1]/2 + sorted(xs)[2]/2:.0f}")
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
