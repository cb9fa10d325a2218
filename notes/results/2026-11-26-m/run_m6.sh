#!/usr/bin/env bash
# Session (m) m6: wgmma descriptors built once per GEMM and advanced by one add per wgmma, the
# warpgroup's row offset taken from lane 0 (uniform registers): the issue windows' uniform-datapath
# chains (16 % of the forward loop's stall samples in m3). Same binary (HEAD), templates through
# FLEXJIT_TEMPLATE_DIR: t_base = HEAD's, t_desc = the change. Two interleaved rounds, forward and
# backward (fast), and the deterministic backward on three.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/m6}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
p=noop_d128,causal_d128,noop_d64,causal_d64,gqa_causal_d128,long_causal_d128,sliding_window_d128,document_causal_d128,alibi_causal_d128,softcap_causal_d128,causal_d256
for k in 1 2; do
  for v in base desc; do
    FLEXJIT_TEMPLATE_DIR=$PWD/t_$v timeout 120 ./flexjit bench --suite suite.json --only "$p" --json $r/b_${v}_$k.jsonl > /dev/null 2>$r/err_$v.txt || { echo "$v failed"; tail -3 $r/err_$v.txt; }
    FLEXJIT_TEMPLATE_DIR=$PWD/t_$v timeout 60 ./flexjit bench --suite suite.json --only noop_d128,causal_d128,alibi_causal_d128 --bwd-mode deterministic --json $r/c_${v}_$k.jsonl > /dev/null 2>$r/err_$v.txt || { echo "$v det failed"; tail -3 $r/err_$v.txt; }
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
        res[j["name"] + (" bwd" if kind == "b" else " det")][v].append(j.get("bwd_tflops", 0))
for n in sorted(res):
    m = res[n]
    o, w = sum(m["base"]) / max(len(m["base"]), 1), sum(m["desc"]) / max(len(m["desc"]), 1)
    print(f"{n:30} base " + "/".join(f"{x:.0f}" for x in m["base"]) + "  desc " + "/".join(f"{x:.0f}" for x in m["desc"]) + f"  x{w / max(o, 1):.3f}")
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
