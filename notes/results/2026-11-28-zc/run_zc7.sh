#!/usr/bin/env bash
# Session (zc) zc7: the landing build (two ordered chains without masks or GQA, one otherwise):
# the deterministic-mode tests, then the deterministic backward against main's (two chains, base).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zc7}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 200 ./gpu_test_attention --gtest_filter='BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.DeterministicModeTakesTheFasterWayPerCall' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $r/tests.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
grep -E "^\[       OK|FAILED|Failure" $r/tests.txt | head -8
run() {  # binary tag suite round
  FLEXJIT_CACHE_DIR=/tmp/fc_$2 timeout 120 ./$1 bench --suite $3.json --bwd-mode deterministic > $r/b_$2_$3_r$4.jsonl 2> $r/b_$2_$3_r$4.err
  echo "$2 $3 r$4 rc=$? $(( $(date +%s) - t0 )) s"
}
for s in suite suite64x; do run flexjit new $s 1; run flexjit_base base $s 1; done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    tag = re.search(r"b_(base|new)_", f).group(1)
    for line in open(f):
        line = line.strip()
        if not line.startswith("{"): continue
        o = json.loads(line)
        if "name" not in o or o.get("bwd_tflops") is None: continue
        rows[o["name"]][tag].append(o["bwd_tflops"])
for n, d in rows.items():
    b, nw = d.get("base", []), d.get("new", [])
    x = f"{statistics.mean(nw) / statistics.mean(b):.3f}" if b and nw else "-"
    print(f"{n:28s} base {[round(v) for v in b]} new {[round(v) for v in nw]} {x}")
PY
cd $out && tar czf zc7.tar.gz r && rm -rf r
