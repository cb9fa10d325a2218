#!/usr/bin/env bash
# Session (q) q10: the backward's GQA launch order (grouped heavy-first): A/B against bf2653b
# (prev), two interleaved rounds, fast mode; then the backward GPU tests and compute-sanitizer
# memcheck, synccheck and racecheck on one fast and one ordered backward per head dim.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/q10}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
V="prev new"
for round in 1 2; do
  for v in $V; do
    bin=./flexjit; [ $v = prev ] && bin=./flexjit_prev
    export FLEXJIT_CACHE_DIR=/tmp/fc_$v
    f=$r/${v}_$round.jsonl
    timeout 90 $bin bench --suite suite.json --only gqa_causal_d128,causal_d128,noop_d128,document_causal_d128 --json $f.a > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    timeout 60 $bin bench --suite gqa.json --json $f.b >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    timeout 60 $bin bench --suite suite64x.json --only gqa_causal_d64 --json $f.c >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    timeout 60 $bin bench --suite suite256x.json --only gqa_causal_d256 --json $f.d >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    cat $f.a $f.b $f.c $f.d > $f
  done
  echo "round $round $(( $(date +%s) - t0 )) s"
done
python3 - $r "$V" <<'PY' | tee $r/summary.txt
import json, sys
d = sys.argv[1]; V = sys.argv[2].split()
def load(f):
    out = {}
    try:
        for l in open(f):
            try: j = json.loads(l)
            except Exception: continue
            if "name" in j: out[j["name"]] = j
    except FileNotFoundError: pass
    return out
runs = {v: [load(f"{d}/{v}_{i}.jsonl") for i in (1, 2)] for v in V}
for n in runs["prev"][0]:
    a = [x.get(n, {}).get("bwd_tflops") or 0 for x in runs["prev"]]; b = [x.get(n, {}).get("bwd_tflops") or 0 for x in runs["new"]]
    print(f"{n:26} bwd prev {a[0]:5.0f}/{a[1]:<5.0f} new {b[0]:5.0f}/{b[1]:<5.0f} x {sum(b)/max(sum(a),1):.3f}  {runs['new'][0].get(n,{}).get('bwd_mode','')}")
PY
export FLEXJIT_CACHE_DIR=/tmp/fc_t
timeout 280 ./gpu_test_attention --gtest_filter='BwdGpu.SuiteMods:BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.Gqa8To1AndBshd:BwdGpu.ShortSequencesWithAnOddGqaRatio:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits:BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.WarpSpecializedFastDkdv:BwdGpu.FullyMaskedRowsGiveZeroGradients:BwdGpu.HeadDimsAndHalfPrecision:Configs/NanGpu.Backward*' > $r/t.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t.txt | tr '\n' ' ')"
grep -B2 -A8 Failure $r/t.txt | head -30
grep -E '^\[ +FAILED ' $r/t.txt
for tool in memcheck synccheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter='BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim' > $r/san_$tool.txt 2>&1; echo "$tool rc=$? $(( $(date +%s) - t0 )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$tool.txt | tr '\n' ' ')"
done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
