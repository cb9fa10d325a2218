#!/usr/bin/env bash
# Session (zh) zh5, the landing call: two chains for document-like masks over 64 kv tiles or more
# (codegen::ordered_long_chains) and the ordered sums for every mask where chains fit (the rule of
# FLEXJIT_DETERMINISTIC_DQ=auto with tuning off). A/B of the deterministic backward as a user gets
# it (auto, `FLEXJIT_AUTOTUNE=off`), main (flexjit) against the working tree (flexjit_new), two
# rounds alternating; then the GPU tests of the deterministic way and its chains on the new build
# (DeterministicModeSumsDqInOrder, whose kernels this leaves as they were, not run: the budget).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zh5}; r=$out/r; mkdir -p $r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
P=document_causal_d128,long_document_causal_d128,document_nested_causal_d128,causal_d128
bench() {  # binary tag
  for s in suite suite64x; do
    o=$P; f=../../bench/suite.json; [ $s = suite64x ] && o=document_causal_d64 && f=suite64x.json
    FLEXJIT_CACHE_DIR=/tmp/fc_$1 timeout 100 ./$1 bench --suite $f --only $o --bwd-mode deterministic --json $r/b_$2_$s.jsonl > $r/b_$2_$s.log 2>&1
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
        if o.get("bwd_tflops"): rows[o["name"]][tag].append((round(o["bwd_tflops"], 1), o.get("bwd_mode", "")))
for n, d in rows.items():
    b, w = [x[0] for x in d["base"]], [x[0] for x in d["new"]]
    if b and w: print(f"{n:30s} base {b} new {w} x{statistics.mean(w) / statistics.mean(b):.3f} | {d['base'][0][1]} -> {d['new'][0][1]}")
PY
FLEXJIT_CACHE_DIR=/tmp/fc_t timeout $(( 390 - ($(date +%s) - t0) )) ./gpu_test_attention --gtest_filter='BwdGpu.OrderedModeLongDocumentsTakeTwoChains:BwdGpu.DeterministicModeTakesTheFasterWayPerCall:BwdGpu.DeterministicModeMeasuresTheWayWhenTuning' > $r/tests.txt 2>&1
echo "tests rc=$?: $(grep -E '^\[       OK|^\[  FAILED|^\[  PASSED' $r/tests.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
grep -B2 -A6 "Failure" $r/tests.txt | head -30
