#!/usr/bin/env bash
# Session (n) s3: kv tiles in pairs (2-CTA clusters handing dQ pieces over distributed shared
# memory) against s1's binary (plain reductions), same machine, two rounds; then the tests and
# compute-sanitizer on the pairs.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/s3}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
timeout 60 ./gpu_test_attention --gtest_filter='BwdGpu.FastModeOnePerHeadDim' > $r/t0.txt 2>&1; echo "smoke rc=$? $(grep -E '^\[  (PASSED|FAILED)' $r/t0.txt | tr '\n' ' ')"; grep -A5 Failure $r/t0.txt | head -20
for round in 1 2; do
  timeout 100 ../s1/flexjit bench --suite suite256.json --json $r/plain_$round.jsonl > $r/plain_$round.log 2>&1 || tail -5 $r/plain_$round.log
  timeout 100 ./flexjit bench --suite suite256.json --json $r/pairs_$round.jsonl > $r/pairs_$round.log 2>&1 || tail -5 $r/pairs_$round.log
done
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
runs = {k: [load(f"{d}/{k}_{i}.jsonl") for i in (1, 2)] for k in ("plain", "pairs")}
for n in runs["pairs"][0]:
    a = [x.get(n, {}).get("bwd_tflops", 0) for x in runs["plain"]]
    b = [x.get(n, {}).get("bwd_tflops", 0) for x in runs["pairs"]]
    print(f"{n:24} bwd plain {a[0]:4.0f} / {a[1]:4.0f}  pairs {b[0]:4.0f} / {b[1]:4.0f}  x {sum(b)/max(sum(a),1):.2f}")
PY
timeout 200 ./gpu_test_attention --gtest_filter='BwdGpu.WarpSpecializedFastDkdv:BwdGpu.FastModeFallsBackOnlyWhereItMustAndSaysWhy' > $r/t.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t.txt | tr '\n' ' ')"
grep -B2 -A8 Failure $r/t.txt | head -40
grep -E '^\[ +(OK|FAILED) ' $r/t.txt
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter='BwdGpu.FastModeOnePerHeadDim' > $r/san_$tool.log 2>&1; echo "$tool rc=$?: $(grep 'ERROR SUMMARY' $r/san_$tool.log | tr '\n' ' ')"
done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
