#!/usr/bin/env bash
# Session (zm), fifth call: the landing run for the chains rule (one chain where the ordered sums
# ascend), one call.
# 1. The GPU tests zm4 did not reach (its second group ran past its time): the ascending pairs
#    beside a descending tail (documents d256 now one chain), more kv tiles than resident CTAs
#    (d256), the deterministic way per call.
# 2. Then, nothing else on the GPU, tuning off: the deterministic backward, main before (flexjit_old,
#    2be74de, SASS as de38106) against the new build, two rounds alternating, on the rows whose
#    kernels change (d256 under masks, long documents) and controls; the new build's forward, fast
#    and deterministic backward on the suite's attention problems; then peers.py (SDPA's cuDNN and
#    FA2, FlexAttention Triton) and compare.py on the same rows.
# Stage in .gpu/<s>/: flexjit, flexjit_old, gpu_test_attention, suite.json, suite256.json,
# peers.py, compare.py, this script.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zm5}; r=/tmp/zm5r/r; mkdir -p $r $out
save() { (cd /tmp/zm5r && tar czf $out/zm5.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_ta timeout 110 ./gpu_test_attention --gtest_filter='BwdGpu.OrderedModeAscendingPairsBesideADescendingTail' > $r/tests_a.txt 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/fc_tb timeout 110 ./gpu_test_attention --gtest_filter='BwdGpu.OrderedModeMoreKvTilesThanResidentCtas:BwdGpu.DeterministicModeTakesTheFasterWayPerCall' > $r/tests_b.txt 2>&1 &
wait
for f in $r/tests_*.txt; do echo "$(basename $f): $(grep -E '^\[  FAILED|^\[  PASSED' $f | tr '\n' ' ') ok=$(grep -c '^\[       OK' $f)"; done
grep -h -B2 -A12 "Failure" $r/tests_*.txt | head -40
echo "tests done $(( $(date +%s) - t0 )) s"; save
export FLEXJIT_AUTOTUNE=off
for round in 1 2; do
  order="flexjit_old flexjit"; [ $round = 2 ] && order="flexjit flexjit_old"
  for bin in $order; do
    FLEXJIT_CACHE_DIR=/tmp/fc_$bin timeout 60 ./$bin bench --suite suite256.json --bwd-mode deterministic --json $r/ab_${bin}_r$round.jsonl > $r/ab_${bin}.log 2>&1
    FLEXJIT_CACHE_DIR=/tmp/fc_$bin timeout 60 ./$bin bench --suite suite.json --only long_document_causal_d128,document_causal_d128,causal_d128 --bwd-mode deterministic --json $r/ab_${bin}_s_r$round.jsonl >> $r/ab_${bin}.log 2>&1
    echo "ab $bin r$round $(( $(date +%s) - t0 )) s"
  done
done
save
ONLY=causal_d256,long_document_causal_d128,document_causal_d128,causal_d64,causal_d128,noop_d128,noop_d64,gqa_causal_d128,long_causal_d128,document_nested_causal_d128,sliding_window_d128,prefix_lm_d128,alibi_causal_d128,softcap_causal_d128,long_sliding_window_d128
FLEXJIT_CACHE_DIR=/tmp/fc_flexjit timeout 120 ./flexjit bench --suite suite.json --only $ONLY --json $r/flexjit.jsonl > $r/flexjit.log 2>&1; echo "fast rc=$? $(( $(date +%s) - t0 )) s"
FLEXJIT_CACHE_DIR=/tmp/fc_flexjit timeout 100 ./flexjit bench --suite suite.json --only $ONLY --bwd-mode deterministic --json $r/flexjit_det.jsonl > $r/flexjit_det.log 2>&1; echo "det rc=$? $(( $(date +%s) - t0 )) s"
save
export PYTHONUNBUFFERED=1
left=$(( 480 - ($(date +%s) - t0) ))
timeout $left python3 peers.py --suite suite.json --only $ONLY > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s $(grep -c fwd_tflops $r/peers.jsonl) rows"
python3 compare.py $r/flexjit.jsonl $r/peers.jsonl > $r/compare.txt 2>&1; head -40 $r/compare.txt
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, collections, statistics
r = sys.argv[1]
def rows(path, key="bwd_tflops"):
    out = collections.defaultdict(list)
    for f in sorted(glob.glob(path)):
        for line in open(f):
            if line.startswith("{"):
                o = json.loads(line)
                if o.get(key): out[o["name"]].append(round(o[key], 1))
    return out
new, old = rows(f"{r}/ab_flexjit_r*.jsonl"), rows(f"{r}/ab_flexjit_old_r*.jsonl")
for n, v in rows(f"{r}/ab_flexjit_s_r*.jsonl").items(): new[n] += v
for n, v in rows(f"{r}/ab_flexjit_old_s_r*.jsonl").items(): old[n] += v
print("deterministic backward, new against main before (two rounds)")
for n in new:
    if old.get(n): print(f"{n:30s} old {old[n]} new {new[n]} x{statistics.mean(new[n]) / statistics.mean(old[n]):.3f}")
fwd, fast, det = rows(f"{r}/flexjit.jsonl", "fwd_tflops"), rows(f"{r}/flexjit.jsonl"), rows(f"{r}/flexjit_det.jsonl")
peer = collections.defaultdict(dict)
for line in open(f"{r}/peers.jsonl"):
    if line.startswith("{"):
        o = json.loads(line)
        peer[o["name"]][o.get("system", "?")] = (o.get("fwd_tflops"), o.get("bwd_tflops"))
print("problem fwd fast det det/fast | peers (fwd / bwd)")
for n in fast:
    f, d = fast[n][0], det.get(n, [0])[0]
    ps = " ".join(f"{s} {a or 0:.0f}/{b or 0:.0f}" for s, (a, b) in sorted(peer.get(n, {}).items()))
    print(f"{n:30s} {fwd[n][0]:6.1f} {f:6.1f} {d:6.1f} {d / f:5.2f} | {ps}")
PY
echo "$(( $(date +%s) - t0 )) s"
save
