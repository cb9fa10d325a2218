#!/usr/bin/env bash
# Written in session (zd) for the next one (not run): branch ze-fast-first-store, the fast mode's
# first stores under masks (FlexjitBwdParams::dq_first; switch FLEXJIT_EXP_DQ_FIRST=1 in the
# branch's binary). Stage in .gpu/<session>/: flexjit and gpu_test_attention built from the
# branch, flexjit_base from main, suite.json, suite64x.json. Tests and compute-sanitizer with
# the switch on, then the fast backward: main, the branch with the switch off (its SASS changed
# in the writer only; unmasked kernels keep main's instructions), and on; two rounds alternating.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/ze1}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
FLEXJIT_EXP_DQ_FIRST=1 FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 280 ./gpu_test_attention --gtest_filter='BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches:BwdGpu.TuningLaunchesLeaveNoDqBehind:BwdGpu.FastModeOnePerHeadDim:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.Gqa8To1AndBshd:BwdGpu.FullyMaskedRowsGiveZeroGradients:BwdGpu.SuiteMods' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $r/tests.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
grep -E "^\[       OK|FAILED|Failure" $r/tests.txt | head -12
for tool in memcheck racecheck synccheck; do
  FLEXJIT_EXP_DQ_FIRST=1 FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 100 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.FastModeOnePerHeadDim > $r/san_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$tool.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
done
export FLEXJIT_AUTOTUNE=off
run() {  # binary tag switch suite round
  FLEXJIT_EXP_DQ_FIRST=$3 FLEXJIT_CACHE_DIR=/tmp/fc_$2 timeout 100 ./$1 bench --suite $4.json --bwd-mode fast > $r/b_$2$3_$4_r$5.jsonl 2> $r/b_$2$3_$4_r$5.err
  echo "$2$3 $4 r$5 rc=$? $(( $(date +%s) - t0 )) s"
}
for s in suite suite64x; do run flexjit_base base 0 $s 1; run flexjit new 0 $s 1; run flexjit new 1 $s 1; done
for s in suite suite64x; do run flexjit new 1 $s 2; run flexjit new 0 $s 2; run flexjit_base base 0 $s 2; done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    tag = re.search(r"b_(base0|new0|new1)_", f).group(1)
    for line in open(f):
        if not line.startswith("{"): continue
        o = json.loads(line)
        if o.get("bwd_tflops") is None: continue
        rows[o["name"]][tag].append(o["bwd_tflops"])
for n, d in rows.items():
    b, off, on = d["base0"], d["new0"], d["new1"]
    m = statistics.mean
    print(f"{n:28s} main {[round(v) for v in b]} off {[round(v) for v in off]} on {[round(v) for v in on]} "
          f"off/main {m(off) / m(b):.3f} on/main {m(on) / m(b):.3f}")
PY
cd $out && tar czf ze1.tar.gz r && rm -rf r
