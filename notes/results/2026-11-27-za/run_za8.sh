#!/usr/bin/env bash
# Session (za) za8: dS without the P == 0 select on the masked kernels' full tiles too (tF: tiles
# that are neither partial nor crossing an end keep every score), template A/B on HEAD's binary:
# 1) backward tests with tF's templates; 2) two interleaved rounds, fast backward TF/s.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/za8}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
FLEXJIT_TEMPLATE_DIR=$PWD/tF FLEXJIT_CACHE_DIR=/tmp/fc_tF timeout 90 ./gpu_test_attention --gtest_filter='BwdGpu.FastModeOnePerHeadDim:BwdGpu.FullyMaskedRowsGiveZeroGradients:Configs/NanGpu.MaskedNanScoresDoNotLeak/*:BwdGpu.SuiteMods' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[ +(OK|FAILED|PASSED) ' $r/tests.txt | sed -E 's/\[ +(OK|FAILED) +\] //' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; grep -E 'Failure' -A6 $r/tests.txt | head -20
P=causal_d128,alibi_causal_d128,softcap_causal_d128,sliding_window_d128,prefix_lm_d128,document_causal_d128,gqa_causal_d128,causal_d64
for round in 1 2; do
  vs="head tF"; [ $round = 2 ] && vs="tF head"
  for v in $vs; do
    td=""; [ $v = tF ] && td=$PWD/tF
    FLEXJIT_TEMPLATE_DIR=$td FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 35 ./flexjit bench --suite suite.json --only $P --json $r/${v}_$round.jsonl > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
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
            if "name" in j: out[j["name"]] = j.get("bwd_tflops", 0)
    except OSError: pass
    return out
rs = []
for n in ["causal_d128","alibi_causal_d128","softcap_causal_d128","sliding_window_d128","prefix_lm_d128","document_causal_d128","gqa_causal_d128","causal_d64"]:
    a = [load(f"{d}/head_{i}.jsonl").get(n, 0) for i in (1, 2)]
    b = [load(f"{d}/tF_{i}.jsonl").get(n, 0) for i in (1, 2)]
    x = statistics.mean(b) / max(statistics.mean(a), 1e-9); rs.append(max(x, 1e-9))
    print(f"{n:22} head {'/'.join(f'{v:.0f}' for v in a)}  tF {'/'.join(f'{v:.0f}' for v in b)}  {x:.3f}")
print(f"geomean {math.exp(sum(map(math.log, rs)) / len(rs)):.3f}")
PY
cd $out && tar czf za8.tar.gz r && rm -rf r
