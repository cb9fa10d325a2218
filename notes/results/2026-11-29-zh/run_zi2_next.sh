#!/usr/bin/env bash
# For the next session (zi2), an experiment prepared in (zh) and compiled but not run:
# zi_name_barriers.patch gives the ordered dK/dV kernel one mbarrier per tile-name entry, which
# the producer arrives on once it has written the name, so that under masks the consumers read
# the next tile's name for its mask verdicts at the end of a tile without waiting for that tile's
# stage to land (ring.wait_full). ptxas (NVRTC 13.0, sm_90a): spills unchanged for documents,
# causal and unmasked at d64 / d128 / d256; 96 more bytes of shared memory (d128: 231712 of 232448).
# Stage in .gpu/<s>/: flexjit (main), flexjit_new (main + the patch), gpu_test_attention (main +
# the patch), suite64x.json (notes/results/2026-11-26-p/), this script. Then: the A/B of the
# ordered sums (two rounds alternating), the ordered tests and compute-sanitizer on the new build.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zi2}; r=$out/r; mkdir -p $r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off FLEXJIT_DETERMINISTIC_DQ=ordered
P=document_causal_d128,long_document_causal_d128,document_nested_causal_d128,causal_d128,sliding_window_d128,softcap_causal_d128,prefix_lm_d128
P64=document_causal_d64,causal_d64,sliding_window_d64
bench() {  # binary tag
  for s in suite suite64x; do
    o=$P; f=../../bench/suite.json; [ $s = suite64x ] && o=$P64 && f=suite64x.json
    FLEXJIT_CACHE_DIR=/tmp/fc_$1 timeout 200 ./$1 bench --suite $f --only $o --bwd-mode deterministic --json $r/b_$2_$s.jsonl > $r/b_$2_$s.log 2>&1
  done
  echo "$2 $(( $(date +%s) - t0 )) s"
}
bench flexjit base_r1; bench flexjit_new new_r1; bench flexjit_new new_r2; bench flexjit base_r2
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    tag = re.search(r"b_(base|new)_", f).group(1)
    for line in open(f):
        if line.startswith("{"):
            o = json.loads(line)
            if o.get("bwd_tflops"): rows[o["name"]][tag].append(round(o["bwd_tflops"], 1))
for n, d in rows.items():
    if d["base"] and d["new"]: print(f"{n:30s} base {d['base']} new {d['new']} x{statistics.mean(d['new']) / statistics.mean(d['base']):.3f}")
PY
export -n FLEXJIT_DETERMINISTIC_DQ
FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 400 ./gpu_test_attention --gtest_filter='BwdGpu.OrderedMode*:BwdGpu.DeterministicModeSumsDqInOrder' > $r/tests.txt 2>&1 &
for tool in memcheck synccheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_$tool timeout 400 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.OrderedModeOnePerHeadDim > $r/san_$tool.txt 2>&1 &
done
wait
echo "tests: $(grep -E '^\[       OK|^\[  FAILED|^\[  PASSED' $r/tests.txt | tr '\n' ' ')"
for tool in memcheck synccheck; do echo "$tool: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $r/san_$tool.txt | tr '\n' ' ')"; done
echo "$(( $(date +%s) - t0 )) s"
