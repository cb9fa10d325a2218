#!/usr/bin/env bash
# Session (m) m12: the deterministic backward's two ways on the committed code (the descriptors
# sped up both): FLEXJIT_DETERMINISTIC_DQ=ordered against =kernel, and the fast mode, two
# interleaved rounds; the auto rule's picks are checked against them.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/m12}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
p=noop_d128,causal_d128,sliding_window_d128,prefix_lm_d128,alibi_causal_d128,gqa_causal_d128,long_causal_d128,document_causal_d128,long_document_causal_d128,noop_d64,causal_d64,long_sliding_window_d128
for k in 1 2; do
  timeout 90 ./flexjit bench --suite suite.json --only "$p" --json $r/b_fast_$k.jsonl > /dev/null 2>$r/err.txt || { echo "fast failed"; tail -3 $r/err.txt; }
  for w in ordered kernel; do
    FLEXJIT_DETERMINISTIC_DQ=$w timeout 90 ./flexjit bench --suite suite.json --only "$p" --bwd-mode deterministic --json $r/b_${w}_$k.jsonl > /dev/null 2>$r/err.txt || { echo "$w failed"; tail -3 $r/err.txt; }
  done
  echo "round $k $(( $(date +%s) - t0 )) s"
done
python3 - $r <<'PY' | tee $r/ab.txt
import json, sys, glob, os, collections
d = sys.argv[1]
res = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(d + "/b_*.jsonl")):
    c, k = os.path.basename(f)[2:-6].rsplit("_", 1)
    for j in map(json.loads, open(f)):
        if "name" in j: res[j["name"]][c].append(j.get("bwd_tflops", 0))
for n, m in res.items():
    f = sum(m["fast"]) / max(len(m["fast"]), 1)
    print(f"{n:28} " + "  ".join(f"{c} " + "/".join(f"{x:.0f}" for x in m[c]) + (f" ({sum(m[c]) / len(m[c]) / f:.2f}x)" if c != "fast" and m[c] else "") for c in ["fast", "ordered", "kernel"] if c in m))
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
