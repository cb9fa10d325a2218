#!/usr/bin/env bash
# Session (q) q1: where the causal forward loses against noop. Tile-count sweep (d128, d256; the
# per-tile cost is the difference between problems of equal FLOPs and different keys per tile),
# the O stores switched off (timing only), and ncu on noop and causal d256.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/q1}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
for round in 1 2; do
  for v in base nostore; do
    env=""; [ $v = nostore ] && env="FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_nostore"
    env $env timeout 120 ./flexjit bench --suite sweep.json --no-bwd --json $r/${v}_$round.jsonl > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
  done
done
echo "bench $(( $(date +%s) - t0 )) s"
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys
d = sys.argv[1]
def load(f):
    out = {}
    try:
        for l in open(f):
            try: j = json.loads(l)
            except Exception: continue
            if "name" in j: out[j["name"]] = j
    except FileNotFoundError: pass
    return out
runs = {v: [load(f"{d}/{v}_{i}.jsonl") for i in (1, 2)] for v in ("base", "nostore")}
for n in runs["base"][0]:
    a = [x.get(n, {}).get("fwd_tflops") or 0 for x in runs["base"]]; b = [x.get(n, {}).get("fwd_tflops") or 0 for x in runs["nostore"]]
    ms = [x.get(n, {}).get("fwd_ms") or 0 for x in runs["base"]]
    print(f"{n:24} base {a[0]:.0f}/{a[1]:.0f} ({ms[0]:.3f} ms)  nostore {b[0]:.0f}/{b[1]:.0f}  {runs['base'][0][n].get('fwd_config','')}")
PY
head -c 600 $r/base_1.jsonl; echo
for p in noop_d256_b2_s4096 causal_d256_b2_s4096; do
  timeout 150 ncu --kernel-name regex:flexjit_attention_fwd --launch-skip 2 --launch-count 1 --set full --import-source yes -o $r/$p ./flexjit bench --suite sweep.json --only $p --no-bwd > $r/ncu_$p.log 2>&1; echo "$p rc=$? $(( $(date +%s) - t0 )) s"
  ncu --import $r/$p.ncu-rep --page details > $r/${p}_details.txt 2>&1
  ncu --import $r/$p.ncu-rep --page source --csv --print-source sass > $r/${p}_sass.csv 2>&1
  rm -f $r/$p.ncu-rep
done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
