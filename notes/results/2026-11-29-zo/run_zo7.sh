#!/usr/bin/env bash
# (zo) After cuda-gdb found the d128 writer's lanes 1-31 a phase behind on dq_full: main with the
# fix (only lane 0 waits for the staged dQ; tpl_mainfix, main's binary) against the ranker with
# the same fix (tpl_rankfix, the ranker branch's binary); deterministic, tuning off; the ranker's
# fast mode once (its slices writers changed too); a second ranker round; then ordered-mode GPU
# tests on the ranker's templates.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zo7}; r=/tmp/zo7r/r; mkdir -p $r $out
save() { (cd /tmp/zo7r && tar czf $out/zo7.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
run() {  # tag binary templates mode round
  local tag=$1 bin=$2 tpl=$3 mode=$4 round=$5
  for s in "suite256.json noop_d256,causal_d256,softcap_causal_d256,document_causal_d256,gqa_causal_d256" \
           "suite.json causal_d128,noop_d128,document_causal_d128,long_document_causal_d128,gqa_causal_d128" "suite64x.json causal_d64,noop_d64"; do
    set -- $s
    [ $(( $(date +%s) - t0 )) -gt 240 ] && { echo "skip $tag $1 r$round"; continue; }
    FLEXJIT_TEMPLATE_DIR=$PWD/$tpl FLEXJIT_CACHE_DIR=/tmp/fc7_$tag timeout 90 ../next_zo/$bin bench --suite ../next_zo/$1 --only $2 \
      --bwd-mode $mode --json $r/b_${tag}_${1%.json}_r$round.jsonl >> $r/b_${tag}.log 2>&1
    echo "$tag $1 r$round rc=$? $(( $(date +%s) - t0 )) s"
  done
}
run mainfix flexjit_main tpl_mainfix deterministic 1
run rankfix flexjit_ranker tpl_rankfix deterministic 1
run fastfix flexjit_ranker tpl_rankfix fast 1
save
run rankfix flexjit_ranker tpl_rankfix deterministic 2
save
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    v = re.search(r"b_(fastfix|mainfix|rankfix)_", f).group(1)
    for line in open(f):
        if line.startswith("{"):
            o = json.loads(line)
            if o.get("bwd_tflops"): rows[o["name"]][v].append(round(o["bwd_tflops"], 1))
for n, d in sorted(rows.items()):
    m = statistics.mean(d["mainfix"]) if d["mainfix"] else float("nan")
    k = statistics.mean(d["rankfix"]) if d["rankfix"] else float("nan")
    f = statistics.mean(d["fastfix"]) if d["fastfix"] else float("nan")
    print(f"{n:28s} main+fix {d['mainfix']} ranker+fix {d['rankfix']} x{k / m:.3f} fast {d['fastfix']} det/fast {k / f:.2f}")
PY
left=$(( 400 - ($(date +%s) - t0) )); [ $left -gt 140 ] && left=140
echo "tests with ${left} s"
g1='BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.FastAndDeterministicModes'
g2='BwdGpu.OrderedModeChainsAtHeadDim256:BwdGpu.OrderedModeMoreKvTilesThanResidentCtas:BwdGpu.OrderedModeAscendingPairsBesideADescendingTail'
FLEXJIT_TEMPLATE_DIR=$PWD/tpl_rankfix FLEXJIT_CACHE_DIR=/tmp/fct1 timeout $left ../next_zo/gpu_test_attention --gtest_filter=$g1 > $r/t1.log 2>&1 &
FLEXJIT_TEMPLATE_DIR=$PWD/tpl_rankfix FLEXJIT_CACHE_DIR=/tmp/fct2 timeout $left ../next_zo/gpu_test_attention --gtest_filter=$g2 > $r/t2.log 2>&1 &
wait
grep -hE "^\[ +(OK|FAILED) +\]|PASSED|FAILED" $r/t1.log $r/t2.log | tail -20
echo "$(( $(date +%s) - t0 )) s"
save
