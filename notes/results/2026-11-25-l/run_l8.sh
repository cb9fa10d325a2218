#!/usr/bin/env bash
# Session (l) l8, diagnostic: the ordered kernel with its turns skipped (tmpl_nowait, through
# FLEXJIT_TEMPLATE_DIR; wrong sums, timing only) beside the ordered and fast kernels: how much of
# the ordered mode's loss is waiting.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/l8}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
train=noop_d128,causal_d128,noop_d64,alibi_causal_d128,prefix_lm_d128,gqa_causal_d128
for k in 1 2; do
  timeout 60 ./flexjit bench --suite suite.json --only "$train" --json $r/b_fast_$k.jsonl > /dev/null 2>$r/err.txt || { echo "fast failed"; tail -3 $r/err.txt; }
  FLEXJIT_DETERMINISTIC_DQ=ordered timeout 60 ./flexjit bench --suite suite.json --only "$train" --bwd-mode deterministic --json $r/b_ordered_$k.jsonl > /dev/null 2>$r/err.txt || { echo "ordered failed"; tail -3 $r/err.txt; }
  FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_nowait FLEXJIT_DETERMINISTIC_DQ=ordered timeout 90 ./flexjit bench --suite suite.json --only "$train" --bwd-mode deterministic --json $r/b_nowait_$k.jsonl > /dev/null 2>$r/err.txt || { echo "nowait failed"; tail -3 $r/err.txt; }
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
    print(f"{n:26} " + "  ".join(f"{c} " + "/".join(f"{x:.0f}" for x in m[c]) for c in sorted(m)))
PY
cd $out && tar czf r.tar.gz r && rm -rf r
