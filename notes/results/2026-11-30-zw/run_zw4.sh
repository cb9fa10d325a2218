#!/usr/bin/env bash
# (zw) call 4: Q Kᵀ and dO Vᵀ summed over the tensors' own columns (D_REDUCE / DV_REDUCE: the tiles'
# zero columns past them skipped): the head-dim GPU tests first, then old (../zw2, zw2's binary) against
# new on head_dims.json and mla.json, two rounds in alternating order (forward and fast backward).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zw4}; r=/tmp/zw4r/r; mkdir -p $r $out
save() { (cd /tmp/zw4r && tar czf $out/zw4.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
i=0
for f in FwdGpu.HeadDimsThatAreNoMultipleOf64 BwdGpu.HeadDimsThatAreNoMultipleOf64 SeqLensGpu.HeadDimsThatAreNoMultipleOf64 \
         FwdGpu.HalfPrecisionAndHeadDims BwdGpu.HeadDimsAndHalfPrecision BwdGpu.FastModeFallsBackOnlyWhereItMustAndSaysWhy; do
  FLEXJIT_CACHE_DIR=/tmp/ft_$i timeout 200 ./gpu_test_attention --gtest_filter=$f > $r/test_$f.log 2>&1 &
  i=$((i+1))
done
FLEXJIT_RANDOM_PROBLEMS=30 FLEXJIT_CACHE_DIR=/tmp/ft_r timeout 200 ./gpu_test_attention --gtest_filter='RandomProblemsGpu.AnyHeadDimForwardAndBackward' > $r/test_any.log 2>&1 &
FLEXJIT_RANDOM_PROBLEMS=12 FLEXJIT_CACHE_DIR=/tmp/ft_b timeout 200 ./gpu_test_attention --gtest_filter='BufferGradGpu.RelativePositionTableCausalGqaOddLengths:BufferGradGpu.RandomProblems' > $r/test_bufgrad.log 2>&1 &
wait
echo "tests $(( $(date +%s) - t0 )) s"
for f in $r/test_*.log; do echo "$(basename $f): $(grep -E '^\[  (PASSED|FAILED)  \]|Failure|threw' $f | head -3 | tr '\n' ' ')"; done
grep -h -B3 -A8 'Failure' $r/test_*.log | head -60
save
export FLEXJIT_AUTOTUNE=off
for rd in 1 2; do
  for v in old new; do
    [ $rd = 2 ] && v=$([ $v = old ] && echo new || echo old)
    bin=./flexjit; [ $v = old ] && bin=../zw2/flexjit
    FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 120 $bin bench --suite head_dims.json --json $r/${v}_hd_$rd.jsonl > $r/${v}_hd_$rd.log 2>&1 || tail -3 $r/${v}_hd_$rd.log
    FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 100 $bin bench --suite mla.json --only mla_causal,mla_noop,causal_d136_dv72 --json $r/${v}_mla_$rd.jsonl > $r/${v}_mla_$rd.log 2>&1 || tail -3 $r/${v}_mla_$rd.log
  done
done
echo "bench $(( $(date +%s) - t0 )) s"
python3 - $r <<'PY'
import json, sys, glob, collections, statistics
r = sys.argv[1]
v = collections.defaultdict(list)
for f in sorted(glob.glob(r + "/*_*_?.jsonl")):
    ver, s, rd = f.split("/")[-1][:-6].split("_")
    for line in open(f):
        o = json.loads(line)
        if "name" in o: v[(o["name"], ver)].append((o.get("fwd_tflops", 0), o.get("bwd_tflops", 0)))
for n in sorted({k[0] for k in v}):
    a, b = v[(n, "old")], v[(n, "new")]
    if a and b:
        fa = statistics.median(x[0] for x in a); fb = statistics.median(x[0] for x in b)
        ba = statistics.median(x[1] for x in a); bb = statistics.median(x[1] for x in b)
        print(f"{n:24s} fwd old {' '.join(f'{x[0]:6.1f}' for x in a)} new {' '.join(f'{x[0]:6.1f}' for x in b)} x{fb/fa:.3f} | bwd old {' '.join(f'{x[1]:6.1f}' for x in a)} new {' '.join(f'{x[1]:6.1f}' for x in b)} x{bb/max(ba,1e-9):.3f}")
PY
echo "total $(( $(date +%s) - t0 )) s"
save
