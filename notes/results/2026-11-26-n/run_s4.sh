#!/usr/bin/env bash
# Session (n) s4: the d256 fast backward's dQ reductions, four binaries in one call, two rounds:
# s1 (plain v2 reductions), s3 (pairs, v2), a (pairs, v4), b (no pairs, v4).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/s4}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
for round in 1 2; do
  for v in s1 s3 a b; do
    bin=../$v/flexjit; [ -x $bin ] || bin=./$v/flexjit
    timeout 100 $bin bench --suite suite256.json --json $r/${v}_$round.jsonl > $r/${v}_$round.log 2>&1 || tail -3 $r/${v}_$round.log
  done
done
echo "bench $(( $(date +%s) - t0 )) s"
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
vs = ("s1", "s3", "a", "b")
runs = {k: [load(f"{d}/{k}_{i}.jsonl") for i in (1, 2)] for k in vs}
print(f"{'problem':24} " + "  ".join(f"{v:>11}" for v in vs))
for n in runs["s1"][0]:
    cells = []
    for v in vs:
        x = [run.get(n, {}).get("bwd_tflops", 0) for run in runs[v]]
        cells.append(f"{x[0]:4.0f} / {x[1]:4.0f}")
    print(f"{n:24} " + "  ".join(cells))
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
