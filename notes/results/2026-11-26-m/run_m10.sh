#!/usr/bin/env bash
# Session (m) m10: the forward with only the K and V wgmma descriptors built once per GEMM and
# advanced by one add per wgmma (Q as before, no lane-0 warpgroup): m6 had all three, which
# left d128 within the spread and cost d64. Same binary, templates through FLEXJIT_TEMPLATE_DIR:
# t_base = the committed ones, t_kv = the change. Three interleaved rounds, forward only.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/m10}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
p=noop_d128,causal_d128,noop_d64,causal_d64,gqa_causal_d128,long_causal_d128,alibi_causal_d128,document_causal_d128
for k in 1 2 3; do
  for v in base kv; do
    FLEXJIT_TEMPLATE_DIR=$PWD/t_$v timeout 120 ./flexjit bench --suite suite.json --only "$p" --no-bwd --json $r/b_${v}_$k.jsonl > /dev/null 2>$r/err_$v.txt || { echo "$v failed"; tail -3 $r/err_$v.txt; }

  done
  echo "round $k $(( $(date +%s) - t0 )) s"
done
python3 - $r <<'PY' | tee $r/ab.txt
import json, sys, glob, os, collections
d = sys.argv[1]
res = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(d + "/[bc]_*.jsonl")):
    kind = os.path.basename(f)[0]
    v, k = os.path.basename(f)[2:-6].rsplit("_", 1)
    for j in map(json.loads, open(f)):
        if "name" not in j: continue
        if kind == "b": res[j["name"] + " fwd"][v].append(j.get("fwd_tflops", 0))
        pass
for n in sorted(res):
    m = res[n]
    o, w = sum(m["base"]) / max(len(m["base"]), 1), sum(m["kv"]) / max(len(m["kv"]), 1)
    print(f"{n:30} base " + "/".join(f"{x:.0f}" for x in m["base"]) + "  kv " + "/".join(f"{x:.0f}" for x in m["kv"]) + f"  x{w / max(o, 1):.3f}")
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
