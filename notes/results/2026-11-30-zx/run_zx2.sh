#!/usr/bin/env bash
# (zx2) The backward loads only the 64-column slabs that hold the tensors' columns (D_SLABS_LOADED):
# templates_new (the working tree) against templates_old (main at 3708090, with the dQ pieces past
# the tensor's columns skipped: zx1), on one binary (main's build, FLEXJIT_TEMPLATE_DIR chooses).
# Stage .gpu/zx2: flexjit, gpu_test_attention, templates_old/, templates_new/, mla_stages.json,
# learnable_pairs.json, head_dims.json; carry .gpu/zx2; run `bash .gpu/zx2/run_zx2.sh`.
# 1. tests on the new templates (backward head dims, fallback, ordered, seq lens, random draws),
#    memcheck on the fallback test (64/256, 192/64: skipped slabs of Q, K, dO and V), at once;
# 2. A/B fast and deterministic on mla_stages.json, two rounds, order alternating; learnable pairs
#    fast, two rounds;
# 3. head_dims.json on the new templates (the README's table).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zx2}; r=/tmp/zx2r/r; mkdir -p $r $out
save() { (cd /tmp/zx2r && tar czf $out/zx2.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $r/gpu.txt
t0=$(date +%s)
NEW="FLEXJIT_TEMPLATE_DIR=$PWD/templates_new"
OLD="FLEXJIT_TEMPLATE_DIR=$PWD/templates_old"
i=0
for f in BwdGpu.HeadDimsThatAreNoMultipleOf64 BwdGpu.HeadDimsAndHalfPrecision \
         SeqLensGpu.HeadDimsThatAreNoMultipleOf64 BwdGpu.DeterministicModeSumsDqInOrder 'BufferGrad*:*Learnable*' BwdGpu.TilesWithAWholeSlabPastTheHeadDim; do
  env $NEW FLEXJIT_CACHE_DIR=/tmp/ft_$i timeout 300 ./gpu_test_attention --gtest_filter="$f" > $r/test_$i.log 2>&1 &
  i=$((i+1))
done
env $NEW FLEXJIT_RANDOM_PROBLEMS=24 FLEXJIT_CACHE_DIR=/tmp/ft_r timeout 300 ./gpu_test_attention --gtest_filter='RandomProblemsGpu.AnyHeadDimForwardAndBackward' > $r/test_any.log 2>&1 &
(env $NEW FLEXJIT_CACHE_DIR=/tmp/ft_m timeout 330 compute-sanitizer --tool memcheck --kernel-name kns=attention_bwd --error-exitcode 9 ./gpu_test_attention --gtest_filter=BwdGpu.FastModeFallsBackOnlyWhereItMustAndSaysWhy > $r/memcheck.log 2>&1; echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $r/memcheck.log | tr '\n' ' ')" > $r/memcheck.txt) &
wait
cat $r/memcheck.txt
for f in $r/test_*.log; do echo "$(basename $f): $(grep -E '^\[  (PASSED|FAILED)  \]|Failure|threw|tests? from .* ran' $f | head -3 | tr '\n' ' ')"; done
echo "tests $(( $(date +%s) - t0 )) s"
save
export FLEXJIT_AUTOTUNE=off
for rd in 1 2; do
  for v in old new; do
    [ $rd = 2 ] && v=$([ $v = old ] && echo new || echo old)
    e=$OLD; [ $v = new ] && e=$NEW
    for m in fast deterministic; do
      env $e FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 120 ./flexjit bench --suite mla_stages.json --bwd-mode $m --json $r/${v}_${m}_$rd.jsonl > $r/${v}_${m}_$rd.log 2>&1 || tail -3 $r/${v}_${m}_$rd.log
    done
    env $e FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 120 ./flexjit bench --suite learnable_pairs.json --json $r/${v}_learn_$rd.jsonl > $r/${v}_learn_$rd.log 2>&1 || tail -3 $r/${v}_learn_$rd.log
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
for m in ("fast", "deterministic", "learn"):
    for n in sorted({k[0] for k in v}):
        a, b = v[(n, m, "old")], v[(n, m, "new")]
        if a and b: print(f"{m:13s} {n:24s} old {a} new {b} x{statistics.median(b)/max(statistics.median(a),1e-9):.3f}")
PY
echo "A/B $(( $(date +%s) - t0 )) s"
save
left=$(( 580 - ($(date +%s) - t0) ))
env $NEW FLEXJIT_CACHE_DIR=/tmp/fc_hd timeout $left ./flexjit bench --suite head_dims.json --json $r/hd_new.jsonl > $r/hd_new.log 2>&1 || tail -3 $r/hd_new.log
grep -h '"name"' $r/hd_new.jsonl | python3 -c "
import sys, json
for l in sys.stdin:
    o = json.loads(l); print(f\"{o['name']:20s} fwd {o['fwd_tflops']:.0f} bwd {o.get('bwd_tflops', 0):.0f} {o.get('bwd_configs')}\")"
echo "all $(( $(date +%s) - t0 )) s"
save
