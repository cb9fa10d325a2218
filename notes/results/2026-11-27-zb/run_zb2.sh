#!/usr/bin/env bash
# Session (zb) zb2: dQ converted in the dK/dV kernel (its last adder per query tile): 1) the
# backward GPU tests on the changed kernels; 2) compute-sanitizer on one fast backward per head
# dim and on the keyless-tiles test; 3) two interleaved rounds against main's binary (fast
# backward TF/s, d128 suite and the d64 problems).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zb2}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
FLEXJIT_CACHE_DIR=/tmp/fc_tests timeout 200 ./gpu_test_attention --gtest_filter='BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches:BwdGpu.FastModeOnePerHeadDim:BwdGpu.WarpSpecializedFastDkdv:BwdGpu.WarpSpecializedFastDkdvManyKvTiles:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.ShortSequencesWithAnOddGqaRatio:BwdGpu.FullyMaskedRowsGiveZeroGradients:Configs/NanGpu.BackwardPropagatesNan/*:Configs/NanGpu.MaskedNanScoresDoNotLeak/*:BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits:BwdGpu.SuiteMods:BwdGpu.Gqa8To1AndBshd:BwdGpu.LaterWorkOnTheCallersStreamSeesEveryGradient:BwdGpu.CapturedInAGraphAndReplayedGivesTheSameGradients' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[ +(OK|FAILED|PASSED) ' $r/tests.txt | sed -E 's/\[ +(OK|FAILED) +\] //' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; grep -E 'Failure' -A6 $r/tests.txt | head -40
[ "${SAN:-0}" = 1 ] && for tool in racecheck synccheck memcheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_tests timeout 90 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.FastModeOnePerHeadDim > $r/san_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$tool.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
done
P128=noop_d128,causal_d128,document_causal_d128,gqa_causal_d128,sliding_window_d128,prefix_lm_d128,alibi_causal_d128,softcap_causal_d128
P64=noop_d64,causal_d64,document_causal_d64,sliding_window_d64
for round in 1 2; do
  vs="base new"; [ $round = 2 ] && vs="new base"
  for v in $vs; do
    bin=./flexjit; [ $v = base ] && bin=./flexjit_base
    FLEXJIT_CACHE_DIR=/tmp/fc_ab_$v timeout 100 $bin bench --suite suite.json --only $P128 --json $r/${v}_128_$round.jsonl > $r/${v}_128_$round.log 2>&1 || tail -2 $r/${v}_128_$round.log
    FLEXJIT_CACHE_DIR=/tmp/fc_ab_$v timeout 60 $bin bench --suite suite64x.json --only $P64 --json $r/${v}_$round.jsonl > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    echo "$v $round $(( $(date +%s) - t0 )) s"
  done
done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, statistics, math
d = sys.argv[1]
def load(f):
    out = {}
    try:
        for l in open(f):
            try: j = json.loads(l)
            except Exception: continue
            if "name" in j: out[j["name"]] = (j.get("fwd_tflops", 0), j.get("bwd_tflops", 0))
    except OSError: pass
    return out
names = "noop_d128,causal_d128,document_causal_d128,gqa_causal_d128,sliding_window_d128,prefix_lm_d128,alibi_causal_d128,softcap_causal_d128,noop_d64,causal_d64,document_causal_d64,sliding_window_d64".split(",")
ratios = []
for n in names:
    suf = "_128" if n.endswith("d128") else ""
    a = [load(f"{d}/base{suf}_{i}.jsonl").get(n, (0, 0))[1] for i in (1, 2)]
    b = [load(f"{d}/new{suf}_{i}.jsonl").get(n, (0, 0))[1] for i in (1, 2)]
    x = statistics.mean(b) / max(statistics.mean(a), 1e-9); ratios.append(x)
    print(f"{n:22} base {'/'.join(f'{v:.0f}' for v in a)}  new {'/'.join(f'{v:.0f}' for v in b)}  {x:.3f}")
print(f"geomean {math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}")
PY
cd $out && tar czf zb2.tar.gz r && rm -rf r
