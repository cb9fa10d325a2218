#!/usr/bin/env bash
# Session (q) q9: the order of the fast backward's dK/dV CTAs under GQA. Today every (kv head,
# batch) pair's heaviest kv tile starts first (HEAVY_FIRST): co-resident CTAs add into every query
# head's dQ, 1.6 GB of DRAM reads for GQA 4:1 causal d128 (ncu, q8). Against heavy-first within
# groups of pairs of about 128 / 64 / 32 CTAs (g128 / g64 / g32; unmasked: the plain order), two
# interleaved rounds, fast mode, and the deterministic mode once.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/q9}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
V="base g128 g64 g32"
for round in 1 2; do
  for v in $V; do
    env=""; [ $v = base ] || env="FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_$v"
    f=$r/${v}_$round.jsonl
    env $env timeout 60 ./flexjit bench --suite suite.json --only gqa_causal_d128 --json $f.a > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    env $env timeout 60 ./flexjit bench --suite gqa.json --json $f.b >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    env $env timeout 60 ./flexjit bench --suite suite64x.json --only gqa_causal_d64 --json $f.c >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    env $env timeout 60 ./flexjit bench --suite suite256x.json --only gqa_causal_d256 --json $f.d >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    cat $f.a $f.b $f.c $f.d > $f
    if [ $round = 1 ]; then env $env timeout 60 ./flexjit bench --suite suite.json --only gqa_causal_d128 --bwd-mode deterministic --json $r/${v}_det.jsonl > $r/${v}_det.log 2>&1 || tail -2 $r/${v}_det.log; fi
  done
  echo "round $round $(( $(date +%s) - t0 )) s"
done
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
print(f"{'problem (bwd TF/s)':28} " + " ".join(f"{v:>12}" for v in V))
for n in runs["base"][0]:
    cells = []
    for v in V:
        a = [x.get(n, {}).get("bwd_tflops") or 0 for x in runs[v]]
        cells.append(f"{a[0]:5.0f}/{a[1]:<5.0f}")
    b = sum(x.get(n, {}).get("bwd_tflops") or 0 for x in runs["base"])
    rat = " ".join(f"{sum(x.get(n, {}).get('bwd_tflops') or 0 for x in runs[v]) / max(b, 1):.3f}" for v in V)
    print(f"{n:28} " + " ".join(cells) + "  x " + rat)
det = {v: load(f"{d}/{v}_det.jsonl") for v in V}
print("deterministic gqa_causal_d128: " + " ".join(f"{v} {det[v].get('gqa_causal_d128', {}).get('bwd_tflops')} ({det[v].get('gqa_causal_d128', {}).get('bwd_mode')})" for v in V))
PY
m=gpu__time_duration.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed
for v in base g64; do
  env=""; [ $v = base ] || env="FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_$v"
  env $env timeout 60 ncu --kernel-name regex:flexjit_attention_bwd_dkdv --launch-skip 2 --launch-count 1 --metrics $m ./flexjit bench --suite suite.json --only gqa_causal_d128 > $r/ncu_$v.txt 2>&1; echo "$v rc=$?"; grep -E "gpu__|sm__|lts__|dram__" $r/ncu_$v.txt
done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
