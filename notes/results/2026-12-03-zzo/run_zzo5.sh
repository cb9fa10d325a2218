#!/bin/bash
# zzo5: per-sequence lengths without a mask at d72 / d80 take three stages (hopper_default). (1) the
# SeqLensGpu tests (the new UnmaskedHeadDims72And80WithThreeStages first, alone), memcheck and
# synccheck on it; (2) main's binary (flexjit) against the change's (flexjitN) on ragged_72_80.json,
# rounds alternating (no flags: each binary's default).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzo5}; r=/tmp/zzo5r/r; mkdir -p $r $out
save() { (cd /tmp/zzo5r && tar czf $out/zzo5.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fct1 timeout 200 ./gpu_test_attention --gtest_filter='SeqLensGpu.UnmaskedHeadDims72And80WithThreeStages' > $r/new_test.txt 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/fct2 timeout 280 ./gpu_test_attention --gtest_filter='SeqLensGpu.*:-SeqLensGpu.UnmaskedHeadDims72And80WithThreeStages' > $r/seqlens.txt 2>&1 &
for tool in memcheck synccheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_$tool timeout 280 compute-sanitizer --tool $tool --kernel-name kns=attention_bwd_dkdv ./gpu_test_attention --gtest_filter='SeqLensGpu.UnmaskedHeadDims72And80WithThreeStages' > $r/$tool.txt 2>&1 &
done
wait; echo "tests $(( $(date +%s) - t0 )) s"; grep -hE "OK \]|FAILED|PASSED" $r/new_test.txt $r/seqlens.txt | tail -30; grep -h "ERROR SUMMARY" $r/memcheck.txt $r/synccheck.txt; save
export FLEXJIT_AUTOTUNE=off
arm() { a=$1; n=$2; FLEXJIT_CACHE_DIR=/tmp/fc_$a timeout 60 ./$a bench --json $r/${a}_$n.jsonl --suite ragged_72_80.json > $r/${a}_$n.log 2>&1; echo "$a $n rc=$? $(( $(date +%s) - t0 )) s"; save; }
arm flexjit 1; arm flexjitN 1; arm flexjitN 2; arm flexjit 2; arm flexjit 3; arm flexjitN 3
python3 - $r <<'PY' | tee $r/ab.txt
import json, sys, glob, statistics as st
t = {}
for f in glob.glob(sys.argv[1] + "/flexjit*_*.jsonl"):
    a = f.split("/")[-1].rsplit("_", 1)[0]
    for l in open(f):
        if l.startswith("{") and "bwd_ms" in l:
            o = json.loads(l); t.setdefault((o["name"], a), []).append(o["bwd_ms"])
for n in sorted({k[0] for k in t}):
    x, y = t.get((n, "flexjit"), []), t.get((n, "flexjitN"), [])
    if x and y: print(f"{n}: main {x} new {y} main/new median {st.median(x)/st.median(y):.3f}")
PY
echo "done $(( $(date +%s) - t0 )) s"; save
