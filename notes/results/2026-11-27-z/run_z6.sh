#!/usr/bin/env bash
# Session (z) z6, the landing build (HEAD with the decoded work tile and the d256 score halves), in
# one call: 1) the forward A/B against main 3667b6c's binary (two rounds, the order alternating);
# 2) compute-sanitizer on one forward per head dim and one backward per head dim; 3) FlexAttention
# (Triton) forward beside it on the d64 masked problems; 4) the forward GPU tests z4 did not run.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/z6}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
P64=sliding_window_d64,causal_d64,document_causal_d64,prefix_lm_d64,softcap_causal_d64
P128=causal_d128,document_causal_d128,softcap_causal_d128,gqa_causal_d128
for round in 1 2; do
  vs="base new"; [ $round = 2 ] && vs="new base"
  for v in $vs; do
    bin=./flexjit; [ $v = base ] && bin=./flexjit_base
    export FLEXJIT_CACHE_DIR=/tmp/fc_$v
    f=$r/${v}_$round.jsonl
    timeout 90 $bin bench --suite suite64x.json --only $P64 --no-bwd --json $f.a > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    timeout 90 $bin bench --suite suite.json --only $P128 --no-bwd --json $f.b >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    cat $f.a $f.b > $f
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
print(f"{'fwd_tflops':26} {'base':>10} {'new':>10}   new / base")
for n in runs["base"][0]:
    a = [x.get(n, {}).get("fwd_tflops") or 0 for x in runs["base"]]
    b = [x.get(n, {}).get("fwd_tflops") or 0 for x in runs["new"]]
    print(f"{n:26} {'/'.join(f'{y:.0f}' for y in a):>10} {'/'.join(f'{y:.0f}' for y in b):>10}   {sum(b) / max(sum(a), 1):.3f}")
PY
export FLEXJIT_CACHE_DIR=/tmp/fc_tests
san() {  # tool filter timeout
  timeout $3 compute-sanitizer --tool $1 --error-exitcode 1 ./gpu_test_attention --gtest_filter="$2" > $r/san_$1_${2//[^A-Za-z]/_}.txt 2>&1
  echo "$1 $2 rc=$? $(( $(date +%s) - t0 )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$1_${2//[^A-Za-z]/_}.txt | tr '\n' ' ')"
}
san racecheck FwdGpu.WarpSpecializedOnePerHeadDim 90
san synccheck FwdGpu.WarpSpecializedOnePerHeadDim 60
san memcheck FwdGpu.WarpSpecializedOnePerHeadDim 60
san racecheck BwdGpu.FastModeOnePerHeadDim 70
san memcheck BwdGpu.FastModeOnePerHeadDim 60
timeout 150 ./gpu_test_attention --gtest_filter='FwdGpu.HalfPrecisionAndHeadDims:FwdGpu.FullyMaskedRowsGiveZeroAndMinusInfinity:FwdGpu.DifferentQueryAndKeyLengths:FwdGpu.BshdStrides:FwdGpu.HopperWgmmaPath' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[ +(OK|FAILED|PASSED) ' $r/tests.txt | sed -E 's/\[ +(OK|FAILED) +\] //' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; grep -E 'Failure' -A6 $r/tests.txt | head -30
left=$(( 565 - ($(date +%s) - t0) ))
if [ $left -gt 40 ]; then
  PYTHONUNBUFFERED=1 timeout $left python3 peers.py --no-sdpa --no-bwd --suite suite64x.json --only sliding_window_d64,document_causal_d64,prefix_lm_d64 > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
  echo "peers $(( $(date +%s) - t0 )) s"
  grep -o '"name": *"[a-z_0-9]*"\|"fwd_tflops": *[0-9.]*\|"system": *"[^"]*"' $r/peers.jsonl | paste -sd' ' | sed 's/"name"/\n"name"/g' | head -20
fi
cd $out && tar czf z6.tar.gz r && rm -rf r
