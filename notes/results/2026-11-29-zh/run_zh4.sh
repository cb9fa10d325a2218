#!/usr/bin/env bash
# Session (zh) zh4: two chains only for query tiles with 16 adders or more (the kernel's
# LONG_CHAIN), every other tile one chain, every non-GQA ordered kernel with two accumulator
# copies. A/B of the deterministic backward's ordered sums (FLEXJIT_DETERMINISTIC_DQ=ordered),
# main (flexjit) against the working tree (flexjit_new), two rounds alternating,
# `FLEXJIT_AUTOTUNE=off`; then the ordered-mode GPU tests and compute-sanitizer memcheck and
# synccheck on the new build, side by side.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zh4}; r=$out/r; mkdir -p $r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off FLEXJIT_DETERMINISTIC_DQ=ordered
P=document_causal_d128,long_document_causal_d128,document_nested_causal_d128,causal_d128,sliding_window_d128,long_sliding_window_d128,long_causal_d128,prefix_lm_d128,noop_d128,softcap_causal_d128
P64=document_causal_d64,causal_d64,sliding_window_d64,noop_d64
bench() {  # binary tag
  for s in suite suite64x; do
    o=$P; f=../../bench/suite.json; [ $s = suite64x ] && o=$P64 && f=suite64x.json
    FLEXJIT_CACHE_DIR=/tmp/fc_$1 timeout 200 ./$1 bench --suite $f --only $o --bwd-mode deterministic --json $r/b_$2_$s.jsonl > $r/b_$2_$s.log 2>&1
  done
  echo "$2 rc=$? $(( $(date +%s) - t0 )) s"
}
bench flexjit base_r1; bench flexjit_new new_r1; bench flexjit_new new_r2; bench flexjit base_r2
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    tag = re.search(r"b_(base|new)_", f).group(1)
    for line in open(f):
        if not line.startswith("{"): continue
        o = json.loads(line)
        if o.get("bwd_tflops"): rows[o["name"]][tag].append(round(o["bwd_tflops"], 1))
for n, d in rows.items():
    b, w = d["base"], d["new"]
    if b and w: print(f"{n:30s} base {b} new {w} x{statistics.mean(w) / statistics.mean(b):.3f}")
PY
export -n FLEXJIT_DETERMINISTIC_DQ
FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 330 ./gpu_test_attention --gtest_filter='BwdGpu.OrderedModeSplitsLongChains:BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.FastAndDeterministicModes:BwdGpu.OrderedModeNamesEachTileAfterItLands:BwdGpu.OrderedModeWritesDqOfQueryTilesNoKeyReaches:BwdGpu.DeterministicModeMeasuresTheWayWhenTuning' > $r/tests.txt 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/fc_s timeout 330 compute-sanitizer --tool memcheck --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.OrderedModeOnePerHeadDim > $r/san_memcheck.txt 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/fc_y timeout 330 compute-sanitizer --tool synccheck --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.OrderedModeOnePerHeadDim > $r/san_synccheck.txt 2>&1 &
wait
echo "tests: $(grep -E '^\[  (PASSED|FAILED) |^\[       OK|^\[  FAILED' $r/tests.txt | tr '\n' ' ')"
grep -B3 -A3 "Failure" $r/tests.txt | head -30
echo "memcheck: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $r/san_memcheck.txt | tr '\n' ' ')"
echo "synccheck: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $r/san_synccheck.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
cd $out && tar czf zh4.tar.gz r && rm -rf r
