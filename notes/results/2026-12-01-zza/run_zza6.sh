#!/usr/bin/env bash
# (zza6) The affine pass's guards once per work tile (rows_take_affine_pass): GPU tests, memcheck on
# the affine tests, then main's templates (tmpl_main: the per-score form), 2051164's (tmpl_landed: the
# guards per key tile) and the build's, order rotated, three rounds.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zza6}; r=/tmp/zza6r/r; mkdir -p $r $out
save() { (cd /tmp/zza6r && tar czf $out/zza6.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
i=0
for f in 'FwdGpu.ScoreModsAffineInKeys:FwdGpu.AffineScoreModWithAnInfiniteSlopeGivesEmptyRows' FwdGpu.SuiteMods FwdGpu.ScoreModsWithConstantFactors 'FwdGpu.HalfPrecision*' 'SeqLensGpu.WarpSpecializedForward' 'SeqLensGpu.Wgmma*' 'RandomProblemsGpu.*' 'Configs/NanGpu.*' 'FwdGpu.GqaCausal:FwdGpu.OddLengths:FwdGpu.Different*:FwdGpu.Bshd*:FwdGpu.Fully*' 'FwdGpu.WarpSpecialized*' 'SeqLensGpu.MmaSync*'; do
  FLEXJIT_CACHE_DIR=/tmp/ft_$i timeout 300 ./gpu_test_attention --gtest_filter=$f > $r/test_$i.log 2>&1 &
  i=$((i+1))
done
wait
echo "tests $(( $(date +%s) - t0 )) s"
for f in $r/test_*.log; do echo "$(basename $f) $(grep -m1 -o 'filter = .*' $f): $(grep -E '^\[  (PASSED|FAILED)  \]|Failure|threw|error' $f | head -6 | tr '\n' ' ')"; done
FLEXJIT_CACHE_DIR=/tmp/ft_0 timeout 200 compute-sanitizer --tool memcheck ./gpu_test_attention --gtest_filter='FwdGpu.ScoreModsAffineInKeys:FwdGpu.AffineScoreModWithAnInfiniteSlopeGivesEmptyRows' > $r/memcheck.log 2>&1; tail -2 $r/memcheck.log
FLEXJIT_CACHE_DIR=/tmp/ft_0 timeout 150 compute-sanitizer --tool synccheck ./gpu_test_attention --gtest_filter=FwdGpu.AffineScoreModWithAnInfiniteSlopeGivesEmptyRows > $r/synccheck.log 2>&1; tail -2 $r/synccheck.log
echo "memcheck $(( $(date +%s) - t0 )) s"
save
export FLEXJIT_AUTOTUNE=off
vs=(main landed new)
for rd in 0 1 2; do
  for k in 0 1 2; do
    v=${vs[$(( (k + rd) % 3 ))]}
    if [ $v = new ]; then unset FLEXJIT_TEMPLATE_DIR; else export FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_$v; fi
    FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 150 ./flexjit bench --suite al.json --no-bwd --json $r/${v}_$rd.jsonl > $r/${v}_$rd.log 2>&1 || tail -3 $r/${v}_$rd.log
  done
done
unset FLEXJIT_TEMPLATE_DIR
python3 - $r <<'PY'
import json, sys, glob, collections, statistics
r = sys.argv[1]
v = collections.defaultdict(list)
for f in sorted(glob.glob(r + "/*_?.jsonl")):
    ver = f.split("/")[-1].split("_")[0]
    for line in open(f):
        o = json.loads(line)
        if "name" in o:
            for k in ("fwd_tflops", "bwd_tflops", "fwd_gbps"):
                if k in o: v[(o["name"], k, ver)].append(o[k])
for (n, k) in sorted({(a, b) for a, b, _ in v}):
    m = statistics.median(v[(n, k, "main")])
    if m > 0: print(f"{n:30s} {k:10s} " + " | ".join(f"{x} {v[(n, k, x)]} x{statistics.median(v[(n, k, x)]) / m:.3f}" for x in ("main", "landed", "new")))
PY
echo "total $(( $(date +%s) - t0 )) s"
save
