#!/usr/bin/env bash
# Session (zg) zg6: the lean form for the deterministic mode's ordered dK/dV kernels (ptxas's
# spill report picks it where it spills less: soft-capping d128 264 -> 176 bytes, causal d64).
# A/B of the deterministic backward (HEAD's flexjit_head against the working tree's flexjit), two
# rounds alternating; then the ordered-mode GPU tests and compute-sanitizer memcheck on the new
# build (side by side).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zg6}; r=/tmp/zg6r/r; mkdir -p $r $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
D128=softcap_causal_d128,causal_d128,gqa_causal_d128
D64=causal_d64,softcap_causal_d64,gqa_causal_d64,alibi_causal_d64
run() {  # binary tag suite round [only]
  FLEXJIT_CACHE_DIR=/tmp/fc_$2 timeout 120 ./$1 bench --suite $3.json ${5:+--only $5} --bwd-mode deterministic --json $r/b_$2_$3_r$4.jsonl > $r/b_$2_$3_r$4.log 2>&1
  echo "$2 $3 r$4 rc=$? $(( $(date +%s) - t0 )) s"
}
for s in suite64x suite; do o=$D64; [ $s = suite ] && o=$D128; run flexjit_head head $s 1 $o; run flexjit new $s 1 $o; done
for s in suite64x suite; do o=$D64; [ $s = suite ] && o=$D128; run flexjit new $s 2 $o; run flexjit_head head $s 2 $o; done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    tag = re.search(r"b_(head|new)_", f).group(1)
    for line in open(f):
        if not line.startswith("{"): continue
        o = json.loads(line)
        if o.get("bwd_tflops"): rows[o["name"]][tag].append((o["bwd_tflops"], o.get("bwd_mode", ""), o.get("bwd_configs", "")))
for n, d in rows.items():
    h, w = [x[0] for x in d["head"]], [x[0] for x in d["new"]]
    if h and w:
        print(f"{n:26s} head {[round(v) for v in h]} new {[round(v) for v in w]} x{statistics.mean(w) / statistics.mean(h):.3f} {d['new'][0][1]}")
PY
FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 200 ./gpu_test_attention --gtest_filter='BwdGpu.FastAndDeterministicModes:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.OrderedModeWritesDqOfQueryTilesNoKeyReaches' > $r/tests.txt 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/fc_s timeout 200 compute-sanitizer --tool memcheck --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.OrderedModeOnePerHeadDim > $r/san_memcheck.txt 2>&1 &
wait
echo "tests: $(grep -E '^\[  (PASSED|FAILED) ' $r/tests.txt | tr '\n' ' ')"; grep -E '^\[  FAILED' $r/tests.txt
echo "memcheck: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $r/san_memcheck.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
cd /tmp/zg6r && tar czf $out/zg6.tar.gz r
