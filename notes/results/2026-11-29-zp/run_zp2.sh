#!/usr/bin/env bash
# (zp) call 2, one call, about 560 s. Branch zp-ranker256: the ranker (warp 3 counts each ordered
# tile's rank) and the whole-warp wait + __syncwarp in the slices' writers, at head dim > 128 only;
# d64/d128 kernels are SASS-identical to main's (nvdisasm). Part A, alone on the GPU: the
# deterministic d256 rows, two rounds, four variants:
#   new       flexjit_new (zp-ranker256)
#   rk_lane0  flexjit_ranker + tpl_znranker (the ranker with the lane-0 wait: at d256 the same
#             kernel as new but for the writers' wait)
#   lane0     flexjit_main (main 29f9bf8)
#   old       flexjit_main + tpl_79d2628 (before 29f9bf8)
# and the fast mode's d256 rows (its slices' writers changed too) for new, lane0 and old.
# Part B, side by side: the ordered tests g1 and the fast per-head-dim test on new; the stress
# test on new and on the old templates (does it catch the lost phase there?).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zp2}; r=/tmp/zp2r/r; mkdir -p $r $out
save() { (cd /tmp/zp2r && tar czf $out/zp2.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} 
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
D256="noop_d256,causal_d256,softcap_causal_d256,document_causal_d256,gqa_causal_d256"
F256="noop_d256,causal_d256,gqa_causal_d256"
bench() {  # tag round mode only
  local tag=$1 round=$2 mode=$3 only=$4 bin tpl=""
  case $tag in
    new) bin=flexjit_new ;; lane0) bin=flexjit_main ;; old) bin=flexjit_main tpl=tpl_79d2628 ;;
    rk_lane0) bin=flexjit_ranker tpl=tpl_znranker ;;
  esac
  FLEXJIT_AUTOTUNE=off FLEXJIT_TEMPLATE_DIR=${tpl:+$PWD/$tpl} FLEXJIT_CACHE_DIR=/tmp/fcp_$tag timeout 60 ./$bin bench --suite suite256.json --only $only \
    --bwd-mode $mode --json $r/b_${tag}_${mode}_r$round.jsonl >> $r/b_$tag.log 2>&1
  echo "$tag $mode r$round rc=$? $(( $(date +%s) - t0 )) s"
}
for v in new rk_lane0 lane0 old; do bench $v 1 deterministic $D256; done
for v in old lane0 rk_lane0 new; do bench $v 2 deterministic $D256; done
for v in new lane0 old; do bench $v 1 fast $F256; done
save
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
tags = ["old", "lane0", "rk_lane0", "new"]
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    m = re.search(r"b_(rk_lane0|lane0|old|new)_(fast|deterministic)_", f)
    for line in open(f):
        if line.startswith("{"):
            o = json.loads(line)
            if o.get("bwd_tflops"): rows[(m.group(2), o["name"])][m.group(1)].append(round(o["bwd_tflops"], 1))
print("backward TF/s, mean per variant, ratio to old (values)")
for (mode, n), d in sorted(rows.items()):
    old = statistics.mean(d["old"]) if d["old"] else float("nan")
    cells = [f"{t} {statistics.mean(d[t]):.1f} x{statistics.mean(d[t]) / old:.3f} {d[t]}" for t in tags if d[t]]
    print(f"{mode:13s} {n:22s} " + " | ".join(cells))
PY
echo "part A $(( $(date +%s) - t0 )) s"
left=$(( 575 - ($(date +%s) - t0) ))
stress=BwdGpu.OrderedModeManyLaunchesOfProblemsWithLongWalks
g1='BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.OrderedModeChainsAtHeadDim256:BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeWritesDqOfQueryTilesNoKeyReaches'
FLEXJIT_CACHE_DIR=/tmp/ft1 timeout $left ./gpu_test_new --gtest_filter=$g1 > $out/g1_new.log 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/fs1 timeout $left ./gpu_test_new --gtest_filter=$stress > $out/stress_new.log 2>&1 &
FLEXJIT_TEMPLATE_DIR=$PWD/tpl_79d2628 FLEXJIT_CACHE_DIR=/tmp/fs2 timeout $(( left < 240 ? left : 240 )) ./gpu_test_attention --gtest_filter=$stress > $out/stress_old.log 2>&1 &
wait
for f in $out/*.log; do echo "$(basename $f): $(grep -cE '^\[       OK' $f) ok, $(grep -cE '^\[  FAILED  \] [A-Z]' $f) failed, last: $(grep -E '^\[ +(RUN|OK|FAILED) +\]' $f | tail -1)"; done
grep -hE '^\[ +(OK|FAILED) +\]' $out/*.log
echo "$(( $(date +%s) - t0 )) s"
save
