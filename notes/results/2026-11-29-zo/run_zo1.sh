#!/usr/bin/env bash
# For the next session's first call, prepared in (zn), not run: the ranker (branch zn-ranker: warp 3
# counts each tile's rank into a ring in shared memory as soon as the producer names the tile,
# so dq_order_rank's L2 reads leave the writers' path) against main (2b58a5a, the early-look
# writers). Deterministic backward, tuning off, two rounds alternating; the fast mode once (ranker
# build, whose fast kernels are main's). Stage in .gpu/<s>/: flexjit_main, flexjit_ranker,
# suite.json, suite256.json, suite64x.json, peers.py, compare.py (../shared/bench), this script.
# Then the peers on the same rows in the same call (SDPA's cuDNN and FA2, FlexAttention Triton),
# as the landing checklist asks. About 200 s + 150 s.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zo1}; r=/tmp/zo1r/r; mkdir -p $r $out
save() { (cd /tmp/zo1r && tar czf $out/zo1.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
run() {  # tag binary mode
  local tag=$1 bin=$2 mode=$3
  for s in "suite256.json noop_d256,causal_d256,softcap_causal_d256,document_causal_d256,gqa_causal_d256" \
           "suite.json causal_d128,noop_d128,document_causal_d128,long_document_causal_d128,gqa_causal_d128" "suite64x.json causal_d64,noop_d64"; do
    set -- $s
    [ $(( $(date +%s) - t0 )) -gt 400 ] && return
    FLEXJIT_CACHE_DIR=/tmp/fc_$tag timeout 100 ./$bin bench --suite $1 --only $2 \
      --bwd-mode $mode --json $r/b_${tag}_${1%.json}_r$round.jsonl >> $r/b_${tag}.log 2>&1
    echo "$tag $1 r$round rc=$? $(( $(date +%s) - t0 )) s"
  done
}
round=1; run fast flexjit_ranker fast
for round in 1 2; do
  order="main ranker"; [ $round = 2 ] && order="ranker main"
  for v in $order; do run $v flexjit_$v deterministic; done
  save
done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    v = re.search(r"b_(fast|main|ranker)_", f).group(1)
    for line in open(f):
        if line.startswith("{"):
            o = json.loads(line)
            if o.get("bwd_tflops"): rows[o["name"]][v].append(round(o["bwd_tflops"], 1))
print("backward TF/s, deterministic: main, ranker (ratio of means to main); fast; ranker / fast")
for n, d in sorted(rows.items()):
    if d["main"] and d["ranker"]:
        m, k = statistics.mean(d["main"]), statistics.mean(d["ranker"])
        f = statistics.mean(d["fast"]) if d["fast"] else float("nan")
        print(f"{n:28s} main {d['main']} ranker {d['ranker']} x{k / m:.3f} fast {d['fast']} det/fast {k / f:.2f}")
PY
echo "$(( $(date +%s) - t0 )) s"
save
# The peers on the same rows, same call (no flexjit work runs beside them).
for s in "suite256.json noop_d256,causal_d256,softcap_causal_d256,document_causal_d256,gqa_causal_d256" \
         "suite.json causal_d128,noop_d128,document_causal_d128,long_document_causal_d128,gqa_causal_d128" \
         "suite64x.json causal_d64,noop_d64"; do
  set -- $s
  left=$(( 560 - ($(date +%s) - t0) )); [ $left -lt 30 ] && break
  timeout $left python3 peers.py --suite $1 --only $2 > $r/peers_${1%.json}.jsonl 2> $r/peers_${1%.json}.err || tail -3 $r/peers_${1%.json}.err
  echo "peers $1 $(( $(date +%s) - t0 )) s $(grep -c bwd_tflops $r/peers_${1%.json}.jsonl) rows"
done
python3 - $r <<'PY' | tee $r/peers_summary.txt
import json, sys, glob
for f in sorted(glob.glob(f"{sys.argv[1]}/peers_*.jsonl")):
    for line in open(f):
        if line.startswith("{") and '"name"' in line:
            o = json.loads(line)
            print(f"{o['name']:28s} {o.get('system', '?'):24s} fwd {o.get('fwd_tflops')} bwd {o.get('bwd_tflops')}")
PY
save
