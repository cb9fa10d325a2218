#!/usr/bin/env bash
# Session (p) p2: forward block configs at d64 and d128 again (the warp-specialised kernel has
# changed since the defaults were measured), two rounds; ncu on the d64 backward's dK/dV kernel
# with its columns split (181dcd5).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/p2}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
for round in 1 2; do
  for c in default m128n128w8s2g m128n128w8s2ws m128n128w8s3ws m192n128w12s2ws m128n176w8s2ws; do
    arg=""; [ $c = default ] || arg="--config $c"
    timeout 60 ./flexjit bench --suite suite64x.json --only noop_d64,causal_d64,gqa_causal_d64,softcap_causal_d64,document_causal_d64 --no-bwd $arg --json $r/d64_${c}_$round.jsonl > $r/d64_${c}_$round.log 2>&1 || tail -2 $r/d64_${c}_$round.log
    timeout 60 ./flexjit bench --suite suite.json --only noop_d128,causal_d128,gqa_causal_d128 --no-bwd $arg --json $r/d128_${c}_$round.jsonl > $r/d128_${c}_$round.log 2>&1 || tail -2 $r/d128_${c}_$round.log
  done
done
echo "bench $(( $(date +%s) - t0 )) s"
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob
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
for hd in ("d64", "d128"):
    cfgs = ["default", "m128n128w8s2g", "m128n128w8s2ws", "m128n128w8s3ws", "m192n128w12s2ws", "m128n176w8s2ws"]
    runs = {c: [load(f"{d}/{hd}_{c}_{i}.jsonl") for i in (1, 2)] for c in cfgs}
    names = list(runs["default"][0])
    print(f"{hd:5} {'problem':22} " + " ".join(f"{c:>16}" for c in cfgs))
    for n in names:
        row = []
        for c in cfgs:
            v = [x.get(n, {}).get("fwd_tflops") or 0 for x in runs[c]]
            row.append(f"{v[0]:7.0f}/{v[1]:<7.0f}" if v[0] else f"{'-':>16}")
        print(f"{hd:5} {n:22} " + " ".join(row), runs["default"][0][n].get("fwd_config", ""))
PY
for p in noop_d64 causal_d64; do
  timeout 150 ncu --kernel-name regex:flexjit_attention_bwd_dkdv --launch-skip 2 --launch-count 1 --set full --import-source yes -o $r/$p ./flexjit bench --suite suite64x.json --only $p > $r/ncu_$p.log 2>&1; echo "$p rc=$? $(( $(date +%s) - t0 )) s"
  ncu --import $r/$p.ncu-rep --page details > $r/${p}_details.txt 2>&1
  ncu --import $r/$p.ncu-rep --page source --csv --print-source sass > $r/${p}_sass.csv 2>&1
  rm -f $r/$p.ncu-rep
done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
