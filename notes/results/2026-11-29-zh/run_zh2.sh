#!/usr/bin/env bash
# Session (zh) zh2: what the deterministic documents backward's ordered sums cost in turns. The
# three ways side by side (fast, the dQ kernel, the ordered sums), then the ordered sums with
# the turns' waits removed (tB: wait_for_turn returns at once; timing only, its sums are not in
# order and its counters are left dirty), two rounds alternating, `FLEXJIT_AUTOTUNE=off`.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zh2}; r=$out/r; mkdir -p $r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
P=document_causal_d128,long_document_causal_d128,document_nested_causal_d128,causal_d128
bench() {  # tag suite only mode dqway [template dir]
  FLEXJIT_TEMPLATE_DIR=${6:-} FLEXJIT_DETERMINISTIC_DQ=$5 FLEXJIT_CACHE_DIR=/tmp/fc_$1 timeout 150 ./flexjit bench --suite $2 --only $3 --bwd-mode $4 --json $r/b_$1.jsonl > $r/b_$1.log 2>&1
  echo "$1 rc=$? $(( $(date +%s) - t0 )) s"
}
for round in 1 2; do
  bench fast_r$round ../../bench/suite.json $P fast auto
  bench kernel_r$round ../../bench/suite.json $P deterministic kernel
  if [ $round = 1 ]; then bench ordered_r$round ../../bench/suite.json $P deterministic ordered; bench nowait_r$round ../../bench/suite.json $P deterministic ordered $PWD/tB
  else bench nowait_r$round ../../bench/suite.json $P deterministic ordered $PWD/tB; bench ordered_r$round ../../bench/suite.json $P deterministic ordered; fi
done
bench d64fast suite64x.json document_causal_d64 fast auto
bench d64kernel suite64x.json document_causal_d64 deterministic kernel
bench d64ordered suite64x.json document_causal_d64 deterministic ordered
bench d64nowait suite64x.json document_causal_d64 deterministic ordered $PWD/tB
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections
r = sys.argv[1]
rows = collections.defaultdict(dict)
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    tag = re.search(r"b_(.*)\.jsonl", f).group(1)
    for line in open(f):
        if not line.startswith("{"): continue
        o = json.loads(line)
        if o.get("bwd_tflops"): rows[o["name"]][tag] = (round(o["bwd_tflops"]), o.get("bwd_mode", ""), o.get("bwd_configs", ""))
for n, d in rows.items():
    print(n)
    for tag, v in sorted(d.items()): print(f"   {tag:14s} {v}")
PY
cd $out && tar czf zh2.tar.gz r && rm -rf r
