#!/usr/bin/env bash
# Session (zb) zb10: (za)'s review item, the dQ staging loop shared by the no-slices and the slices
# paths (store_dq_share): the SASS of 10 of 13 dK/dV kernels changed (scheduling; d256 8-32
# instructions fewer), so tests on the slices path and two interleaved rounds against main 30b7b73.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zb10}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_tests timeout 120 ./gpu_test_attention --gtest_filter='BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.Gqa8To1AndBshd:BwdGpu.HeadDimsAndHalfPrecision:BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches:BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[ +(OK|FAILED|PASSED) ' $r/tests.txt | sed -E 's/\[ +(OK|FAILED) +\] //' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; grep -E 'Failure' -A6 $r/tests.txt | head -30
P128=noop_d128,causal_d128,document_causal_d128,softcap_causal_d128
P64=noop_d64,causal_d64,document_causal_d64
P256=noop_d256,causal_d256,softcap_causal_d256,gqa_causal_d256
run() {
  v=$1; bin=./flexjit; [ $v = base ] && bin=./flexjit_main
  FLEXJIT_CACHE_DIR=/tmp/fc_ab_$v timeout 60 $bin bench --suite suite.json --only $P128 --json $r/${v}_128_$2.jsonl > $r/${v}_128_$2.log 2>&1 || tail -2 $r/${v}_128_$2.log
  FLEXJIT_CACHE_DIR=/tmp/fc_ab_$v timeout 50 $bin bench --suite suite64x.json --only $P64 --json $r/${v}_64_$2.jsonl > $r/${v}_64_$2.log 2>&1 || tail -2 $r/${v}_64_$2.log
  FLEXJIT_CACHE_DIR=/tmp/fc_ab_$v timeout 70 $bin bench --suite suite256.json --only $P256 --json $r/${v}_256_$2.jsonl > $r/${v}_256_$2.log 2>&1 || tail -2 $r/${v}_256_$2.log
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
cd $out && tar czf zb10.tar.gz r && rm -rf r
