#!/usr/bin/env bash
# Session (n) s1: the warp-specialised backward at head dim 256 (a column slice of dK, dV and dQ
# per consumer warpgroup): its GPU tests, memcheck, and the fast mode against the deterministic
# one (the previous default's kernels) on d256 problems.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/s1}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
timeout 100 ./flexjit bench --suite suite256.json --json $r/fast.jsonl > $r/fast.log 2>&1 || tail -5 $r/fast.log
timeout 100 ./flexjit bench --suite suite256.json --bwd-mode deterministic --json $r/det.jsonl > $r/det.log 2>&1 || tail -5 $r/det.log
echo "bench $(( $(date +%s) - t0 )) s"
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys
d = sys.argv[1]
def load(f):
    out = {}
    for l in open(f):
        try: j = json.loads(l)
        except Exception: continue
        if "name" in j: out[j["name"]] = j
    return out
fast, det = load(d + "/fast.jsonl"), load(d + "/det.jsonl")
for n, f in fast.items():
    t = det.get(n, {})
    print(f"{n:24} fwd {f.get('fwd_tflops',0):4.0f} bwd fast {f.get('bwd_tflops',0):4.0f} ({f.get('bwd_mode','')}) det {t.get('bwd_tflops',0):4.0f} x {f.get('bwd_tflops',0)/max(t.get('bwd_tflops',1),1):.2f}")
PY
timeout 280 ./gpu_test_attention --gtest_filter='BwdGpu.WarpSpecializedFastDkdv:BwdGpu.FastModeOnePerHeadDim:BwdGpu.FastModeFallsBackOnlyWhereItMustAndSaysWhy' > $r/t.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t.txt | tr '\n' ' ')"
grep -B2 -A8 Failure $r/t.txt | head -60
grep -E '^\[ +(OK|FAILED) ' $r/t.txt
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 1 ./gpu_test_attention --gtest_filter='BwdGpu.FastModeOnePerHeadDim' > $r/san.log 2>&1; echo "memcheck rc=$?: $(grep 'ERROR SUMMARY' $r/san.log | tr '\n' ' ')"
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
