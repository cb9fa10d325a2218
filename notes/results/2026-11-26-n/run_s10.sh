#!/usr/bin/env bash
# Session (n) s10: the deterministic mode's ordered dQ sums on the d256 column-slice kernel: the
# ordered tests, compute-sanitizer, and ordered against the dQ kernel on the d256 problems.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/s10}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
timeout 60 ./gpu_test_attention --gtest_filter='BwdGpu.OrderedModeOnePerHeadDim' > $r/t0.txt 2>&1; echo "smoke rc=$? $(grep -E '^\[  (PASSED|FAILED)' $r/t0.txt | tr '\n' ' ')"; grep -A5 Failure $r/t0.txt | head -20
for round in 1 2; do
  FLEXJIT_DETERMINISTIC_DQ=kernel timeout 100 ./flexjit bench --suite suite256.json --bwd-mode deterministic --json $r/kernel_$round.jsonl > $r/kernel_$round.log 2>&1 || tail -3 $r/kernel_$round.log
  FLEXJIT_DETERMINISTIC_DQ=ordered timeout 100 ./flexjit bench --suite suite256.json --bwd-mode deterministic --json $r/ordered_$round.jsonl > $r/ordered_$round.log 2>&1 || tail -3 $r/ordered_$round.log
done
timeout 100 ./flexjit bench --suite suite256.json --json $r/fast.jsonl > $r/fast.log 2>&1 || tail -3 $r/fast.log
timeout 100 ./flexjit bench --suite suite256.json --bwd-mode deterministic --json $r/auto.jsonl > $r/auto.log 2>&1 || tail -3 $r/auto.log
echo "bench $(( $(date +%s) - t0 )) s"
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys
d = sys.argv[1]
def load(f):
    out = {}
    try:
        for l in open(f):
            try: j = json.loads(l)
            except Exception: continue
            if "name" in j: out[j["name"]] = j
    except FileNotFoundError: pass
    return out
k = [load(f"{d}/kernel_{i}.jsonl") for i in (1, 2)]
o = [load(f"{d}/ordered_{i}.jsonl") for i in (1, 2)]
fast, auto = load(f"{d}/fast.jsonl"), load(f"{d}/auto.jsonl")
for n in fast:
    a = [x.get(n, {}).get("bwd_tflops", 0) for x in k]
    b = [x.get(n, {}).get("bwd_tflops", 0) for x in o]
    fb = fast[n].get("bwd_tflops", 0)
    au = auto.get(n, {})
    print(f"{n:24} det kernel {a[0]:4.0f} / {a[1]:4.0f}  ordered {b[0]:4.0f} / {b[1]:4.0f}  fast {fb:4.0f}  ordered x fast {max(b)/max(fb,1):.2f}  auto {au.get('bwd_tflops',0):4.0f} ({au.get('dq_path', au.get('bwd_mode',''))})")
PY
timeout 240 ./gpu_test_attention --gtest_filter='BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.DeterministicModeTakesTheFasterWayPerCall:BwdGpu.FastModeFallsBackOnlyWhereItMustAndSaysWhy' > $r/t.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t.txt | tr '\n' ' ')"
grep -B2 -A8 Failure $r/t.txt | head -40
grep -E '^\[ +(OK|FAILED) ' $r/t.txt
for tool in memcheck synccheck; do
  timeout 80 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter='BwdGpu.OrderedModeOnePerHeadDim' > $r/san_$tool.log 2>&1; echo "$tool rc=$?: $(grep -E 'ERROR SUMMARY' $r/san_$tool.log | tr '\n' ' ')"
done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
