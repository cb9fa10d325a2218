#!/usr/bin/env bash
# For the next session's first call (zj1), prepared in (zi), compiled but not run: two A/Bs
# against main, two rounds each, the order alternating, tuning off. Tests and sanitizers for
# whichever wins: run_zj2_next.sh.
# 1. zj_d256_ordered_piece_in_stage.patch (flexjit_ps): the deterministic mode's d256 kernels
#    (column slices) stage dQ's second piece in the tile's Q stage, as the fast mode's do under
#    masks or modified scores, so the consumers no longer wait for the ordered writer's turn
#    between the pieces (at d256 the ordered sums run 0.53x the fast mode under causal: zi3,
#    zi4). ptxas (NVRTC 13.0): 8 more spilled bytes (causal, soft-capping 64 -> 72, GQA 100 -> 108).
# 2. zj_convert_reversed.patch (flexjit_cr): the dQ convert kernel walks its grid backwards, so
#    it starts on the (batch, head) pairs the dK/dV kernel summed last, whose fp32 sums L2 may
#    still hold. Both backward modes.
# 3. zj_d64_three_buffers.patch (flexjit_tb): the deterministic mode's d64 kernels take three dQ
#    staging buffers and three ordered writers where they fit (shared memory 150304 -> 166688
#    bytes at m64n128w8s3ws), so the writers can fall a tile further behind the turns of document
#    masks before the consumers wait. Spills unchanged.
# Stage in .gpu/<s>/: flexjit (main), flexjit_ps, flexjit_cr, flexjit_tb, suite.json (bench/),
# suite64x.json (notes/results/2026-11-26-p/), suite256.json (notes/results/2026-11-26-n/).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zj1}; r=/tmp/zj1r/r; mkdir -p $r $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
D128=document_causal_d128,long_document_causal_d128,causal_d128,noop_d128
bench() {  # binary tag suite only mode
  FLEXJIT_CACHE_DIR=/tmp/fc_$1 timeout 100 ./$1 bench --suite $3 ${4:+--only $4} --bwd-mode $5 --json $r/b_$2.jsonl > $r/b_$2.log 2>&1
  echo "$2 rc=$? $(( $(date +%s) - t0 )) s"
}
for round in 1 2; do
  order="flexjit flexjit_ps"; [ $round = 2 ] && order="flexjit_ps flexjit"
  for bin in $order; do bench $bin ps_${bin}_r$round suite256.json "" deterministic; done
done
for round in 1 2; do
  order="flexjit flexjit_cr"; [ $round = 2 ] && order="flexjit_cr flexjit"
  for bin in $order; do
    for mode in fast deterministic; do
      bench $bin cr_${bin}_${mode}_r$round suite.json $D128 $mode
      bench $bin cr64_${bin}_${mode}_r$round suite64x.json document_causal_d64,causal_d64 $mode
    done
  done
done
for round in 1 2; do
  order="flexjit flexjit_tb"; [ $round = 2 ] && order="flexjit_tb flexjit"
  for bin in $order; do bench $bin tb_${bin}_r$round suite64x.json "" deterministic; done
done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    m = re.search(r"b_(ps|cr|cr64|tb)_(flexjit\w*?)_(?:(fast|deterministic)_)?r\d", f)
    exp = "cr" if m.group(1) == "cr64" else m.group(1)
    for line in open(f):
        if line.startswith("{"):
            o = json.loads(line)
            if o.get("bwd_tflops"):
                key = (exp, o["name"], m.group(3) or "deterministic")
                rows[key]["base" if m.group(2) == "flexjit" else "new"].append(round(o["bwd_tflops"], 1))
for (exp, n, mode), d in sorted(rows.items()):
    if d["base"] and d["new"]:
        print(f"{exp} {n:28s} {mode:13s} base {d['base']} new {d['new']} x{statistics.mean(d['new']) / statistics.mean(d['base']):.3f}")
PY
echo "$(( $(date +%s) - t0 )) s"
cd /tmp/zj1r && tar czf $out/zj1.tar.gz r
