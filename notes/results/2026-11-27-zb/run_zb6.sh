#!/usr/bin/env bash
# Session (zb) zb6: dK and dV stored through TMA by one thread (the epilogue). Tests on the new
# binary, then two interleaved rounds against main's binary (fast backward TF/s), d128, d64, d256.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zb6}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_tests timeout 170 ./gpu_test_attention --gtest_filter='BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches:BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.WarpSpecializedFastDkdvManyKvTiles:BwdGpu.Gqa8To1AndBshd:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.FastModeFallsBackOnlyWhereItMustAndSaysWhy:BwdGpu.FullyMaskedRowsGiveZeroGradients:BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[ +(OK|FAILED|PASSED) ' $r/tests.txt | sed -E 's/\[ +(OK|FAILED) +\] //' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; grep -E 'Failure' -A6 $r/tests.txt | head -30
P128=noop_d128,causal_d128,document_causal_d128,gqa_causal_d128,sliding_window_d128,prefix_lm_d128,softcap_causal_d128
P64=noop_d64,causal_d64,document_causal_d64,sliding_window_d64
P256=causal_d256,document_causal_d256
run() {
  v=$1; bin=./flexjit; [ $v = base ] && bin=./flexjit_base
  FLEXJIT_CACHE_DIR=/tmp/fc_ab_$v timeout 90 $bin bench --suite suite.json --only $P128 --json $r/${v}_128_$2.jsonl > $r/${v}_128_$2.log 2>&1 || tail -2 $r/${v}_128_$2.log
  FLEXJIT_CACHE_DIR=/tmp/fc_ab_$v timeout 60 $bin bench --suite suite64x.json --only $P64 --json $r/${v}_64_$2.jsonl > $r/${v}_64_$2.log 2>&1 || tail -2 $r/${v}_64_$2.log
  FLEXJIT_CACHE_DIR=/tmp/fc_ab_$v timeout 60 $bin bench --suite suite256.json --only $P256 --json $r/${v}_256_$2.jsonl > $r/${v}_256_$2.log 2>&1 || tail -2 $r/${v}_256_$2.log
  echo "$v $2 $(( $(date +%s) - t0 )) s"
}
run base 1; run new 1; run new 2; run base 2
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, statistics, math, glob
d = sys.argv[1]
def load(v, i):
    out = {}
    for f in glob.glob(f"{d}/{v}_*_{i}.jsonl"):
        for l in open(f):
            try: j = json.loads(l)
            except Exception: continue
            if "name" in j: out[j["name"]] = j.get("bwd_tflops", 0)
    return out
B = [load("base", i) for i in (1, 2)]; N = [load("new", i) for i in (1, 2)]
ratios = []
for n in B[0]:
    a = [x.get(n, 0) for x in B]; b = [x.get(n, 0) for x in N]
    q = statistics.mean(b) / max(statistics.mean(a), 1e-9); ratios.append(q)
    print(f"{n:22} base {'/'.join(f'{v:.0f}' for v in a)}  new {'/'.join(f'{v:.0f}' for v in b)}  {q:.3f}")
print(f"geomean {math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}")
PY
cd $out && tar czf zb6.tar.gz r && rm -rf r
