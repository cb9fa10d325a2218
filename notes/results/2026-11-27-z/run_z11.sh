#!/usr/bin/env bash
# Session (z) z11 (z10 again after its hang: the staged piece on a barrier of its own, and the
# first piece's buffer handed back with the stage), the d256 dK/dV kernel's second dQ piece staged
# in the tile's Q stage (DQ_PIECE_IN_STAGE, the working tree on HEAD): in one call 1) the A/B against HEAD's binary
# (flexjit_head), three interleaved rounds, d256 backward; 2) the d256 backward GPU tests;
# 3) compute-sanitizer (racecheck, synccheck, memcheck) on one backward per head dim; 4) ncu of
# causal d256's dK/dV kernel, head / new / new / head; 5) cuDNN beside it on causal d256.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/z11}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_new timeout 60 ./flexjit bench --suite suite256.json --only causal_d256,noop_d256 > $r/hangcheck.log 2>&1
rc=$?; echo "hang check rc=$rc $(grep -o '"bwd_tflops": *[0-9.]*' $r/hangcheck.log | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
if [ $rc -ne 0 ]; then cd $out && tar czf z11.tar.gz r && rm -rf r; exit 1; fi
export FLEXJIT_CACHE_DIR=/tmp/fc_tests
timeout 150 ./gpu_test_attention --gtest_filter='BwdGpu.WarpSpecializedFastDkdv:BwdGpu.FastModeOnePerHeadDim:BwdGpu.HeadDimsAndHalfPrecision:BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits:BwdGpu.FullyMaskedRowsGiveZeroGradients' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[ +(OK|FAILED|PASSED) ' $r/tests.txt | sed -E 's/\[ +(OK|FAILED) +\] //' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; grep -E 'Failure' -A6 $r/tests.txt | head -30
san() {  # tool filter timeout
  timeout $3 compute-sanitizer --tool $1 --error-exitcode 1 ./gpu_test_attention --gtest_filter="$2" > $r/san_$1_${2//[^A-Za-z]/_}.txt 2>&1
  echo "$1 $2 rc=$? $(( $(date +%s) - t0 )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$1_${2//[^A-Za-z]/_}.txt | tr '\n' ' ')"
}
san racecheck BwdGpu.FastModeOnePerHeadDim 70
san synccheck BwdGpu.FastModeOnePerHeadDim 40
san memcheck BwdGpu.FastModeOnePerHeadDim 60
for round in 1 2; do
  vs="head new"; [ $round = 2 ] && vs="new head"
  for v in $vs; do
    bin=./flexjit; [ $v = head ] && bin=./flexjit_head
    FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 60 $bin bench --suite suite256.json --json $r/${v}_$round.jsonl > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    echo "  $v round $round $(( $(date +%s) - t0 )) s"
  done
done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys
d = sys.argv[1]; V = ["head", "new"]; R = ["1", "2"]
def load(f):
    out = {}
    for l in open(f):
        try: j = json.loads(l)
        except Exception: continue
        if "name" in j: out[j["name"]] = j
    return out
runs = {v: [load(f"{d}/{v}_{i}.jsonl") for i in R] for v in V}
print(f"{'bwd_tflops':26} {'head':>14} {'new':>14}   new / head")
for n in runs["head"][0]:
    a = [x.get(n, {}).get("bwd_tflops") or 0 for x in runs["head"]]
    b = [x.get(n, {}).get("bwd_tflops") or 0 for x in runs["new"]]
    print(f"{n:26} {'/'.join(f'{y:.0f}' for y in a):>14} {'/'.join(f'{y:.0f}' for y in b):>14}   {sum(b) / max(sum(a), 1):.3f}")
PY
for p in causal_d256; do
  for v in head new new2 head2; do
    bin=./flexjit; case $v in head*) bin=./flexjit_head;; esac
    FLEXJIT_CACHE_DIR=/tmp/fc_${v%2} timeout 60 ncu --kernel-name regex:'bwd_dkdv$' --launch-skip 1 --launch-count 1 --section SpeedOfLight $bin bench --suite suite256.json --only $p > $r/ncu_${p}_$v.log 2>&1
    echo "$p $v $(grep -E '^ +Duration|Tensor \(All\)' $r/ncu_${p}_$v.log | awk '{print $1, $(NF-1), $NF}' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
  done
done
left=$(( 570 - ($(date +%s) - t0) ))
[ $left -gt 40 ] && PYTHONUNBUFFERED=1 timeout $left python3 peers.py --suite suite256.json --only causal_d256 > $r/peers.jsonl 2> $r/peers.err
python3 - $r <<'PY'
import json, sys
for l in open(sys.argv[1] + "/peers.jsonl"):
    try: j = json.loads(l)
    except Exception: continue
    if "name" in j: print(j["name"], j["system"], j.get("fwd_tflops"), j.get("bwd_tflops"))
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf z11.tar.gz r && rm -rf r
