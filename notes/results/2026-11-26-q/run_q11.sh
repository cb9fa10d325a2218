#!/usr/bin/env bash
# Session (q) q11: the rest of the backward GPU tests and the tuner's GPU tests on the final
# build; then the final binary's backward (fast and deterministic) beside every peer, FA4 and the
# FLASH backend included (.fa4a copied by the call before, this one carrying .fa4b).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/q11}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_t
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
(cd ../.. && timeout 150 bash .fa4b/install.sh) > $r/install.log 2>&1 &
timeout 200 ./gpu_test_attention --gtest_filter='BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.DeterministicModeTakesTheFasterWayPerCall:BwdGpu.FastAndDeterministicModes:BwdGpu.CapturedInAGraphAndReplayedGivesTheSameGradients:BwdGpu.LaterWorkOnTheCallersStreamSeesEveryGradient:BwdGpu.FastModeFallsBackOnlyWhereItMustAndSaysWhy:Configs/NanGpu.Backward*' > $r/t.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t.txt | tr '\n' ' ')"
grep -B2 -A8 Failure $r/t.txt | head -30
timeout 120 ./gpu_test_tune > $r/tune.txt 2>&1; echo "tune tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/tune.txt | tr '\n' ' ')"
grep -B2 -A8 Failure $r/tune.txt | head -20
wait; echo "install: $(tail -1 $r/install.log)"
export FLEXJIT_AUTOTUNE=off
only=noop_d128,causal_d128,gqa_causal_d128,noop_d64,causal_d64
export FLEXJIT_CACHE_DIR=/tmp/fc_new
timeout 90 ./flexjit bench --suite suite.json --only $only --json $r/flexjit.jsonl > $r/flexjit.log 2>&1 || tail -3 $r/flexjit.log
timeout 90 ./flexjit bench --suite suite.json --only $only --bwd-mode deterministic --json $r/flexjit_det.jsonl > $r/flexjit_det.log 2>&1 || tail -3 $r/flexjit_det.log
timeout 60 ./flexjit bench --suite suite256x.json --only gqa_causal_d256,causal_d256 --json $r/flexjit256.jsonl > $r/flexjit256.log 2>&1 || tail -3 $r/flexjit256.log
echo "flexjit $(( $(date +%s) - t0 )) s"
export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages
PYTHONUNBUFFERED=1 timeout 200 python3 peers.py --flash --suite suite.json --only "$only" > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
PYTHONUNBUFFERED=1 timeout 90 python3 peers.py --flash --suite suite256x.json --only gqa_causal_d256,causal_d256 > $r/peers256.jsonl 2> $r/peers256.err || tail -3 $r/peers256.err
echo "peers $(( $(date +%s) - t0 )) s"
python3 compare.py $r/flexjit.jsonl $r/peers.jsonl > $r/compare.txt 2>&1
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys
d = sys.argv[1]
def load(f):
    out = {}
    try:
        for l in open(f):
            try: j = json.loads(l)
            except Exception: continue
            if "name" in j and "error" not in j: out.setdefault(j["name"], {})[j.get("system", "flexjit")] = j
    except FileNotFoundError: pass
    return out
for suf in ("", "256"):
    me = load(f"{d}/flexjit{suf}.jsonl"); det = load(f"{d}/flexjit_det.jsonl"); peers = load(f"{d}/peers{suf}.jsonl")
    systems = sorted({s for n in peers for s in peers[n]})
    print(f"{'problem (fwd/bwd)':20} {'flexjit':>9} {'det bwd':>7} " + " ".join(f"{s[:12]:>11}" for s in systems))
    for n in me:
        f = lambda x, k: x.get(k) or 0
        row = [f"{f(me[n]['flexjit'], 'fwd_tflops'):4.0f}/{f(me[n]['flexjit'], 'bwd_tflops'):<4.0f}", f"{f(det.get(n, {}).get('flexjit', {}), 'bwd_tflops'):7.0f}"]
        row += [f"{f(peers.get(n, {}).get(s, {}), 'fwd_tflops'):5.0f}/{f(peers.get(n, {}).get(s, {}), 'bwd_tflops'):<5.0f}" for s in systems]
        print(f"{n:20} " + " ".join(row))
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
