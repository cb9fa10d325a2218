#!/usr/bin/env bash
# Written in session (ze) for the next one (not run): branch zf-first-store-early-release (patch
# beside this file): the first claimant hands its staging buffer back after the store's read, and
# FLEXJIT_EXP_FIRST_STORES=all also takes the first stores at d64 and with GQA. Stage in
# .gpu/<session>/: flexjit and gpu_test_attention built from the branch, flexjit_base from main,
# suite.json, suite64x.json. Tests and compute-sanitizer with =all, then the fast backward: main,
# the branch (rule: the early release alone), the branch with =all; two rounds alternating.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zf1}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
FLEXJIT_EXP_FIRST_STORES=all FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 200 ./gpu_test_attention --gtest_filter='BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches:BwdGpu.FastModeOnePerHeadDim:BwdGpu.Gqa8To1AndBshd:BwdGpu.WarpSpecializedFastDkdvManyKvTiles:BwdGpu.TuningLaunchesLeaveNoDqBehind' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $r/tests.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
for tool in memcheck racecheck synccheck; do
  FLEXJIT_EXP_FIRST_STORES=all FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 40 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.FastModeOnePerHeadDim > $r/san_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$tool.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
done
export FLEXJIT_AUTOTUNE=off
run() {  # binary tag switch suite round
  FLEXJIT_EXP_FIRST_STORES=$3 FLEXJIT_CACHE_DIR=/tmp/fc_$2$3 timeout 100 ./$1 bench --suite $4.json --bwd-mode fast > $r/b_$2_$3_$4_r$5.jsonl 2> $r/b_$2_$3_$4_r$5.err
  echo "$2 $3 $4 r$5 rc=$? $(( $(date +%s) - t0 )) s"
}
for s in suite suite64x; do run flexjit_base base rule $s 1; run flexjit new rule $s 1; run flexjit new all $s 1; done
for s in suite suite64x; do run flexjit new all $s 2; run flexjit new rule $s 2; run flexjit_base base rule $s 2; done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    tag = re.search(r"b_(base_rule|new_rule|new_all)_", f).group(1)
    for line in open(f):
        if '"name"' not in line: continue
        o = json.loads(line)
        if o.get("bwd_tflops"): rows[o["name"]][tag].append(o["bwd_tflops"])
m = statistics.mean
for n, d in rows.items():
    b, e, a = d["base_rule"], d["new_rule"], d["new_all"]
    print(f"{n:28s} main {[round(v) for v in b]} early {[round(v) for v in e]} all {[round(v) for v in a]} "
          f"early/main {m(e) / m(b):.3f} all/main {m(a) / m(b):.3f}")
PY
cd $out && tar czf zf1.tar.gz r && rm -rf r
