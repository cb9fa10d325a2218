#!/usr/bin/env bash
# Session (zj), fourth call: the landing run, one call.
# 1. Tests of main b656f25 (the d256 ordered kernels: dQ's second piece in the Q stage, two chains
#    under masks): the new OrderedModeTwoChainsAtHeadDim256 with OrderedModeOnePerHeadDim and
#    TwoRunsOnTheSameInputsGiveTheSameBits; memcheck and synccheck on the new test.
# 2. Then, nothing else on the GPU, tuning off: main's forward and fast backward and its
#    deterministic backward on bench/suite.json's attention problems; suite256.json's
#    deterministic backward, main against 68dfce2 (flexjit_68, the session's start), two rounds;
#    the masked d128 deterministic problems on 3c3d8ab (flexjit_3c, before the tile-name barriers
#    of (zi)); then peers.py (SDPA's cuDNN and FA2, FlexAttention Triton) and compare.py.
# Stage in .gpu/zq/: flexjit, flexjit_68, flexjit_3c, gpu_test_attention, suite.json,
# suite256.json, peers.py and compare.py (../shared/bench), this script.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zj4}; r=/tmp/zj4r/r; mkdir -p $r $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
save() { (cd /tmp/zj4r && tar czf $out/zj4.tar.gz r); }
FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 150 ./gpu_test_attention --gtest_filter='BwdGpu.OrderedModeTwoChainsAtHeadDim256:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits' > $r/tests.txt 2>&1 &
for tool in memcheck synccheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_$tool timeout 150 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.OrderedModeTwoChainsAtHeadDim256 > $r/san_$tool.txt 2>&1 &
done
wait
echo "tests: $(grep -E '^\[  FAILED|^\[  PASSED' $r/tests.txt | tr '\n' ' ') ok=$(grep -c '^\[       OK' $r/tests.txt)"
for f in $r/san_*.txt; do echo "$(basename $f): $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $f | tr '\n' ' ')"; done
grep -h -B2 -A12 "Failure" $r/tests.txt $r/san_*.txt | head -40
echo "tests done $(( $(date +%s) - t0 )) s"; save
export FLEXJIT_AUTOTUNE=off
ONLY=noop_d128,causal_d128,noop_d64,causal_d64,causal_d256,sliding_window_d128,document_causal_d128,document_nested_causal_d128,prefix_lm_d128,alibi_causal_d128,relpos_learnable_causal_d128,relpos_learnable_causal_d64,alibi_learnable_causal_d128,softcap_causal_d128,gqa_causal_d128,long_causal_d128,long_document_causal_d128,long_sliding_window_d128
MASKED=document_causal_d128,document_nested_causal_d128,long_document_causal_d128,sliding_window_d128,causal_d128,prefix_lm_d128,softcap_causal_d128
FLEXJIT_CACHE_DIR=/tmp/fc timeout 150 ./flexjit bench --suite suite.json --only $ONLY --json $r/flexjit.jsonl > $r/flexjit.log 2>&1; echo "fast rc=$? $(( $(date +%s) - t0 )) s"
FLEXJIT_CACHE_DIR=/tmp/fc timeout 120 ./flexjit bench --suite suite.json --only $ONLY --bwd-mode deterministic --json $r/flexjit_det.jsonl > $r/flexjit_det.log 2>&1; echo "det rc=$? $(( $(date +%s) - t0 )) s"
for round in 1 2; do
  order="flexjit flexjit_68"; [ $round = 2 ] && order="flexjit_68 flexjit"
  for bin in $order; do
    FLEXJIT_CACHE_DIR=/tmp/fc_$bin timeout 60 ./$bin bench --suite suite256.json --bwd-mode deterministic --json $r/d256_${bin}_r$round.jsonl > $r/d256_${bin}_r$round.log 2>&1; echo "d256 $bin r$round rc=$? $(( $(date +%s) - t0 )) s"
  done
done
FLEXJIT_CACHE_DIR=/tmp/fc_3c timeout 80 ./flexjit_3c bench --suite suite.json --only $MASKED --bwd-mode deterministic --json $r/flexjit_3c_det.jsonl > $r/flexjit_3c_det.log 2>&1; echo "3c det rc=$? $(( $(date +%s) - t0 )) s"
save
export PYTHONUNBUFFERED=1
left=$(( 520 - ($(date +%s) - t0) ))
timeout $left python3 peers.py --suite suite.json --only $ONLY > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s $(grep -c fwd_tflops $r/peers.jsonl) rows"
python3 compare.py $r/flexjit.jsonl $r/peers.jsonl > $r/compare.txt 2>&1; head -60 $r/compare.txt
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
def rows(path):
    out = {}
    for f in glob.glob(path):
        for line in open(f):
            if line.startswith("{"):
                o = json.loads(line)
                if o.get("bwd_tflops"): out.setdefault(o["name"], []).append(round(o["bwd_tflops"], 1))
    return out
fast, det, old3c = rows(f"{r}/flexjit.jsonl"), rows(f"{r}/flexjit_det.jsonl"), rows(f"{r}/flexjit_3c_det.jsonl")
new256, old256 = rows(f"{r}/d256_flexjit_r*.jsonl"), rows(f"{r}/d256_flexjit_68_r*.jsonl")
tri = {}
for line in open(f"{r}/peers.jsonl"):
    if line.startswith("{"):
        o = json.loads(line)
        if o.get("system", "").startswith("flex") and o.get("bwd_tflops"): tri[o["name"]] = o["bwd_tflops"]
print("problem fast det det/fast det/triton 3c3d8ab det/3c")
for n in fast:
    f, d = fast[n][0], det.get(n, [0])[0]
    t = tri.get(n)
    o = old3c.get(n, [None])[0]
    print(f"{n:30s} {f:6.1f} {d:6.1f} {d / f:5.2f} {d / t if t else 0:5.2f} {o or '-'} {d / o if o else 0:5.3f}")
print("d256 deterministic: main vs 68dfce2")
for n in new256:
    if n in old256: print(f"{n:30s} {new256[n]} {old256[n]} x{statistics.mean(new256[n]) / statistics.mean(old256[n]):.3f}")
PY
echo "$(( $(date +%s) - t0 )) s"
save
