#!/usr/bin/env bash
# Session (n) s7: d256 dQ staged for the writer warps' tensor reductions (one dO tile apart from
# the Q ring) against s6's binary (reductions from registers), two rounds; the d256 tests and
# compute-sanitizer.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/s7}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
timeout 60 ./gpu_test_attention --gtest_filter='BwdGpu.FastModeOnePerHeadDim' > $r/t0.txt 2>&1; echo "smoke rc=$? $(grep -E '^\[  (PASSED|FAILED)' $r/t0.txt | tr '\n' ' ')"; grep -A5 Failure $r/t0.txt | head -20
for round in 1 2; do
  timeout 100 ../s6/flexjit bench --suite suite256.json --json $r/reds_$round.jsonl > $r/reds_$round.log 2>&1 || tail -3 $r/reds_$round.log
  timeout 100 ./flexjit bench --suite suite256.json --json $r/staged_$round.jsonl > $r/staged_$round.log 2>&1 || tail -3 $r/staged_$round.log
done
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
runs = {k: [load(f"{d}/{k}_{i}.jsonl") for i in (1, 2)] for k in ("reds", "staged")}
for n in runs["reds"][0]:
    a = [x.get(n, {}).get("bwd_tflops", 0) for x in runs["reds"]]
    b = [x.get(n, {}).get("bwd_tflops", 0) for x in runs["staged"]]
    print(f"{n:24} bwd reds {a[0]:4.0f} / {a[1]:4.0f}  staged {b[0]:4.0f} / {b[1]:4.0f}  x {sum(b)/max(sum(a),1):.2f}")
PY
timeout 200 ./gpu_test_attention --gtest_filter='BwdGpu.WarpSpecializedFastDkdv:BwdGpu.FastModeFallsBackOnlyWhereItMustAndSaysWhy' > $r/t.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t.txt | tr '\n' ' ')"
grep -B2 -A8 Failure $r/t.txt | head -40
grep -E '^\[ +(OK|FAILED) ' $r/t.txt
for tool in memcheck synccheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter='BwdGpu.FastModeOnePerHeadDim' > $r/san_$tool.log 2>&1; echo "$tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $r/san_$tool.log | tr '\n' ' ')"
done
grep "Error: Race reported between" $r/san_racecheck.log | sed 's/+0x[0-9a-f]*//' | sort | uniq -c
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
