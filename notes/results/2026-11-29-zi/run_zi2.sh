#!/usr/bin/env bash
# Session (zi), second call: the ordered dK/dV kernel writes dQ itself (DQ_CONVERTS: a converter
# warp turns each query tile's finished fp32 sums into dQ, the convert kernel writes only the
# zeros of unreached tiles). Stage in .gpu/zj/: flexjit_nb (main 4de3b33, name barriers),
# flexjit_cv (the working tree with DQ_CONVERTS), gpu_test_attention (working tree),
# suite.json (bench/), suite64x.json, this script.
#   1. A/B of the deterministic backward (tuning off: the ordered sums), two rounds alternating.
#   2. Side by side: the ordered and deterministic GPU tests in three processes; compute-sanitizer
#      memcheck and synccheck on OrderedModeOnePerHeadDim.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zi2}; r=/tmp/zi2r/r; mkdir -p $r $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
P=document_causal_d128,long_document_causal_d128,document_nested_causal_d128,causal_d128,noop_d128,sliding_window_d128,softcap_causal_d128,gqa_causal_d128
P64=document_causal_d64,causal_d64,noop_d64
bench() {  # binary tag
  for s in suite suite64x; do
    o=$P; f=suite.json; [ $s = suite64x ] && o=$P64 && f=suite64x.json
    FLEXJIT_CACHE_DIR=/tmp/fc_$1 timeout 150 ./$1 bench --suite $f --only $o --bwd-mode deterministic --json $r/b_$2_$s.jsonl > $r/b_$2_$s.log 2>&1
  done
  echo "$2 $(( $(date +%s) - t0 )) s"
}
bench flexjit_nb base_r1; bench flexjit_cv new_r1; bench flexjit_cv new_r2; bench flexjit_nb base_r2
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
grep -h "deterministic" $r/b_new_r1_suite.log | head -3
left=$(( 585 - ($(date +%s) - t0) ))
run_tests() {  # tag filter
  FLEXJIT_CACHE_DIR=/tmp/fc_$1 timeout $left ./gpu_test_attention --gtest_filter="$2" > $r/tests_$1.txt 2>&1
}
run_tests a 'BwdGpu.Ordered*:BwdGpu.DeterministicModeSumsDqInOrder:ErrorWordsGpu.*' &
run_tests b 'BwdGpu.FastAndDeterministicModes:BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits:BwdGpu.DeterministicModeTakesTheFasterWayPerCall:BwdGpu.DeterministicModeMeasuresTheWayWhenTuning:BwdGpu.TuningLaunchesLeaveNoDqBehind' &
run_tests c 'BwdGpu.SuiteMods:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.ShortSequencesWithAnOddGqaRatio:BwdGpu.Gqa8To1AndBshd:BwdGpu.FullyMaskedRowsGiveZeroGradients:BwdGpu.HeadDimsAndHalfPrecision' &
for tool in memcheck synccheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_$tool timeout $left compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.OrderedModeOnePerHeadDim > $r/san_$tool.txt 2>&1 &
done
wait
for f in $r/tests_*.txt; do echo "$(basename $f): $(grep -E '^\[       OK|^\[  FAILED|^\[  PASSED|^\[  SKIPPED' $f | sed 's/\[ *//;s/ *\]//' | tr '\n' ' ')"; done
for f in $r/san_*.txt; do echo "$(basename $f): $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $f | tr '\n' ' ')"; done
grep -h -B2 -A12 "Failure" $r/tests_*.txt | head -60
echo "$(( $(date +%s) - t0 )) s"
cd /tmp/zi2r && tar czf $out/zi2.tar.gz r
