#!/usr/bin/env bash
# (zw) call 3: the learnable-buffer backward (the dQ kernel's way) at the pairs whose tiles (zw) widened,
# old (../zw1) against new, two rounds; then the random-problem tests with many draws, in parallel.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zw3}; r=/tmp/zw3r/r; mkdir -p $r $out
save() { (cd /tmp/zw3r && tar czf $out/zw3.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
for rd in 1 2; do
  for v in old new; do
    [ $rd = 2 ] && v=$([ $v = old ] && echo new || echo old)
    bin=../zw2/flexjit; [ $v = old ] && bin=../zw1/flexjit
    FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 150 $bin bench --suite learnable_pairs.json --json $r/${v}_$rd.jsonl > $r/${v}_$rd.log 2>&1 || tail -3 $r/${v}_$rd.log
  done
done
echo "bench $(( $(date +%s) - t0 )) s"
python3 - $r <<'PY'
import json, sys, glob, collections
r = sys.argv[1]
v = collections.defaultdict(list)
for f in sorted(glob.glob(r + "/*_?.jsonl")):
    ver, rd = f.split("/")[-1][:-6].split("_")
    for line in open(f):
        o = json.loads(line)
        if "name" in o: v[(o["name"], ver)].append((o.get("bwd_tflops", 0), o.get("bwd_configs"), o.get("bwd_mode")))
for n in sorted({k[0] for k in v}):
    print(n, "old", [x[0] for x in v[(n, "old")]], "new", [x[0] for x in v[(n, "new")]], v[(n, "new")][0][1:], v[(n, "old")][0][1:])
PY
save
t1=$(date +%s)
T=../zw2/gpu_test_attention
FLEXJIT_RANDOM_PROBLEMS=30 FLEXJIT_CACHE_DIR=/tmp/ft_1 timeout 330 $T --gtest_filter='RandomProblemsGpu.PaddedBatchesForwardAndBackward' > $r/test_padded.log 2>&1 &
FLEXJIT_RANDOM_PROBLEMS=30 FLEXJIT_CACHE_DIR=/tmp/ft_2 timeout 330 $T --gtest_filter='RandomProblemsGpu.RaggedBatchesForwardAndBackward' > $r/test_ragged.log 2>&1 &
FLEXJIT_RANDOM_PROBLEMS=40 FLEXJIT_CACHE_DIR=/tmp/ft_3 timeout 330 $T --gtest_filter='RandomProblemsGpu.AnyHeadDimForwardAndBackward' > $r/test_any.log 2>&1 &
FLEXJIT_RANDOM_PROBLEMS=30 FLEXJIT_CACHE_DIR=/tmp/ft_4 timeout 330 $T --gtest_filter='DecodeGpu.RandomProblems' > $r/test_decode.log 2>&1 &
FLEXJIT_RANDOM_PROBLEMS=20 FLEXJIT_CACHE_DIR=/tmp/ft_5 timeout 330 $T --gtest_filter='BufferGradGpu.RandomProblems' > $r/test_bufgrad.log 2>&1 &
wait
echo "tests $(( $(date +%s) - t1 )) s"
for f in $r/test_*.log; do echo "$(basename $f): $(grep -c '\[ problem  \]\|problem [0-9]* of seed' $f) problems; $(grep -E '^\[  (PASSED|FAILED)  \]|Failure|threw' $f | head -3 | tr '\n' ' ')"; done
grep -h -B3 -A8 'Failure' $r/test_*.log | head -80
echo "total $(( $(date +%s) - t0 )) s"
save
