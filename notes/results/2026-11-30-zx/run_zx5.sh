#!/usr/bin/env bash
# (zx5) The pairs of CTAs removed (GQA >= 8 takes the 4:1 kernel's way): the build of the working
# tree (flexjit, gpu_test_attention) against main (flexjit_old: zx4's binary, main's C++, with
# main's templates through FLEXJIT_TEMPLATE_DIR=templates_old), fast mode, two rounds; the GQA 8:1
# tests, the random any-head-dim draws, memcheck on the new slab test and racecheck / synccheck on
# the sanitizers' test (FastModeOnePerHeadDim: d256 with GQA 8:1 now without pairs).
# Stage .gpu/zx5: flexjit, flexjit_old, gpu_test_attention, templates_old/, pairs_past_io.json;
# carry .gpu/zx5; run `bash .gpu/zx5/run_zx5.sh`.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zx5}; r=/tmp/zx5r/r; mkdir -p $r $out
save() { (cd /tmp/zx5r && tar czf $out/zx5.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $r/gpu.txt
t0=$(date +%s)
i=0
for f in BwdGpu.TilesWithAWholeSlabPastTheHeadDim BwdGpu.Gqa8To1AndBshd SeqLensGpu.WarpSpecializedBackward BwdGpu.FastModeOnePerHeadDim; do
  FLEXJIT_CACHE_DIR=/tmp/ft_$i timeout 200 ./gpu_test_attention --gtest_filter=$f > $r/test_$f.log 2>&1 &
  i=$((i+1))
done
FLEXJIT_RANDOM_PROBLEMS=16 FLEXJIT_CACHE_DIR=/tmp/ft_r timeout 200 ./gpu_test_attention --gtest_filter='RandomProblemsGpu.AnyHeadDimForwardAndBackward' > $r/test_any.log 2>&1 &
(FLEXJIT_CACHE_DIR=/tmp/ft_m timeout 200 compute-sanitizer --tool memcheck --kernel-name kns=attention_bwd --error-exitcode 9 ./gpu_test_attention --gtest_filter=BwdGpu.TilesWithAWholeSlabPastTheHeadDim > $r/memcheck.log 2>&1; echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $r/memcheck.log | tr '\n' ' ')" > $r/memcheck.txt) &
for tool in racecheck synccheck; do
  (FLEXJIT_CACHE_DIR=/tmp/ft_$tool timeout 220 compute-sanitizer --tool $tool --kernel-name kns=attention_bwd_dkdv --error-exitcode 9 ./gpu_test_attention --gtest_filter=BwdGpu.FastModeOnePerHeadDim > $r/$tool.log 2>&1; echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/$tool.log | tr '\n' ' ')" > $r/$tool.txt) &
done
wait
cat $r/memcheck.txt $r/racecheck.txt $r/synccheck.txt
for f in $r/test_*.log; do echo "$(basename $f): $(grep -E '^\[  (PASSED|FAILED)  \]|Failure|threw' $f | head -4 | tr '\n' ' ')"; done
echo "tests $(( $(date +%s) - t0 )) s"
save
export FLEXJIT_AUTOTUNE=off
for rd in 1 2; do
  for v in old new; do
    [ $rd = 2 ] && v=$([ $v = old ] && echo new || echo old)
    if [ $v = old ]; then run="env FLEXJIT_TEMPLATE_DIR=$PWD/templates_old ./flexjit_old"; else run=./flexjit; fi
    FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 100 $run bench --suite pairs_past_io.json --json $r/${v}_fast_$rd.jsonl > $r/${v}_fast_$rd.log 2>&1 || tail -3 $r/${v}_fast_$rd.log
  done
done
python3 - $r <<'PY'
import json, sys, glob, collections, statistics
r = sys.argv[1]
v = collections.defaultdict(list); cfg = {}
for f in sorted(glob.glob(r + "/*_fast_?.jsonl")):
    ver = f.split("/")[-1].split("_")[0]
    for line in open(f):
        o = json.loads(line)
        if "name" in o: v[(o["name"], ver)].append(round(o.get("bwd_tflops", 0), 1)); cfg[(o["name"], ver)] = o.get("bwd_configs")
for n in sorted({k[0] for k in v}):
    a, b = v[(n, "old")], v[(n, "new")]
    if a and b: print(f"{n:22s} old {a} {cfg[(n,'old')]} new {b} {cfg[(n,'new')]} x{statistics.median(b)/max(statistics.median(a),1e-9):.3f}")
PY
echo "all $(( $(date +%s) - t0 )) s"
save
