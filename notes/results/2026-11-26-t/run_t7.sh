#!/usr/bin/env bash
# Session (t) t7: how much the buffer reads' 64-bit address math costs (t6). v2 is an
# EXPERIMENT, not for landing: flexjit_read with 32-bit offsets, assuming offsets fit 31 bits and
# buffers are non-empty (true of the suite's buffers). Forward TF/s on the buffer-reading mods,
# three interleaved rounds, order alternating; main at the review commit (base).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/t7}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
V="base v2"; R="1 2 3"
for round in $R; do
  order=$V; [ $((round % 2)) = 0 ] && order=$(echo $V | awk '{print $2, $1}')
  for v in $order; do
    env=""; [ $v = base ] || env="FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_$v"
    export FLEXJIT_CACHE_DIR=/tmp/fct7_$v
    f=$r/${v}_$round.jsonl
    env $env timeout 90 ./flexjit bench --suite suite.json --only document_causal_d128,document_nested_causal_d128,long_document_causal_d128,relpos_learnable_causal_d128,relpos_learnable_causal_d64,alibi_causal_d128,causal_d128 --no-bwd --json $f.a > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    env $env timeout 40 ./flexjit bench --suite suite64x.json --only document_causal_d64 --no-bwd --json $f.b >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    cat $f.a $f.b > $f
  done
  echo "round $round $(( $(date +%s) - t0 )) s"
done
python3 - $r "$V" "$R" <<'PY' | tee $r/summary.txt
import json, sys, statistics
d = sys.argv[1]; V = sys.argv[2].split(); R = sys.argv[3].split()
def load(f):
    out = {}
    try:
        for l in open(f):
            try: j = json.loads(l)
            except Exception: continue
            if "name" in j: out[j["name"]] = j
    except FileNotFoundError: pass
    return out
runs = {v: [load(f"{d}/{v}_{i}.jsonl") for i in R] for v in V}
a, b = V
print(f"{'problem (fwd TF/s)':30} " + " ".join(f"{v:>16}" for v in V) + f"  median {b}/{a}  up  config")
for n in runs[a][0]:
    cells, med, per = [], {}, {}
    for v in V:
        x = [y.get(n, {}).get("fwd_tflops") or 0 for y in runs[v]]
        per[v] = x; med[v] = statistics.median(x)
        cells.append("/".join(f"{y:.0f}" for y in x).rjust(16))
    wins = sum(c > p for p, c in zip(per[a], per[b]))
    print(f"{n:30} " + " ".join(cells) + f"  {med[b] / max(med[a], 1):.3f}  {wins}/{len(R)}  " + runs[a][0][n].get("fwd_config", "") + " | " + runs[b][0].get(n, {}).get("fwd_config", ""))
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
