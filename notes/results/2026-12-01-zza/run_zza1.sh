#!/usr/bin/env bash
# (zza1) The fold's kept scores as bits (nonzero mask) in place of the sign marker: GPU tests of
# every backward with a non-constant score_mod derivative, memcheck + racecheck on the soft-capping
# backward, then main's templates (FLEXJIT_TEMPLATE_DIR=tmpl_main) against the build, alternating, three rounds.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zza1}; r=/tmp/zza1r/r; mkdir -p $r $out
save() { (cd /tmp/zza1r && tar czf $out/zza1.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
i=0
for f in BwdGpu.ScoreModsWithConstantFactors BwdGpu.SuiteMods BwdGpu.NanInDoReachesOnlyTheGradientsThatReadIt 'BufferGradGpu.*' 'RandomProblemsGpu.*' 'SeqLensGpu.WarpSpecialized*Backward' 'Configs/NanGpu.*' 'BwdGpu.OddLengths*' 'BwdGpu.Fully*' 'BwdGpu.TwoRuns*'; do
  FLEXJIT_CACHE_DIR=/tmp/ft_$i timeout 280 ./gpu_test_attention --gtest_filter=$f > $r/test_$i.log 2>&1 &
  i=$((i+1))
done
wait
echo "tests $(( $(date +%s) - t0 )) s"
for f in $r/test_*.log; do echo "$(basename $f) $(grep -m1 -o 'filter = .*' $f): $(grep -E '^\[  (PASSED|FAILED)  \]|Failure|threw' $f | head -6 | tr '\n' ' ')"; done
FLEXJIT_CACHE_DIR=/tmp/ft_0 timeout 150 compute-sanitizer --tool memcheck ./gpu_test_attention --gtest_filter=BwdGpu.ScoreModsWithConstantFactors > $r/memcheck_bwd.log 2>&1; tail -2 $r/memcheck_bwd.log
FLEXJIT_CACHE_DIR=/tmp/ft_2 timeout 150 compute-sanitizer --tool racecheck ./gpu_test_attention --gtest_filter=BwdGpu.NanInDoReachesOnlyTheGradientsThatReadIt > $r/racecheck_bwd.log 2>&1; tail -2 $r/racecheck_bwd.log
echo "sanitizers $(( $(date +%s) - t0 )) s"
save
export FLEXJIT_AUTOTUNE=off
for rd in 1 2 3; do
  for v in old new; do
    [ $rd = 2 ] && v=$([ $v = old ] && echo new || echo old)
    if [ $v = old ]; then export FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_main; else unset FLEXJIT_TEMPLATE_DIR; fi
    FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 150 ./flexjit bench --suite sc.json --json $r/${v}_$rd.jsonl > $r/${v}_$rd.log 2>&1 || tail -3 $r/${v}_$rd.log
    FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 100 ./flexjit bench --suite sc.json --only softcap_causal_d128,softcap_causal_d64 --bwd-mode deterministic --json $r/${v}det_$rd.jsonl > $r/${v}det_$rd.log 2>&1 || tail -3 $r/${v}det_$rd.log
  done
done
unset FLEXJIT_TEMPLATE_DIR
python3 - $r <<'PY'
import json, sys, glob, collections, statistics
r = sys.argv[1]
bw = collections.defaultdict(list); fw = collections.defaultdict(list)
for f in sorted(glob.glob(r + "/*_?.jsonl")):
    ver = f.split("/")[-1].split("_")[0]
    for line in open(f):
        o = json.loads(line)
        if "name" in o:
            bw[(o["name"], ver)].append(round(o.get("bwd_tflops", 0), 1)); fw[(o["name"], ver)].append(round(o.get("fwd_tflops", 0), 1))
for o, nw in (("old", "new"), ("olddet", "newdet")):
    for n in sorted({k[0] for k in bw if k[1] == o}):
        a, b = bw[(n, o)], bw[(n, nw)]
        if a and b: print(f"{o:6s} {n:26s} bwd old {a} new {b} x{statistics.median(b)/statistics.median(a):.3f}")
PY
echo "total $(( $(date +%s) - t0 )) s"
save
