#!/bin/bash
# zzq1: the statistics read as 8-byte pairs in the d64 fast dK/dV kernel (tv_new) against main's
# templates (tv_main), fast backward, d64 suite, rounds alternating; then the d64 GPU tests and a
# memcheck on the new templates.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzq1}; r=/tmp/zzq1r/r; mkdir -p $r $out
save() { (cd /tmp/zzq1r && tar czf $out/zzq1.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > $r/gpu.txt
arm() { v=$1; n=$2; shift 2; FLEXJIT_TEMPLATE_DIR=$PWD/tv_$v FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 120 ./flexjit bench --json $r/${v}_$n.jsonl --suite d64_suite.json "$@" > $r/${v}_$n.log 2>&1; echo "$v $n rc=$? $(( $(date +%s) - t0 )) s"; save; }
arm main 0 --only noop_d64; arm new 0 --only noop_d64
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
echo "bench done $(( $(date +%s) - t0 )) s"; save
export FLEXJIT_TEMPLATE_DIR=$PWD/tv_new
FLEXJIT_CACHE_DIR=/tmp/fct timeout 200 ./gpu_test_attention --gtest_filter='BwdGpu.SuiteMods:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.ShortSequencesWithAnOddGqaRatio:BwdGpu.NanInDoReachesOnlyTheGradientsThatReadIt:BwdGpu.WarpSpecializedFastDkdv*:BwdGpu.FastModeOnePerHeadDim:BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches:SeqLensGpu.WgmmaHeadDim64:BwdGpu.FastModeSplitsGqaGroupsOverCtas' > $r/tests.txt 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -hE "OK \]|FAILED|PASSED|Failure" $r/tests.txt | head -30; save
FLEXJIT_CACHE_DIR=/tmp/fct timeout 120 compute-sanitizer --tool memcheck ./gpu_test_attention --gtest_filter='SeqLensGpu.WgmmaHeadDim64' > $r/memcheck.txt 2>&1
echo "memcheck rc=$? $(( $(date +%s) - t0 )) s"; grep -hE "ERROR SUMMARY|OK \]|FAILED" $r/memcheck.txt | head; save
