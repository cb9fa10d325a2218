#!/usr/bin/env bash
# Session (z) z1, score halves at d256 (the build under test against main 3667b6c's binary): in one
# call 1) the backward GPU tests that run the d256 kernels; 2) two binaries' A/B in interleaved
# rounds on d256 problems, fast backward TF/s; 3) compute-sanitizer on one backward per head dim;
# 4) cuDNN / FA2 / FlexAttention (peers.py with SDPA) on causal and noop d256 beside this build.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/z1}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_CACHE_DIR=/tmp/fc_tests
timeout 200 ./gpu_test_attention --gtest_filter='BwdGpu.WarpSpecializedFastDkdv:BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.HeadDimsAndHalfPrecision:BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits:BwdGpu.FullyMaskedRowsGiveZeroGradients' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[ +(OK|FAILED|PASSED) ' $r/tests.txt | sed -E 's/\[ +(OK|FAILED) +\] //' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; grep -E 'Failure' -A6 $r/tests.txt | head -30
for round in 1 2; do
  vs="base new"; [ $round = 2 ] && vs="new base"
  for v in $vs; do
    bin=./flexjit; [ $v = base ] && bin=./flexjit_base
    export FLEXJIT_CACHE_DIR=/tmp/fc_$v
    timeout 120 $bin bench --suite suite256.json --json $r/${v}_$round.jsonl > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    echo "  $v round $round $(( $(date +%s) - t0 )) s"
  done
done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys
d = sys.argv[1]; V = ["base", "new"]; R = ["1", "2"]
def load(f):
    out = {}
    for l in open(f):
        try: j = json.loads(l)
        except Exception: continue
        if "name" in j: out[j["name"]] = j
    return out
runs = {v: [load(f"{d}/{v}_{i}.jsonl") for i in R] for v in V}
print(f"{'bwd_tflops':26} {'base':>10} {'new':>10}   new / base")
for n in runs["base"][0]:
    a = [x.get(n, {}).get("bwd_tflops") or 0 for x in runs["base"]]
    b = [x.get(n, {}).get("bwd_tflops") or 0 for x in runs["new"]]
    print(f"{n:26} {'/'.join(f'{y:.0f}' for y in a):>10} {'/'.join(f'{y:.0f}' for y in b):>10}   {sum(b) / max(sum(a), 1):.3f}")
PY
export FLEXJIT_CACHE_DIR=/tmp/fc_tests
san() {  # tool filter timeout
  timeout $3 compute-sanitizer --tool $1 --error-exitcode 1 ./gpu_test_attention --gtest_filter="$2" > $r/san_$1_${2//[^A-Za-z]/_}.txt 2>&1
  echo "$1 $2 rc=$? $(( $(date +%s) - t0 )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$1_${2//[^A-Za-z]/_}.txt | tr '\n' ' ')"
}
san racecheck BwdGpu.FastModeOnePerHeadDim 70
san synccheck BwdGpu.FastModeOnePerHeadDim 40
san memcheck BwdGpu.FastModeOnePerHeadDim 60
san synccheck BwdGpu.OrderedModeOnePerHeadDim 40
left=$(( 570 - ($(date +%s) - t0) ))
if [ $left -gt 40 ]; then
  PYTHONUNBUFFERED=1 timeout $left python3 peers.py --suite suite256.json --only causal_d256,noop_d256 > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
  echo "peers $(( $(date +%s) - t0 )) s"
  grep -o '"name": *"[a-z_0-9]*"\|"fwd_tflops": *[0-9.]*\|"bwd_tflops": *[0-9.]*\|"system": *"[^"]*"\|"impl": *"[^"]*"' $r/peers.jsonl | paste -sd' ' | sed 's/"name"/\n"name"/g' | head -20
fi
cd $out && tar czf z1.tar.gz r && rm -rf r
