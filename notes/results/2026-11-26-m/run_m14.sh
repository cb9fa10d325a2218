#!/usr/bin/env bash
# Session (m) m14: the backward reads each pair of query columns' LSE and delta with one 8-byte
# shared load (stat_pair) instead of two: 32 -> 16 LDS per tile and thread. Same binary,
# templates through FLEXJIT_TEMPLATE_DIR: t_base = committed, t_pairs = the change. Three
# interleaved rounds, fast and ordered-deterministic backward.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/m14}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
p=noop_d128,causal_d128,noop_d64,causal_d64,gqa_causal_d128,alibi_causal_d128,softcap_causal_d128,document_causal_d128
for k in 1 2 3; do
  for v in base pairs; do
    FLEXJIT_TEMPLATE_DIR=$PWD/t_$v timeout 90 ./flexjit bench --suite suite.json --only "$p" --json $r/b_${v}_$k.jsonl > /dev/null 2>$r/err_$v.txt || { echo "$v failed"; tail -3 $r/err_$v.txt; }
    FLEXJIT_TEMPLATE_DIR=$PWD/t_$v FLEXJIT_DETERMINISTIC_DQ=ordered timeout 60 ./flexjit bench --suite suite.json --only noop_d128,causal_d128,alibi_causal_d128 --bwd-mode deterministic --json $r/c_${v}_$k.jsonl > /dev/null 2>$r/err_$v.txt || { echo "$v det failed"; tail -3 $r/err_$v.txt; }
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
        if "name" in j: res[j["name"] + (" fast" if kind == "b" else " ordered")][v].append(j.get("bwd_tflops", 0))
for n in sorted(res):
    m = res[n]
    o, w = sum(m["base"]) / max(len(m["base"]), 1), sum(m["pairs"]) / max(len(m["pairs"]), 1)
    print(f"{n:32} base " + "/".join(f"{x:.0f}" for x in m["base"]) + "  pairs " + "/".join(f"{x:.0f}" for x in m["pairs"]) + f"  x{w / max(o, 1):.3f}")
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
