#!/usr/bin/env bash
# Session (za) za2: the deferred dQ at d64 (DQ_DEFERRED) against main's binary, and two template
# variants on the new binary (tB: the ring release after the probabilities; tC: no P == 0 select
# in dS without masks; tBC both). 1) the d64-touching backward GPU tests on the new build;
# 2) two interleaved benchmark rounds, fast backward TF/s, the d64 suite.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/za2}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_tests timeout 200 ./gpu_test_attention --gtest_filter='BwdGpu.WarpSpecializedFastDkdv:BwdGpu.WarpSpecializedFastDkdvManyKvTiles:BwdGpu.FastModeOnePerHeadDim:BwdGpu.SuiteMods:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.ShortSequencesWithAnOddGqaRatio:BwdGpu.FullyMaskedRowsGiveZeroGradients:Configs/NanGpu.BackwardPropagatesNan/*' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[ +(OK|FAILED|PASSED) ' $r/tests.txt | sed -E 's/\[ +(OK|FAILED) +\] //' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; grep -E 'Failure' -A6 $r/tests.txt | head -30
P=noop_d64,causal_d64,gqa_causal_d64,sliding_window_d64,document_causal_d64,alibi_causal_d64,softcap_causal_d64,prefix_lm_d64
for round in 1 2; do
  vs="base tA tB tC tBC"; [ $round = 2 ] && vs="tBC tC tB tA base"
  for v in $vs; do
    if [ $v = base ]; then bin=./flexjit_base; td=""; else bin=./flexjit; td=$PWD/$v; fi
    FLEXJIT_TEMPLATE_DIR=$td FLEXJIT_CACHE_DIR=/tmp/fc_ab timeout 100 $bin bench --suite suite64x.json --only $P --json $r/${v}_$round.jsonl > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    echo "$v $round $(( $(date +%s) - t0 )) s"
  done
done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, statistics
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
names = ["noop_d64","causal_d64","gqa_causal_d64","sliding_window_d64","document_causal_d64","alibi_causal_d64","softcap_causal_d64","prefix_lm_d64"]
vs = ["base","tA","tB","tC","tBC"]
print(f"{'problem':22}" + "".join(f"{v:>14}" for v in vs))
for n in names:
    row = {v: [load(f"{d}/{v}_{i}.jsonl").get(n, 0) for i in (1, 2)] for v in vs}
    b = statistics.mean(row["base"]) or 1
    print(f"{n:22}" + "".join(f"{'/'.join(f'{x:.0f}' for x in row[v]):>9} {statistics.mean(row[v])/b:.3f}" for v in vs))
PY
cd $out && tar czf za2.tar.gz r && rm -rf r
