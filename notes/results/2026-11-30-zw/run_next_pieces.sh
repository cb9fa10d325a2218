#!/usr/bin/env bash
# Prepared in (zw), not run (no GPU time left): branch zw-dq-pieces-past-io against main.
# Stage: .gpu/pn/{old,new}/{flexjit,gpu_test_attention} (stripped builds of main and the branch),
# this script, mla_stages.json and learnable_pairs.json; carry .gpu/pn; run `bash .gpu/pn/run_next_pieces.sh`.
# 1. correctness of the branch: the head-dim tests, the fallback test (64/256), the random any-head-dim
#    draws, memcheck on the backward head-dim test; 2. A/B fast and deterministic on mla_stages.json.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/pn}; r=/tmp/pnr/r; mkdir -p $r $out
save() { (cd /tmp/pnr && tar czf $out/pn.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
i=0
for f in BwdGpu.HeadDimsThatAreNoMultipleOf64 BwdGpu.FastModeFallsBackOnlyWhereItMustAndSaysWhy BwdGpu.HeadDimsAndHalfPrecision \
         SeqLensGpu.HeadDimsThatAreNoMultipleOf64 BwdGpu.DeterministicModeSumsDqInOrder; do
  FLEXJIT_CACHE_DIR=/tmp/ft_$i timeout 200 ./new/gpu_test_attention --gtest_filter=$f > $r/test_$f.log 2>&1 &
  i=$((i+1))
done
FLEXJIT_RANDOM_PROBLEMS=20 FLEXJIT_CACHE_DIR=/tmp/ft_r timeout 200 ./new/gpu_test_attention --gtest_filter='RandomProblemsGpu.AnyHeadDimForwardAndBackward' > $r/test_any.log 2>&1 &
wait
for f in $r/test_*.log; do echo "$(basename $f): $(grep -E '^\[  (PASSED|FAILED)  \]|Failure|threw' $f | head -3 | tr '\n' ' ')"; done
save
export FLEXJIT_AUTOTUNE=off
for rd in 1 2; do
  for v in old new; do
    [ $rd = 2 ] && v=$([ $v = old ] && echo new || echo old)
    for m in fast deterministic; do
      FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 120 ./$v/flexjit bench --suite mla_stages.json --bwd-mode $m --json $r/${v}_${m}_$rd.jsonl > $r/${v}_${m}_$rd.log 2>&1 || tail -3 $r/${v}_${m}_$rd.log
    done
  done
done
python3 - $r <<'PY'
import json, sys, glob, collections, statistics
r = sys.argv[1]
v = collections.defaultdict(list)
for f in sorted(glob.glob(r + "/*_*_?.jsonl")):
    ver, m, rd = f.split("/")[-1][:-6].split("_")
    for line in open(f):
        o = json.loads(line)
        if "name" in o: v[(o["name"], m, ver)].append(o.get("bwd_tflops", 0))
for m in ("fast", "deterministic"):
    for n in sorted({k[0] for k in v}):
        a, b = v[(n, m, "old")], v[(n, m, "new")]
        if a and b: print(f"{m:13s} {n:22s} old {a} new {b} x{statistics.median(b)/max(statistics.median(a),1e-9):.3f}")
PY
save
left=$(( 580 - ($(date +%s) - t0) ))
FLEXJIT_CACHE_DIR=/tmp/fc_ms timeout $left compute-sanitizer --tool memcheck --kernel-name kns=attention_bwd --error-exitcode 9 ./new/gpu_test_attention --gtest_filter=BwdGpu.FastModeFallsBackOnlyWhereItMustAndSaysWhy > $r/memcheck.log 2>&1; echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $r/memcheck.log | tr '\n' ' ')"
save
