#!/bin/bash
# zzq3 (landing build c0c7552): random problems, lengths and head-dim tests on the embedded
# templates; then main's templates (tv_main) against the landing build's own on GQA 4:1, d32,
# d48 and odd lengths, rounds alternating.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzq3}; r=/tmp/zzq3r/r; mkdir -p $r $out
save() { (cd /tmp/zzq3r && tar czf $out/zzq3.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
FLEXJIT_CACHE_DIR=/tmp/fct FLEXJIT_RANDOM_PROBLEMS=40 timeout 300 ./gpu_test_attention --gtest_filter='RandomProblemsGpu.*:SeqLensGpu.WarpSpecializedBackward:SeqLensGpu.DefaultConfigsBshdSqBelowSkvAndDeterminism:BwdGpu.HeadDimsThatAreNoMultipleOf64:BwdGpu.ShortSequencesWithAnOddGqaRatio' > $r/tests.txt 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -hE "OK \]|FAILED|PASSED|Failure|seed" $r/tests.txt | head -30; save
arm() { v=$1; n=$2; shift 2; if [ $v = main ]; then td="FLEXJIT_TEMPLATE_DIR=$PWD/tv_main"; else td=; fi
  env $td FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 100 ./flexjit bench --json $r/${v}_$n.jsonl --suite d64_more.json "$@" > $r/${v}_$n.log 2>&1; echo "$v $n rc=$? $(( $(date +%s) - t0 )) s"; save; }
for n in 1 2 3; do
  if [ $((n % 2)) = 1 ]; then arm main $n; arm new $n; else arm new $n; arm main $n; fi
done
python3 - $r <<'PY' | tee $r/ab.txt
import json, sys, glob, statistics as st
t = {}
for f in glob.glob(sys.argv[1] + "/*_[123].jsonl"):
    a = f.split("/")[-1].rsplit("_", 1)[0]
    for l in open(f):
        if l.startswith("{") and "bwd_ms" in l:
            o = json.loads(l); t.setdefault((o["name"], a), []).append(o["bwd_ms"])
for n in sorted({k[0] for k in t}):
    a, b = t.get((n, "main"), [0]), t.get((n, "new"), [0])
    print(f"{n}: main {' '.join(f'{x:.4f}' for x in a)} | new {' '.join(f'{x:.4f}' for x in b)} | main/new {st.median(a)/st.median(b):.3f}")
PY
echo "done $(( $(date +%s) - t0 )) s"; save
