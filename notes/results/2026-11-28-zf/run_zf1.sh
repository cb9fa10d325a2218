#!/usr/bin/env bash
# Session (zf) zf1, phase A|B. A: main's GPU tests of 13c64d3 (gpu_test_attention_base), the
# branch zf-first-store-early-release's tests and compute-sanitizer with FLEXJIT_EXP_FIRST_STORES=all,
# then bench round 1. B: bench round 2 (reverse order) and the summary. The fast backward, AUTOTUNE=off:
# main (flexjit_base), the branch's rule (early release only), the branch with =all (first stores
# also at d64 and with GQA); suite64x (all d64 problems) and three d128 problems of suite.json.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zf1}; r=/tmp/zf1r/r; mkdir -p $r $out  # /tmp outlives a call on a warm machine
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $r/gpu_$1.txt
t0=$(date +%s)
run() {  # binary tag switch suite round [only]
  FLEXJIT_AUTOTUNE=off FLEXJIT_EXP_FIRST_STORES=$3 FLEXJIT_CACHE_DIR=/tmp/fc_$2$3 timeout 120 ./$1 bench --suite $4.json ${6:+--only $6} --bwd-mode fast > $r/b_$2_$3_$4_r$5.jsonl 2> $r/b_$2_$3_$4_r$5.err
  echo "$2 $3 $4 r$5 rc=$? $(( $(date +%s) - t0 )) s"
}
D128=causal_d128,document_causal_d128,gqa_causal_d128
if [ "$1" = A ]; then
  FLEXJIT_CACHE_DIR=/tmp/fc_tb timeout 170 ./gpu_test_attention_base --gtest_filter='BwdGpu.TuningLaunchesLeaveNoDqBehind:BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches:BwdGpu.FastModeOnePerHeadDim:BwdGpu.DeterministicModeMeasuresTheWayWhenTuning' > $r/tests_main.txt 2>&1
  echo "main tests rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $r/tests_main.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
  FLEXJIT_EXP_FIRST_STORES=all FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 200 ./gpu_test_attention --gtest_filter='BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches:BwdGpu.FastModeOnePerHeadDim:BwdGpu.Gqa8To1AndBshd:BwdGpu.WarpSpecializedFastDkdvManyKvTiles:BwdGpu.TuningLaunchesLeaveNoDqBehind' > $r/tests_all.txt 2>&1
  echo "branch =all tests rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $r/tests_all.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
  for tool in memcheck racecheck synccheck; do
    FLEXJIT_EXP_FIRST_STORES=all FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.FastModeOnePerHeadDim > $r/san_$tool.txt 2>&1
    echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$tool.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
  done
  for s in suite64x suite; do o=; [ $s = suite ] && o=$D128
    run flexjit_base base rule $s 1 $o; run flexjit new rule $s 1 $o; run flexjit new all $s 1 $o; done
  cd /tmp/zf1r && tar czf $out/zf1_A.tar.gz r; exit 0
fi
for s in suite64x suite; do o=; [ $s = suite ] && o=$D128
  run flexjit new all $s 2 $o; run flexjit new rule $s 2 $o; run flexjit_base base rule $s 2 $o; done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    tag = re.search(r"b_(base_rule|new_rule|new_all)_", f).group(1)
    for line in open(f):
        if not line.startswith("{"): continue
        o = json.loads(line)
        if o.get("bwd_tflops"): rows[o["name"]][tag].append(o["bwd_tflops"])
m = statistics.mean
for n, d in rows.items():
    b, e, a = d["base_rule"], d["new_rule"], d["new_all"]
    if not (b and e and a): continue
    print(f"{n:28s} main {[round(v) for v in b]} early {[round(v) for v in e]} all {[round(v) for v in a]} "
          f"early/main {m(e) / m(b):.3f} all/main {m(a) / m(b):.3f}")
PY
cd /tmp/zf1r && tar czf $out/zf1_B.tar.gz r
