#!/usr/bin/env bash
# Session (zj), third call: A/B, deterministic backward, three rounds, the order alternating,
# tuning off: main (81499df) against flexjit_c2 (zj-d256-two-chains: two chains of turns for the
# d256 slice kernels under masks too; one before, since zc6's rule, which measured d64 and d128
# only), suite256.json. Then c2's ordered tests and synccheck, in case it wins.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zj3}; r=/tmp/zj3r/r; mkdir -p $r $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
bench() {  # binary tag
  FLEXJIT_CACHE_DIR=/tmp/fc_$1 timeout 100 ./$1 bench --suite suite256.json --bwd-mode deterministic --json $r/b_$2.jsonl > $r/b_$2.log 2>&1
  echo "$2 rc=$? $(( $(date +%s) - t0 )) s"
}
for round in 1 2 3; do
  order="flexjit flexjit_c2"; [ $round = 2 ] && order="flexjit_c2 flexjit"
  for bin in $order; do bench $bin ${bin}_r$round; done
done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    m = re.search(r"b_(flexjit\w*?)_r\d", f)
    for line in open(f):
        if line.startswith("{"):
            o = json.loads(line)
            if o.get("bwd_tflops"):
                rows[o["name"]]["base" if m.group(1) == "flexjit" else "new"].append(round(o["bwd_tflops"], 1))
for n, d in sorted(rows.items()):
    if d["base"] and d["new"]:
        print(f"{n:28s} base {d['base']} new {d['new']} x{statistics.mean(d['new']) / statistics.mean(d['base']):.3f}")
PY
echo "bench done $(( $(date +%s) - t0 )) s"
left=$(( 290 - ($(date +%s) - t0) ))
FLEXJIT_CACHE_DIR=/tmp/fc_a timeout $left ./gpu_test_attention_c2 --gtest_filter='BwdGpu.Ordered*:BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits:BwdGpu.HeadDimsAndHalfPrecision' > $r/tests_c2.txt 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/fc_s timeout $left compute-sanitizer --tool synccheck --error-exitcode 1 ./gpu_test_attention_c2 --gtest_filter=BwdGpu.OrderedModeOnePerHeadDim > $r/san_c2_synccheck.txt 2>&1 &
wait
for f in $r/tests_*.txt; do echo "$(basename $f): $(grep -E '^\[  FAILED|^\[  PASSED' $f | sed 's/\[ *//;s/ *\]//' | tr '\n' ' ') ok=$(grep -c '^\[       OK' $f)"; done
for f in $r/san_*.txt; do echo "$(basename $f): $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $f | tr '\n' ' ')"; done
grep -h -B2 -A12 "Failure" $r/tests_*.txt | head -40
echo "$(( $(date +%s) - t0 )) s"
cd /tmp/zj3r && tar czf $out/zj3.tar.gz r
