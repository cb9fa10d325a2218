#!/usr/bin/env bash
# Session (l) l4, issue 13, final: the deterministic mode's per-call choice (auto) and the ordered
# tests; the training problems in the three ways (fast; deterministic default; deterministic with
# the dQ kernel) beside FlexAttention, FlashAttention-2 and cuDNN on three dense problems.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/l4}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
timeout 200 ./gpu_test_attention --gtest_filter='BwdGpu.DeterministicModeTakesTheFasterWayPerCall:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.FastAndDeterministicModes:BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits:BwdGpu.LaterWorkOnTheCallersStreamSeesEveryGradient:BwdGpu.CapturedInAGraphAndReplayedGivesTheSameGradients:BwdGpu.FastModeFallsBackOnlyWhereItMustAndSaysWhy' > $r/t.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t.txt | tr '\n' ' ')"
grep -E "OK \]|FAILED \]" $r/t.txt; grep -A6 Failure $r/t.txt | head -30
train=noop_d128,causal_d128,noop_d64,causal_d64,causal_d256,gqa_causal_d128,long_causal_d128,sliding_window_d128,document_causal_d128,prefix_lm_d128,alibi_causal_d128,softcap_causal_d128
timeout 90 ./flexjit bench --suite suite.json --only "$train" --json $r/b_fast.jsonl > /dev/null 2>$r/err.txt || { echo "fast bench failed"; tail -3 $r/err.txt; }
timeout 90 ./flexjit bench --suite suite.json --only "$train" --bwd-mode deterministic --json $r/b_det.jsonl > /dev/null 2>$r/err.txt || { echo "det bench failed"; tail -3 $r/err.txt; }
FLEXJIT_DETERMINISTIC_DQ=kernel timeout 90 ./flexjit bench --suite suite.json --only "$train" --bwd-mode deterministic --json $r/b_kernel.jsonl > /dev/null 2>$r/err.txt || { echo "kernel bench failed"; tail -3 $r/err.txt; }
echo "bench $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 150 python3 peers.py --suite suite.json --only "noop_d128,noop_d64,gqa_causal_d128" > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s"
python3 - $r <<'PY' | tee $r/ab.txt
import json, sys, glob, os, collections
d = sys.argv[1]
res = collections.defaultdict(dict); mode = {}
for f in sorted(glob.glob(d + "/b_*.jsonl")):
    c = os.path.basename(f)[2:-6]
    for j in map(json.loads, open(f)):
        if "name" in j:
            res[j["name"]][c] = (j.get("fwd_tflops", 0), j.get("bwd_tflops", 0)); mode[(j["name"], c)] = j.get("bwd_mode", "")
peers = collections.defaultdict(dict)
for j in map(json.loads, open(d + "/peers.jsonl")):
    if "name" in j and j.get("bwd_tflops"): peers[j["name"]][j.get("system")] = j.get("bwd_tflops")
for n, m in res.items():
    f, dt, k = m.get("fast", (0, 0)), m.get("det", (0, 0)), m.get("kernel", (0, 0))
    print(f"{n:28} fwd {f[0]:5.0f} | bwd fast {f[1]:5.0f} det {dt[1]:5.0f} ({dt[1]/max(f[1],1):.2f}x fast; {mode[(n,'det')]}) dq-kernel {k[1]:5.0f} | peers {dict(peers.get(n, {}))}")
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
