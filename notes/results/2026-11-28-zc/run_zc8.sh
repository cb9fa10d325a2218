#!/usr/bin/env bash
# Session (zc) zc8: three dQ staging buffers (and writer warps) for the ordered d64 kernel
# (FLEXJIT_EXP_DQ_BUFFERS=3, experiment build on 1d9944f) against two.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zc8}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
FLEXJIT_EXP_DQ_BUFFERS=3 FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 150 ./gpu_test_attention --gtest_filter='BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.OrderedModeOnePerHeadDim' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $r/tests.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
grep -E "^\[       OK|FAILED|Failure" $r/tests.txt | head -8
for round in 1 2; do
  for nb in 2 3; do
    FLEXJIT_EXP_DQ_BUFFERS=$nb FLEXJIT_CACHE_DIR=/tmp/fc_b timeout 100 ./flexjit bench --suite suite64x.json --bwd-mode deterministic > $r/b_n${nb}_r$round.jsonl 2> $r/b_n${nb}_r$round.err
    echo "buffers $nb r$round rc=$? $(( $(date +%s) - t0 )) s"
  done
done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    tag = re.search(r"b_(n\d)_", f).group(1)
    for line in open(f):
        line = line.strip()
        if not line.startswith("{"): continue
        o = json.loads(line)
        if "name" not in o or o.get("bwd_tflops") is None: continue
        rows[o["name"]][tag].append(o["bwd_tflops"])
for n, d in rows.items():
    a, b = d.get("n2", []), d.get("n3", [])
    x = f"{statistics.mean(b) / statistics.mean(a):.3f}" if a and b else "-"
    print(f"{n:28s} two {[round(v) for v in a]} three {[round(v) for v in b]} {x}")
PY
cd $out && tar czf zc8.tar.gz r && rm -rf r
