#!/usr/bin/env bash
# Session (n) s8: with dQ staged for tensor reductions, do the GQA pairs still pay? a: pairs with
# GQA (the commit), b: no pairs; GQA d256 problems, two rounds.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/s8}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
for round in 1 2; do
  for v in a b; do
    timeout 100 ./$v/flexjit bench --suite suite_gqa256.json --json $r/${v}_$round.jsonl > $r/${v}_$round.log 2>&1 || tail -3 $r/${v}_$round.log
  done
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
runs = {k: [load(f"{d}/{k}_{i}.jsonl") for i in (1, 2)] for k in ("a", "b")}
for n in runs["a"][0]:
    a = [x.get(n, {}).get("bwd_tflops", 0) for x in runs["a"]]
    b = [x.get(n, {}).get("bwd_tflops", 0) for x in runs["b"]]
    print(f"{n:26} bwd pairs {a[0]:4.0f} / {a[1]:4.0f}  no pairs {b[0]:4.0f} / {b[1]:4.0f}  x {sum(b)/max(sum(a),1):.2f}")
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
