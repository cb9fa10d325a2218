#!/usr/bin/env bash
# Session (zi), first call: (zh)'s two prepared runs in one.
# Stage in .gpu/zi/: flexjit and gpu_test_attention (main 3c3d8ab), flexjit_new and
# gpu_test_attention_new (branch zi-name-barriers: one mbarrier per tile-name entry in the ordered
# dK/dV kernel), suite64x.json (notes/results/2026-11-26-p/), this script.
#   1. A/B of the deterministic backward with the ordered sums, main against the name barriers,
#      two rounds alternating, nothing else on the GPU.
#   2. Then, side by side: the tests (zh) changed without a GPU run (OwnedStream) and the ordered
#      tests on the new build; compute-sanitizer memcheck and synccheck on the new build's
#      OrderedModeOnePerHeadDim and on main's OrderedModeLongDocumentsTakeTwoChains.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zi1}; r=/tmp/zi1r/r; mkdir -p $r $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off FLEXJIT_DETERMINISTIC_DQ=ordered
P=document_causal_d128,long_document_causal_d128,document_nested_causal_d128,causal_d128,sliding_window_d128,softcap_causal_d128,prefix_lm_d128
P64=document_causal_d64,causal_d64,sliding_window_d64
bench() {  # binary tag
  for s in suite suite64x; do
    o=$P; f=../../bench/suite.json; [ $s = suite64x ] && o=$P64 && f=suite64x.json
    FLEXJIT_CACHE_DIR=/tmp/fc_$1 timeout 150 ./$1 bench --suite $f --only $o --bwd-mode deterministic --json $r/b_$2_$s.jsonl > $r/b_$2_$s.log 2>&1
  done
  echo "$2 $(( $(date +%s) - t0 )) s"
}
bench flexjit base_r1; bench flexjit_new new_r1; bench flexjit_new new_r2; bench flexjit base_r2
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    tag = re.search(r"b_(base|new)_", f).group(1)
    for line in open(f):
        if line.startswith("{"):
            o = json.loads(line)
            if o.get("bwd_tflops"): rows[o["name"]][tag].append(round(o["bwd_tflops"], 1))
for n, d in rows.items():
    if d["base"] and d["new"]: print(f"{n:30s} base {d['base']} new {d['new']} x{statistics.mean(d['new']) / statistics.mean(d['base']):.3f}")
PY
export -n FLEXJIT_DETERMINISTIC_DQ
left=$(( 585 - ($(date +%s) - t0) ))
FLEXJIT_CACHE_DIR=/tmp/fc_t timeout $left ./gpu_test_attention_new --gtest_filter='BwdGpu.OrderedMode*:BwdGpu.DeterministicMode*:BwdGpu.LaterWorkOnTheCallersStreamSeesEveryGradient:BwdGpu.CapturedInAGraphAndReplayedGivesTheSameGradients:ErrorWordsGpu.*' > $r/tests.txt 2>&1 &
for tool in memcheck synccheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_n$tool timeout $left compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention_new --gtest_filter=BwdGpu.OrderedModeOnePerHeadDim > $r/san_new_$tool.txt 2>&1 &
  FLEXJIT_CACHE_DIR=/tmp/fc_m$tool timeout $left compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.OrderedModeLongDocumentsTakeTwoChains > $r/san_main_$tool.txt 2>&1 &
done
wait
echo "tests: $(grep -E '^\[       OK|^\[  FAILED|^\[  PASSED|^\[  SKIPPED' $r/tests.txt | sed 's/\[ *//;s/ *\]//' | tr '\n' ' ')"
for f in $r/san_*.txt; do echo "$(basename $f): $(grep -E 'ERROR SUMMARY|PASSED|FAILED|OK \]' $f | tr '\n' ' ')"; done
echo "$(( $(date +%s) - t0 )) s"
cd /tmp/zi1r && tar czf $out/zi1.tar.gz r
