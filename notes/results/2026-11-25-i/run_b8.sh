#!/usr/bin/env bash
# Issue 13: other warp-specialised dK/dV tiles on every training problem (fast mode), two rounds:
# the default m64n128w8s2ws, one consumer warpgroup over 64 keys (m64n64w4s2ws: 100 KB, two CTAs
# per SM), three stages (m64n128w8s3ws, where it fits).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/b8}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
train=noop_d128,causal_d128,noop_d64,causal_d64,sliding_window_d128,document_causal_d128,document_nested_causal_d128,prefix_lm_d128,alibi_causal_d128,softcap_causal_d128,gqa_causal_d128,long_causal_d128,long_document_causal_d128
d64=noop_d64,causal_d64
for k in 1 2; do
  timeout 100 ./flexjit bench --suite suite.json --only "$train" --json $r/default_$k.jsonl > $r/b.log 2>&1 || { echo "default failed"; tail -3 $r/b.log; }
  timeout 100 ./flexjit bench --suite suite.json --only "$train" --dkdv-config m64n64w4s2ws --json $r/n64w4_$k.jsonl > $r/b.log 2>&1 || { echo "n64w4 failed"; tail -3 $r/b.log; }
  timeout 60 ./flexjit bench --suite suite.json --only "$d64" --dkdv-config m64n128w8s3ws --json $r/s3_$k.jsonl > $r/b.log 2>&1 || { echo "s3 failed"; tail -3 $r/b.log; }
  echo "round $k $(( $(date +%s) - t0 )) s"
done
python3 - $r <<'PY' | tee $r/ab.txt
import json, sys, glob, os, collections
d = sys.argv[1]
res = collections.defaultdict(lambda: collections.defaultdict(list))
cs = []
for f in sorted(glob.glob(d + "/*_[12].jsonl")):
    c = os.path.basename(f)[:-8]
    if c not in cs: cs.append(c)
    for j in map(json.loads, open(f)):
        if "name" in j: res[j["name"]][c].append(j.get("bwd_tflops", 0))
print(f"{'problem (bwd TF/s)':28} " + " ".join(f"{c[:13]:>13}" for c in cs))
for n, m in res.items():
    print(f"{n:28} " + " ".join(f"{'/'.join(f'{x:.0f}' for x in m[c]) if c in m else '-':>13}" for c in cs))
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
