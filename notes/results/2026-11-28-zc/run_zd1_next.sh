#!/usr/bin/env bash
# Written in session (zc) for the next one (not run): the landing call for branch
# zd-ordered-first-store (the ordered sums store each chain's first share; no zeroed dq_accum in
# the deterministic mode). Stage in .gpu/<session>/: flexjit and gpu_test_attention built from the
# branch, flexjit_base from main, suite.json, suite64x.json. Tests, compute-sanitizer, then the
# deterministic and fast backward against main, two rounds, the order alternating.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zd1}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 300 ./gpu_test_attention --gtest_filter='BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.OrderedModeWritesDqOfQueryTilesNoKeyReaches:BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches:BwdGpu.TuningLaunchesLeaveNoDqBehind:BwdGpu.DeterministicModeTakesTheFasterWayPerCall:BwdGpu.FastModeOnePerHeadDim' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $r/tests.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
grep -E "^\[       OK|FAILED|Failure" $r/tests.txt | head -12
for tool in memcheck racecheck synccheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 100 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.OrderedModeOnePerHeadDim > $r/san_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$tool.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
done
grep -h "Race reported\|Hazard" $r/san_racecheck.txt | sort | uniq -c | head -5
run() {  # binary tag mode suite round
  FLEXJIT_CACHE_DIR=/tmp/fc_$2 timeout 120 ./$1 bench --suite $4.json --bwd-mode $3 > $r/b_$2_$3_$4_r$5.jsonl 2> $r/b_$2_$3_$4_r$5.err
  echo "$2 $3 $4 r$5 rc=$? $(( $(date +%s) - t0 )) s"
}
for s in suite suite64x; do run flexjit_base base deterministic $s 1; run flexjit new deterministic $s 1; done
for s in suite suite64x; do run flexjit new deterministic $s 2; run flexjit_base base deterministic $s 2; done
run flexjit_base base fast suite 1; run flexjit new fast suite 1
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    tag, mode = re.search(r"b_(base|new)_(\w+?)_suite", f).groups()
    for line in open(f):
        line = line.strip()
        if not line.startswith("{"): continue
        o = json.loads(line)
        if "name" not in o or o.get("bwd_tflops") is None: continue
        rows[(o["name"], mode)][tag].append(o["bwd_tflops"])
for (n, mode), d in rows.items():
    b, nw = d.get("base", []), d.get("new", [])
    x = f"{statistics.mean(nw) / statistics.mean(b):.3f}" if b and nw else "-"
    print(f"{n:28s} {mode:14s} base {[round(v) for v in b]} new {[round(v) for v in nw]} {x}")
PY
cd $out && tar czf zd1.tar.gz r && rm -rf r
