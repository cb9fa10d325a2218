#!/usr/bin/env bash
# (zz3) GPU tests of the prescaled score_mods: the new tests and every test whose mods carry
# constant factors (soft-capping, ALiBi, learnable buffers, decoding, random problems).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zz3}; r=/tmp/zz3r/r; mkdir -p $r $out
save() { (cd /tmp/zz3r && tar czf $out/zz3.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
run_set() {
  local i=0
  for f in "$@"; do
    FLEXJIT_CACHE_DIR=/tmp/ft_$i timeout 280 ./gpu_test_attention --gtest_filter=$f > $r/test_$f.log 2>&1 &
    i=$((i+1))
  done
  wait
}
run_set FwdGpu.ScoreModsWithConstantFactors BwdGpu.ScoreModsWithConstantFactors FwdGpu.SuiteMods BwdGpu.SuiteMods 'BufferGradGpu.*' DecodeGpu.ModsReadLengthsBuffersAndParams
echo "set 1 $(( $(date +%s) - t0 )) s"
run_set 'RandomProblemsGpu.*' DecodeGpu.RandomProblems DecodeGpu.TmaRatiosQueryCountsModsAndLongSplits 'NegativeScaleGpu.*' BwdGpu.NanInDoReachesOnlyTheGradientsThatReadIt 'SeqLensGpu.*'
echo "set 2 $(( $(date +%s) - t0 )) s"
for f in $r/test_*.log; do echo "$(basename $f): $(grep -E '^\[  (PASSED|FAILED)  \]|Failure|threw' $f | head -6 | tr '\n' ' ')"; done
timeout 200 compute-sanitizer --tool memcheck ./gpu_test_attention --gtest_filter=FwdGpu.ScoreModsWithConstantFactors > $r/memcheck_fwd.log 2>&1; tail -3 $r/memcheck_fwd.log
echo "total $(( $(date +%s) - t0 )) s"
save
