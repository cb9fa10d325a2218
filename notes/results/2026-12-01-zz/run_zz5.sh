#!/usr/bin/env bash
# (zz5) The prescale with the product as a kernel parameter (FlexjitFwdParams::score_scale): GPU tests
# (the new ones, every test whose mods carry constant factors, the tuner's own launches), memcheck,
# then main (flexjit_main, f41f453) against the build on the soft-capping rows, two rounds.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zz5}; r=/tmp/zz5r/r; mkdir -p $r $out
save() { (cd /tmp/zz5r && tar czf $out/zz5.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
i=0
for f in FwdGpu.ScoreModsWithConstantFactors BwdGpu.ScoreModsWithConstantFactors FwdGpu.SuiteMods BwdGpu.SuiteMods 'BufferGradGpu.*' DecodeGpu.ModsReadLengthsBuffersAndParams 'RandomProblemsGpu.*' DecodeGpu.TmaRatiosQueryCountsModsAndLongSplits 'NegativeScaleGpu.*' 'SeqLensGpu.WarpSpecialized*'; do
  FLEXJIT_CACHE_DIR=/tmp/ft_$i timeout 260 ./gpu_test_attention --gtest_filter=$f > $r/test_$f.log 2>&1 &
  i=$((i+1))
done
FLEXJIT_CACHE_DIR=/tmp/ft_tune timeout 260 ./gpu_test_tune > $r/test_tune.log 2>&1 &
wait
echo "tests $(( $(date +%s) - t0 )) s"
for f in $r/test_*.log; do echo "$(basename $f): $(grep -E '^\[  (PASSED|FAILED)  \]|Failure|threw' $f | head -6 | tr '\n' ' ')"; done
timeout 120 compute-sanitizer --tool memcheck ./gpu_test_attention --gtest_filter=BwdGpu.ScoreModsWithConstantFactors > $r/memcheck_bwd.log 2>&1; tail -2 $r/memcheck_bwd.log
save
export FLEXJIT_AUTOTUNE=off
X=softcap_causal_d64,softcap_causal_d256,softcap_noop_d128,softcap_causal_d128
for rd in 1 2; do
  for v in old new; do
    [ $rd = 2 ] && v=$([ $v = old ] && echo new || echo old)
    if [ $v = old ]; then run=./flexjit_main; else run=./flexjit; fi
    FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 100 $run bench --suite sc.json --only $X --json $r/${v}_fast_$rd.x.jsonl > $r/${v}_$rd.x.log 2>&1 || tail -3 $r/${v}_$rd.x.log
  done
done
python3 - $r <<'PY'
import json, sys, glob, collections, statistics
r = sys.argv[1]
bw = collections.defaultdict(list); fw = collections.defaultdict(list)
for f in sorted(glob.glob(r + "/*_fast_?.x.jsonl")):
    ver = f.split("/")[-1].split("_")[0]
    for line in open(f):
        o = json.loads(line)
        if "name" in o:
            bw[(o["name"], ver)].append(round(o.get("bwd_tflops", 0), 1)); fw[(o["name"], ver)].append(round(o.get("fwd_tflops", 0), 1))
for n in sorted({k[0] for k in bw}):
    a, b = bw[(n, "old")], bw[(n, "new")]; fa, fb = fw[(n, "old")], fw[(n, "new")]
    print(f"{n:22s} bwd old {a} new {b} x{statistics.median(b)/statistics.median(a):.3f} | fwd old {fa} new {fb} x{statistics.median(fb)/statistics.median(fa):.3f}")
PY
echo "total $(( $(date +%s) - t0 )) s"
save
