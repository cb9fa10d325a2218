#!/usr/bin/env bash
# Session (zc) zc1: the fast backward's dK/dV launch split by batch into parts (experiment,
# FLEXJIT_EXP_PARTS), each part's dQ converted on a side stream (FLEXJIT_EXP_PRIO=1: high priority)
# as soon as that part ends. Correctness (SuiteMods, B=2, parts=2), then A/B rounds.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zc1}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
FLEXJIT_EXP_PARTS=2 FLEXJIT_EXP_PRIO=1 FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 150 ./gpu_test_attention --gtest_filter='BwdGpu.SuiteMods:BwdGpu.BufferReads*' > $r/tests_p2.txt 2>&1
echo "tests parts=2 rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $r/tests_p2.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
grep -E "error|Failure" $r/tests_p2.txt | head -5
only=noop_d128,causal_d128,document_causal_d128,noop_d64,document_causal_d64,gqa_causal_d128
for round in 1 2; do
  for cfg in "1 0" "2 1" "4 1" "2 0"; do
    set -- $cfg
    FLEXJIT_EXP_PARTS=$1 FLEXJIT_EXP_PRIO=$2 FLEXJIT_CACHE_DIR=/tmp/fc_b timeout 100 ./flexjit bench --suite suite_zc.json --only $only > $r/b_p$1_q$2_r$round.jsonl 2> $r/b_p$1_q$2_r$round.err
    echo "parts=$1 prio=$2 round $round rc=$? $(( $(date +%s) - t0 )) s"
  done
done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections
r = sys.argv[1]
res = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    cfg = re.search(r"b_(p\d_q\d)_r", f).group(1)
    for line in open(f):
        line = line.strip()
        if not line.startswith("{"): continue
        o = json.loads(line)
        if "name" not in o: continue
        res[o["name"]][cfg].append(o.get("bwd_tflops"))
for n, d in res.items():
    base = d.get("p1_q0", [None])
    print(n, " ".join(f"{c}={v}" for c, v in sorted(d.items())))
PY
cd $out && tar czf zc1.tar.gz r && rm -rf r
