#!/bin/bash
# zzr2: c0c7552's build (STATS_PAIRS at every head dim up to 64) against this build (33-64 only),
# four alternating rounds on d32/d48/d64; then more random problems (40 per test) on this build.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzr2}; r=/tmp/zzr2r/r; mkdir -p $r $out
save() { (cd /tmp/zzr2r && tar czf $out/zzr2.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
arm() { v=$1; n=$2; if [ $v = old ]; then b=./flexjit_c0; else b=./flexjit; fi
  FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 80 $b bench --json $r/${v}_$n.jsonl --suite zzr.json > $r/${v}_$n.log 2>&1; echo "$v $n rc=$? $(( $(date +%s) - t0 )) s"; save; }
for n in 1 2 3 4; do
  if [ $((n % 2)) = 1 ]; then arm old $n; arm new $n; else arm new $n; arm old $n; fi
done
python3 - $r <<'PY' | tee $r/ab.txt
import json, sys, glob, statistics as st
t = {}
for f in glob.glob(sys.argv[1] + "/*_[1234].jsonl"):
    a = f.split("/")[-1].rsplit("_", 1)[0]
    for l in open(f):
        if l.startswith("{") and "bwd_ms" in l:
            o = json.loads(l); t.setdefault((o["name"], a), []).append(o["bwd_ms"])
for n in sorted({k[0] for k in t}):
    a, b = t.get((n, "old"), [0]), t.get((n, "new"), [0])
    print(f"{n}: old {' '.join(f'{x:.4f}' for x in a)} | new {' '.join(f'{x:.4f}' for x in b)} | old/new {st.median(a)/st.median(b):.3f}")
PY
left=$(( 560 - ($(date +%s) - t0) ))
echo "random problems with ${left} s left"
go() { n=$1; f=$2; FLEXJIT_RANDOM_PROBLEMS=40 FLEXJIT_CACHE_DIR=/tmp/fct_$n timeout $left ./gpu_test_attention --gtest_filter="$f" > $r/tests_$n.txt 2>&1; echo "tests_$n rc=$? $(( $(date +%s) - t0 )) s" >> $r/rc.txt; }
go a 'RandomProblemsGpu.PaddedBatchesForwardAndBackward' &
go b 'RandomProblemsGpu.AnyHeadDimForwardAndBackward' &
go c 'RandomProblemsGpu.RaggedBatchesForwardAndBackward' &
wait
cat $r/rc.txt; grep -hE "OK \]|FAILED|PASSED|Failure" $r/tests_*.txt | head -40
echo "done $(( $(date +%s) - t0 )) s"; save
