#!/usr/bin/env bash
# Session (p) p6: the d64 backward with dQ computed by one warpgroup per tile, by turns (the whole
# 64 columns over 128 kv rows; flexjit) against 4f6ed10 (flexjit_prev: each warpgroup 32 columns),
# fast and ordered, two rounds; then the backward GPU tests touching d64 and the sanitizers.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/p6}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
for round in 1 2; do
  for b in prev new; do
    bin=./flexjit; [ $b = prev ] && bin=./flexjit_prev
    timeout 120 $bin bench --suite suite64x.json --json $r/${b}_fast_$round.jsonl > $r/${b}_fast_$round.log 2>&1 || tail -3 $r/${b}_fast_$round.log
    FLEXJIT_DETERMINISTIC_DQ=ordered timeout 90 $bin bench --suite suite64x.json --bwd-mode deterministic --json $r/${b}_ord_$round.jsonl > $r/${b}_ord_$round.log 2>&1 || tail -3 $r/${b}_ord_$round.log
  done
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
for mode, key in (("fast", "bwd_tflops"), ("ord", "bwd_tflops"), ("fast", "fwd_tflops")):
    pr = [load(f"{d}/prev_{mode}_{i}.jsonl") for i in (1, 2)]; nw = [load(f"{d}/new_{mode}_{i}.jsonl") for i in (1, 2)]
    s4 = [load(f"{d}/new_s4_{i}.jsonl") for i in (1, 2)]
    for n in nw[0]:
        a = [x.get(n, {}).get(key) or 0 for x in pr]; b = [x.get(n, {}).get(key) or 0 for x in nw]
        c = [x.get(n, {}).get(key) or 0 for x in s4] if mode == "fast" and key == "bwd_tflops" else [0, 0]
        print(f"{mode:4} {key:10} {n:24} prev {a[0]:.0f}/{a[1]:.0f}  new {b[0]:.0f}/{b[1]:.0f}  x {sum(b)/max(sum(a),1):.3f}" + (f"  s4 {c[0]:.0f}/{c[1]:.0f} x {sum(c)/max(sum(a),1):.3f}" if c[0] else ""))
auto = load(f"{d}/new_det_auto.jsonl")
for n, j in auto.items(): print("det auto", n, j.get("bwd_tflops"), j.get("dq_path", j.get("bwd_dq_path", "")))
PY
grep -h 'bwd_dkdv\|dq_path\|lean' $r/new_fast_1.log $r/new_ord_1.log $r/new_f256_1.log | head -20 > $r/new_kernels.txt
timeout 300 ./gpu_test_attention --gtest_filter='BwdGpu.WarpSpecializedFastDkdv:BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.HeadDimsAndHalfPrecision:BwdGpu.ShortSequencesWithAnOddGqaRatio:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.SuiteMods:BwdGpu.Gqa8To1AndBshd:BwdGpu.DeterministicModeTakesTheFasterWayPerCall' > $r/t.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t.txt | tr '\n' ' ')"
grep -B2 -A8 Failure $r/t.txt | head -30
grep -E '^\[ +(OK|FAILED) ' $r/t.txt
for tool in synccheck memcheck; do
  left=$(( 560 - ($(date +%s) - t0) )); [ $left -lt 20 ] && { echo "$tool skipped: time"; continue; }
  timeout $left compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter='BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim' > $r/san_$tool.log 2>&1; echo "$tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $r/san_$tool.log | tr '\n' ' ')"
done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
