#!/usr/bin/env bash
# (zza4) The forward's affine score_mods (Expr::kv_affine_form, attention_fwd.cu.j2's
# apply_tile_mods_affine): GPU tests, memcheck on the new test, then main's templates
# (FLEXJIT_TEMPLATE_DIR=tmpl_main: the per-score form) against the build, alternating, three rounds.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zza4}; r=/tmp/zza4r/r; mkdir -p $r $out
save() { (cd /tmp/zza4r && tar czf $out/zza4.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
i=0
for f in FwdGpu.ScoreModsAffineInKeys FwdGpu.SuiteMods FwdGpu.ScoreModsWithConstantFactors 'FwdGpu.HalfPrecision*' 'SeqLensGpu.WarpSpecializedForward' 'SeqLensGpu.Wgmma*' 'RandomProblemsGpu.*' 'Configs/NanGpu.*' 'FwdGpu.GqaCausal:FwdGpu.OddLengths:FwdGpu.Different*:FwdGpu.Bshd*:FwdGpu.Fully*' 'FwdGpu.WarpSpecialized*' 'SeqLensGpu.MmaSync*'; do
  FLEXJIT_CACHE_DIR=/tmp/ft_$i timeout 300 ./gpu_test_attention --gtest_filter=$f > $r/test_$i.log 2>&1 &
  i=$((i+1))
done
wait
echo "tests $(( $(date +%s) - t0 )) s"
for f in $r/test_*.log; do echo "$(basename $f) $(grep -m1 -o 'filter = .*' $f): $(grep -E '^\[  (PASSED|FAILED)  \]|Failure|threw|error' $f | head -6 | tr '\n' ' ')"; done
FLEXJIT_CACHE_DIR=/tmp/ft_0 timeout 200 compute-sanitizer --tool memcheck ./gpu_test_attention --gtest_filter=FwdGpu.ScoreModsAffineInKeys > $r/memcheck.log 2>&1; tail -2 $r/memcheck.log
echo "memcheck $(( $(date +%s) - t0 )) s"
save
export FLEXJIT_AUTOTUNE=off
for rd in 1 2 3; do
  for v in old new; do
    [ $rd = 2 ] && v=$([ $v = old ] && echo new || echo old)
    if [ $v = old ]; then export FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_main; else unset FLEXJIT_TEMPLATE_DIR; fi
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
    a, b = v[(n, k, "old")], v[(n, k, "new")]
    if a and b and statistics.median(a) > 0: print(f"{n:32s} {k:10s} old {a} new {b} x{statistics.median(b)/statistics.median(a):.3f}")
PY
echo "total $(( $(date +%s) - t0 )) s"
save
