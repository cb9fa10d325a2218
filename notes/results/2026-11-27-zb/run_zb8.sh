#!/usr/bin/env bash
# Session (zb) zb8: K and V issued first in the dK/dV kernel (before the walk's table reads and the
# barrier setup). Tests on the new binary; three binaries in rounds: base = main 720c049, mid =
# 30b7b73 (dq_accum zeroed by the preprocess), new = mid + K/V first (fast backward TF/s).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zb8}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_tests timeout 200 ./gpu_test_attention --gtest_filter='BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.OrderedModeNamesEachTileAfterItLands:BwdGpu.WarpSpecializedFastDkdvManyKvTiles:BwdGpu.Gqa8To1AndBshd:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.FullyMaskedRowsGiveZeroGradients:BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits:BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches:BwdGpu.TuningLaunchesLeaveNoDqBehind:BwdGpu.HeadDimsAndHalfPrecision' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[ +(OK|FAILED|PASSED) ' $r/tests.txt | sed -E 's/\[ +(OK|FAILED) +\] //' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; grep -E 'Failure' -A6 $r/tests.txt | head -30
P128=noop_d128,causal_d128,document_causal_d128,gqa_causal_d128,sliding_window_d128,prefix_lm_d128,alibi_causal_d128,softcap_causal_d128
P64=noop_d64,causal_d64,document_causal_d64,sliding_window_d64,prefix_lm_d64
run() {
  v=$1; bin=./flexjit; [ $v = base ] && bin=./flexjit_base; [ $v = mid ] && bin=./flexjit_mid
  FLEXJIT_CACHE_DIR=/tmp/fc_ab_$v timeout 90 $bin bench --suite suite.json --only $P128 --json $r/${v}_128_$2.jsonl > $r/${v}_128_$2.log 2>&1 || tail -2 $r/${v}_128_$2.log
  FLEXJIT_CACHE_DIR=/tmp/fc_ab_$v timeout 60 $bin bench --suite suite64x.json --only $P64 --json $r/${v}_64_$2.jsonl > $r/${v}_64_$2.log 2>&1 || tail -2 $r/${v}_64_$2.log
  FLEXJIT_CACHE_DIR=/tmp/fc_ab_$v timeout 60 $bin bench --suite suite256.json --only causal_d256,document_causal_d256 --json $r/${v}_256_$2.jsonl > $r/${v}_256_$2.log 2>&1 || tail -2 $r/${v}_256_$2.log
  echo "$v $2 $(( $(date +%s) - t0 )) s"
}
run base 1; run mid 1; run new 1; run new 2; run mid 2; run base 2
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, statistics, math, glob
d = sys.argv[1]
def load(v, i):
    out = {}
    for f in glob.glob(f"{d}/{v}_*_{i}.jsonl"):
        for l in open(f):
            try: j = json.loads(l)
            except Exception: continue
            if "name" in j: out[j["name"]] = (j.get("fwd_tflops", 0), j.get("bwd_tflops", 0))
    return out
V = {v: [load(v, i) for i in (1, 2)] for v in ("base", "mid", "new")}
geo = {"mid": [], "new": []}
for n in V["base"][0]:
    a = [x.get(n, (0, 0))[1] for x in V["base"]]
    line = f"{n:22} base {'/'.join(f'{v:.0f}' for v in a)}"
    for v in ("mid", "new"):
        b = [x.get(n, (0, 0))[1] for x in V[v]]
        q = statistics.mean(b) / max(statistics.mean(a), 1e-9); geo[v].append(q)
        line += f"  {v} {'/'.join(f'{x:.0f}' for x in b)} {q:.3f}"
    print(line)
print("geomean " + " ".join(f"{v} {math.exp(sum(map(math.log, g)) / len(g)):.3f}" for v, g in geo.items()))
PY
cd $out && tar czf zb8.tar.gz r && rm -rf r
