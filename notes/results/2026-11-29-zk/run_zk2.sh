#!/usr/bin/env bash
# Session (zk), second call: the ascending turns under data-cut masks only
# (codegen::ordered_dq_ascending: documents or tables alone, no GQA), against main 7388526
# (flexjit_main), deterministic backward, two rounds alternating, tuning off: every row of zk1.
# Rows other than documents must be level (their kernels' PTX differs only in the walk's
# lambdas). Then the documents rows' fast mode and FlexAttention's Triton backward (peers.py).
# Stage in .gpu/<s>/: flexjit (this tree), flexjit_main, suite.json, suite64x.json,
# suite256.json, peers.py, compare.py, this script.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zk2}; r=/tmp/zk2r/r; mkdir -p $r $out
save() { (cd /tmp/zk2r && tar czf $out/zk2.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
D128=document_causal_d128,long_document_causal_d128,document_nested_causal_d128,causal_d128,noop_d128,sliding_window_d128,gqa_causal_d128,prefix_lm_d128,softcap_causal_d128,long_causal_d128
bench() {  # binary tag suite only
  FLEXJIT_CACHE_DIR=/tmp/fc_$1 timeout 120 ./$1 bench --suite $3 ${4:+--only $4} --bwd-mode deterministic --json $r/b_$2.jsonl > $r/b_$2.log 2>&1
  echo "$2 rc=$? $(( $(date +%s) - t0 )) s"
}
for round in 1 2; do
  order="flexjit_main flexjit"; [ $round = 2 ] && order="flexjit flexjit_main"
  for bin in $order; do
    bench $bin d128_${bin}_r$round suite.json $D128
    bench $bin d64_${bin}_r$round suite64x.json document_causal_d64,causal_d64,noop_d64,sliding_window_d64
    bench $bin d256_${bin}_r$round suite256.json ""
  done
done
save
DOCS=document_causal_d128,document_nested_causal_d128,long_document_causal_d128
FLEXJIT_CACHE_DIR=/tmp/fc_flexjit timeout 90 ./flexjit bench --suite suite.json --only $DOCS --json $r/fast_docs.jsonl > $r/fast_docs.log 2>&1; echo "fast rc=$? $(( $(date +%s) - t0 )) s"
export PYTHONUNBUFFERED=1
left=$(( 540 - ($(date +%s) - t0) ))
timeout $left python3 peers.py --suite suite.json --only $DOCS > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s $(grep -c bwd_tflops $r/peers.jsonl) rows"
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    m = re.search(r"b_d\d+_(flexjit\w*?)_r\d", f)
    for line in open(f):
        if line.startswith("{"):
            o = json.loads(line)
            if o.get("bwd_tflops"):
                rows[o["name"]]["main" if m.group(1) == "flexjit_main" else "new"].append(round(o["bwd_tflops"], 1))
print("deterministic backward TF/s: main 7388526 vs this tree")
for n, d in sorted(rows.items()):
    if d["main"] and d["new"]:
        print(f"{n:28s} main {d['main']} new {d['new']} x{statistics.mean(d['new']) / statistics.mean(d['main']):.3f}")
fast = {}
for line in open(f"{r}/fast_docs.jsonl"):
    if line.startswith("{"):
        o = json.loads(line)
        if o.get("name"): fast[o["name"]] = o.get("bwd_tflops")
peer = collections.defaultdict(dict)
for line in open(f"{r}/peers.jsonl"):
    if line.startswith("{"):
        o = json.loads(line)
        if o.get("bwd_tflops"): peer[o["name"]][o.get("system", "?")] = o["bwd_tflops"]
print("documents: new det, fast, det/fast, peers' backward")
for n, f in fast.items():
    d = statistics.mean(rows[n]["new"]) if rows[n]["new"] else 0
    print(f"{n:28s} det {d:6.1f} fast {f:6.1f} det/fast {d / f:.2f} peers {dict(peer[n])}")
PY
echo "$(( $(date +%s) - t0 )) s"
save
