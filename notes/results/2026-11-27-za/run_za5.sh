#!/usr/bin/env bash
# Session (za) za5, the landing call for the deferred d64 dQ and the unmasked dS without the
# P == 0 select (the final code): 1) the backward GPU tests that run the changed kernels;
# 2) compute-sanitizer racecheck / synccheck / memcheck on one fast backward per head dim;
# 3) two interleaved rounds against main's binary (fast backward TF/s); 4) the peers on noop and
# causal d64 (SDPA: cuDNN, FA2; FlexAttention), same call.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/za5}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
FLEXJIT_CACHE_DIR=/tmp/fc_tests timeout 170 ./gpu_test_attention --gtest_filter='BwdGpu.FastModeOnePerHeadDim:BwdGpu.WarpSpecializedFastDkdvManyKvTiles:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.ShortSequencesWithAnOddGqaRatio:BwdGpu.FullyMaskedRowsGiveZeroGradients:Configs/NanGpu.BackwardPropagatesNan/*:Configs/NanGpu.MaskedNanScoresDoNotLeak/*:BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits:BwdGpu.SuiteMods' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[ +(OK|FAILED|PASSED) ' $r/tests.txt | sed -E 's/\[ +(OK|FAILED) +\] //' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; grep -E 'Failure' -A6 $r/tests.txt | head -30
for tool in racecheck synccheck memcheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_tests timeout 75 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.FastModeOnePerHeadDim > $r/san_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$tool.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
done
P=noop_d64,causal_d64,gqa_causal_d64,sliding_window_d64,document_causal_d64,alibi_causal_d64,softcap_causal_d64,prefix_lm_d64
for round in 1 2; do
  vs="base new"; [ $round = 2 ] && vs="new base"
  for v in $vs; do
    bin=./flexjit; [ $v = base ] && bin=./flexjit_base
    FLEXJIT_CACHE_DIR=/tmp/fc_ab timeout 90 $bin bench --suite suite64x.json --only $P --json $r/${v}_$round.jsonl > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    FLEXJIT_CACHE_DIR=/tmp/fc_ab timeout 40 $bin bench --suite suite.json --only noop_d128,causal_d128 --json $r/${v}_128_$round.jsonl > $r/${v}_128_$round.log 2>&1 || tail -2 $r/${v}_128_$round.log
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
names = ["noop_d64","causal_d64","gqa_causal_d64","sliding_window_d64","document_causal_d64","alibi_causal_d64","softcap_causal_d64","prefix_lm_d64","noop_d128","causal_d128"]
ratios = []
for n in names:
    suf = "_128" if n.endswith("d128") else ""
    a = [load(f"{d}/base{suf}_{i}.jsonl").get(n, (0, 0))[1] for i in (1, 2)]
    b = [load(f"{d}/new{suf}_{i}.jsonl").get(n, (0, 0))[1] for i in (1, 2)]
    x = statistics.mean(b) / max(statistics.mean(a), 1e-9); ratios.append(x)
    print(f"{n:22} base {'/'.join(f'{v:.0f}' for v in a)}  new {'/'.join(f'{v:.0f}' for v in b)}  {x:.3f}")
print(f"geomean {math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}")
PY
timeout 120 python3 peers.py --suite suite.json --only noop_d64,causal_d64 > $r/peers.jsonl 2> $r/peers.err; echo "peers rc=$? $(( $(date +%s) - t0 )) s"
python3 -c "
import json, sys
for l in open('$r/peers.jsonl'):
    try: j = json.loads(l)
    except Exception: continue
    print({k: (round(v) if isinstance(v, float) else v) for k, v in j.items()})
" | head -20; tail -3 $r/peers.err
cd $out && tar czf za5.tar.gz r && rm -rf r
