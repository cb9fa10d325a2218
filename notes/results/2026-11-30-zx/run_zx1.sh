#!/usr/bin/env bash
# (zx1) What (zw) owed a GPU, and branch zw-dq-pieces-past-io (templates only) against main.
# Stage .gpu/zx1: flexjit and gpu_test_attention (stripped builds of main), templates_new/ (the
# branch's templates, chosen by FLEXJIT_TEMPLATE_DIR), peers.py, compare.py, mla_stages.json,
# learnable_pairs.json, head_dims.json; carry .gpu/zx1; run `bash .gpu/zx1/run_zx1.sh`.
# 1. the branch's backward tests and the random any-head-dim draws, and memcheck on the backward
#    head-dim test (the branch's templates over main's D_REDUCE), all at once;
# 2. A/B of the branch on mla_stages.json, fast and deterministic, two rounds, order alternating;
# 3. head_dims.json: flexjit (main) and the peers in one call.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zx1}; r=/tmp/zx1r/r; mkdir -p $r $out
save() { (cd /tmp/zx1r && tar czf $out/zx1.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $r/gpu.txt
t0=$(date +%s)
NEW="FLEXJIT_TEMPLATE_DIR=$PWD/templates_new"
i=0
for f in BwdGpu.HeadDimsThatAreNoMultipleOf64 BwdGpu.FastModeFallsBackOnlyWhereItMustAndSaysWhy BwdGpu.HeadDimsAndHalfPrecision \
         SeqLensGpu.HeadDimsThatAreNoMultipleOf64 BwdGpu.DeterministicModeSumsDqInOrder; do
  env $NEW FLEXJIT_CACHE_DIR=/tmp/ft_$i timeout 300 ./gpu_test_attention --gtest_filter=$f > $r/test_$f.log 2>&1 &
  i=$((i+1))
done
env $NEW FLEXJIT_RANDOM_PROBLEMS=20 FLEXJIT_CACHE_DIR=/tmp/ft_r timeout 300 ./gpu_test_attention --gtest_filter='RandomProblemsGpu.AnyHeadDimForwardAndBackward' > $r/test_any.log 2>&1 &
env $NEW FLEXJIT_CACHE_DIR=/tmp/ft_m timeout 330 compute-sanitizer --tool memcheck --kernel-name kns=attention_bwd --error-exitcode 9 ./gpu_test_attention --gtest_filter=BwdGpu.HeadDimsThatAreNoMultipleOf64 > $r/memcheck.log 2>&1; echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $r/memcheck.log | tr '\n' ' ')" > $r/memcheck.txt &
wait
cat $r/memcheck.txt
for f in $r/test_*.log; do echo "$(basename $f): $(grep -E '^\[  (PASSED|FAILED)  \]|Failure|threw' $f | head -3 | tr '\n' ' ')"; done
echo "tests $(( $(date +%s) - t0 )) s"
save
export FLEXJIT_AUTOTUNE=off
for rd in 1 2; do
  for v in old new; do
    [ $rd = 2 ] && v=$([ $v = old ] && echo new || echo old)
    e=""; [ $v = new ] && e=$NEW
    for m in fast deterministic; do
      env $e FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 120 ./flexjit bench --suite mla_stages.json --bwd-mode $m --json $r/${v}_${m}_$rd.jsonl > $r/${v}_${m}_$rd.log 2>&1 || tail -3 $r/${v}_${m}_$rd.log
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
        if "name" in o: v[(o["name"], m, ver)].append(round(o.get("bwd_tflops", 0), 1))
for m in ("fast", "deterministic"):
    for n in sorted({k[0] for k in v}):
        a, b = v[(n, m, "old")], v[(n, m, "new")]
        if a and b: print(f"{m:13s} {n:22s} old {a} new {b} x{statistics.median(b)/max(statistics.median(a),1e-9):.3f}")
PY
echo "A/B $(( $(date +%s) - t0 )) s"
save
FLEXJIT_CACHE_DIR=/tmp/fc_hd timeout 150 ./flexjit bench --suite head_dims.json --json $r/hd_flexjit.jsonl > $r/hd_flexjit.log 2>&1 || tail -3 $r/hd_flexjit.log
left=$(( 585 - ($(date +%s) - t0) ))
timeout $left python3 peers.py --suite head_dims.json > $r/hd_peers.jsonl 2> $r/hd_peers.err || tail -3 $r/hd_peers.err
python3 compare.py $r/hd_flexjit.jsonl $r/hd_peers.jsonl
echo "all $(( $(date +%s) - t0 )) s"
save
