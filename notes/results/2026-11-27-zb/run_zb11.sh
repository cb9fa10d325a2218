#!/usr/bin/env bash
# Session (zb) zb11: the review's mend (the preprocess template's dQ-accumulator row address in one
# helper; its SASS scheduling changed): backward tests and two rounds against the previous binary.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zb11}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_tests timeout 90 ./gpu_test_attention --gtest_filter='BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.TuningLaunchesLeaveNoDqBehind:BwdGpu.OddLengthsAndDifferentLengths' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[ +(OK|FAILED|PASSED) ' $r/tests.txt | sed -E 's/\[ +(OK|FAILED) +\] //' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; grep -E 'Failure' -A6 $r/tests.txt | head -20
for round in 1 2; do for v in prev new; do bin=./flexjit; [ $v = prev ] && bin=./flexjit_prev
  FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 40 $bin bench --suite suite.json --only document_causal_d128,causal_d128 --json $r/${v}_$round.jsonl > /dev/null 2>&1
done; done
python3 - $r <<'PY'
import json, sys, glob
d = sys.argv[1]
for n in ("document_causal_d128", "causal_d128"):
    for v in ("prev", "new"):
        xs = []
        for f in sorted(glob.glob(f"{d}/{v}_*.jsonl")):
            for l in open(f):
                try: j = json.loads(l)
                except Exception: continue
                if j.get("name") == n: xs.append(round(j["bwd_tflops"]))
        print(n, v, xs)
PY
cd $out && tar czf zb11.tar.gz r && rm -rf r
