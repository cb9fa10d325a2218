#!/usr/bin/env bash
# For the next session's first call (zk1), prepared in (zj), compiled but not run.
# zk_ascending_turns.patch (flexjit_asc): the ordered sums admit a query tile's adders from the
# highest kv tile down (rank = the chain's kv tiles above), the producer's walk ascends, and the
# ordered kernels' units launch in reverse (a pair's kv tile n + 1 before n, which the waits now
# rely on). Under causal, sliding-window and document masks a kv tile's walk starts at its
# diagonal, so kv tile n adds at step s what kv tile n + 1 added at step s - 1: a pipeline, where
# the descending walks queued every adder of a chain at their common first tile (the last adder
# of a chain of r waited r turns before its first add; zj2 showed that a turn's hand-over
# latency is on the chains' critical path). Unmasked problems keep the queue (all walks start at
# query tile 0): expect noop level. The light-first launch order may cost the tails what heavy-
# first won in (o) (1.03-1.07x): the A/B shows the net.
# ptxas (NVRTC 13.0): spills unchanged at d64 and d128, +8 bytes at d256. The fast mode's PTX is
# unchanged (d64 documents, d128 causal, d128 GQA 8:1, d256 causal; .loc lines aside).
# A/B, deterministic backward, two rounds alternating, tuning off. Stage in .gpu/<s>/: flexjit
# (main), flexjit_asc (main + the patch), suite.json (bench/), suite64x.json
# (notes/results/2026-11-26-p/), suite256.json (notes/results/2026-11-26-n/). Then the tests:
# run_zj2.sh's groups with gpu_test_attention built with the patch, plus racecheck.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zk1}; r=/tmp/zk1r/r; mkdir -p $r $out
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
  order="flexjit flexjit_asc"; [ $round = 2 ] && order="flexjit_asc flexjit"
  for bin in $order; do
    bench $bin d128_${bin}_r$round suite.json $D128
    bench $bin d64_${bin}_r$round suite64x.json document_causal_d64,causal_d64,noop_d64,sliding_window_d64
    bench $bin d256_${bin}_r$round suite256.json ""
  done
done
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
                rows[o["name"]]["base" if m.group(1) == "flexjit" else "new"].append(round(o["bwd_tflops"], 1))
for n, d in sorted(rows.items()):
    if d["base"] and d["new"]:
        print(f"{n:28s} base {d['base']} new {d['new']} x{statistics.mean(d['new']) / statistics.mean(d['base']):.3f}")
PY
echo "$(( $(date +%s) - t0 )) s"
cd /tmp/zk1r && tar czf $out/zk1.tar.gz r
