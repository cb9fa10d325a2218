#!/usr/bin/env bash
# Session (zh) zh3: the ordered sums' chains again, now that a chain's first adder stores (no
# zeroing since "(zd)"): the deterministic backward with 1 (main's rule under masks), 2 and 4
# chains (flexjit_chains: FLEXJIT_EXP_CHAINS overrides codegen::ordered_dq_chains), rounds
# alternating, `FLEXJIT_AUTOTUNE=off`, FLEXJIT_DETERMINISTIC_DQ=ordered.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zh3}; r=$out/r; mkdir -p $r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off FLEXJIT_DETERMINISTIC_DQ=ordered
P=document_causal_d128,long_document_causal_d128,document_nested_causal_d128,causal_d128,sliding_window_d128,long_sliding_window_d128,long_causal_d128
P64=document_causal_d64,causal_d64,sliding_window_d64
bench() {  # tag chains
  for s in suite suite64x; do
    o=$P; f=../../bench/suite.json; [ $s = suite64x ] && o=$P64 && f=suite64x.json
    FLEXJIT_EXP_CHAINS=$2 FLEXJIT_CACHE_DIR=/tmp/fc_c$2 timeout 200 ./flexjit_chains bench --suite $f --only $o --bwd-mode deterministic --json $r/b_$1_$s.jsonl > $r/b_$1_$s.log 2>&1
  done
  echo "$1 rc=$? $(( $(date +%s) - t0 )) s"
}
bench c1_r1 1; bench c2_r1 2; bench c4_r1 4
bench c4_r2 4; bench c2_r2 2; bench c1_r2 1
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    tag = re.search(r"b_(c\d)_", f).group(1)
    for line in open(f):
        if not line.startswith("{"): continue
        o = json.loads(line)
        if o.get("bwd_tflops"): rows[o["name"]][tag].append(round(o["bwd_tflops"]))
for n, d in rows.items():
    print(f"{n:30s}", "  ".join(f"{t} {v}" for t, v in sorted(d.items())))
PY
cd $out && tar czf zh3.tar.gz r && rm -rf r
