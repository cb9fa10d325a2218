#!/usr/bin/env bash
# Session (zj), second call. 1. A/B, deterministic backward, two rounds with the order
# alternating, tuning off: main 81499df (the d256 ordered kernels stage dQ's second piece in the Q
# stage) against flexjit_ov (zj-held-turn-d128: the ordered writers hold a tile's turn until the
# next tile's first share is issued, HeldTurn), on suite256.json, the d128 problems of suite.json
# and two d64 ones. 2. GPU tests: flexjit_ov's test binary (groups a, b, c; memcheck and
# synccheck on the ordered one-per-head-dim test) and main's (group a, synccheck), so whichever
# wins has its tests. Stage in .gpu/zo/: flexjit, flexjit_ov, gpu_test_attention(_ov), suites.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zj2}; r=/tmp/zj2r/r; mkdir -p $r $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
D128=document_causal_d128,long_document_causal_d128,document_nested_causal_d128,causal_d128,noop_d128,sliding_window_d128,gqa_causal_d128
bench() {  # binary tag suite only
  FLEXJIT_CACHE_DIR=/tmp/fc_$1 timeout 100 ./$1 bench --suite $3 ${4:+--only $4} --bwd-mode deterministic --json $r/b_$2.jsonl > $r/b_$2.log 2>&1
  echo "$2 rc=$? $(( $(date +%s) - t0 )) s"
}
for round in 1 2; do
  order="flexjit flexjit_ov"; [ $round = 2 ] && order="flexjit_ov flexjit"
  for bin in $order; do
    bench $bin d256_${bin}_r$round suite256.json ""
    bench $bin d128_${bin}_r$round suite.json $D128
    bench $bin d64_${bin}_r$round suite64x.json document_causal_d64,causal_d64,noop_d64
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
echo "bench done $(( $(date +%s) - t0 )) s"
left=$(( 560 - ($(date +%s) - t0) ))
run_tests() {  # binary tag filter
  FLEXJIT_CACHE_DIR=/tmp/fc_$2 timeout $left ./$1 --gtest_filter="$3" > $r/tests_$2.txt 2>&1
}
A='BwdGpu.Ordered*:BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches:BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits'
run_tests gpu_test_attention_ov ov_a "$A" &
run_tests gpu_test_attention_ov ov_b 'BwdGpu.FastAndDeterministicModes:BwdGpu.HeadDimsAndHalfPrecision:BwdGpu.DeterministicModeTakesTheFasterWayPerCall' &
run_tests gpu_test_attention_ov ov_c 'BwdGpu.SuiteMods:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.Gqa8To1AndBshd:BwdGpu.FullyMaskedRowsGiveZeroGradients:BwdGpu.ShortSequencesWithAnOddGqaRatio' &
run_tests gpu_test_attention ps_a "$A" &
for tool in memcheck synccheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_$tool timeout $left compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention_ov --gtest_filter=BwdGpu.OrderedModeOnePerHeadDim > $r/san_ov_$tool.txt 2>&1 &
done
FLEXJIT_CACHE_DIR=/tmp/fc_ps_sync timeout $left compute-sanitizer --tool synccheck --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.OrderedModeOnePerHeadDim > $r/san_ps_synccheck.txt 2>&1 &
wait
for f in $r/tests_*.txt; do echo "$(basename $f): $(grep -E '^\[  FAILED|^\[  PASSED' $f | sed 's/\[ *//;s/ *\]//' | tr '\n' ' ') ok=$(grep -c '^\[       OK' $f)"; done
for f in $r/san_*.txt; do echo "$(basename $f): $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $f | tr '\n' ' ')"; done
grep -h -B2 -A12 "Failure" $r/tests_*.txt | head -60
echo "$(( $(date +%s) - t0 )) s"
cd /tmp/zj2r && tar czf $out/zj2.tar.gz r
