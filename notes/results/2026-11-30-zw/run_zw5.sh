#!/usr/bin/env bash
# (zw) call 5: zw4's random draws alone (any head dim, 30 problems), then compute-sanitizer memcheck on
# the forward and backward head-dim tests (the k-steps over the tensors' own columns).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zw5}; r=/tmp/zw5r/r; mkdir -p $r $out
save() { (cd /tmp/zw5r && tar czf $out/zw5.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
T=../zw4/gpu_test_attention
FLEXJIT_RANDOM_PROBLEMS=30 FLEXJIT_CACHE_DIR=/tmp/ft_r timeout 150 $T --gtest_filter='RandomProblemsGpu.AnyHeadDimForwardAndBackward' > $r/test_any.log 2>&1
echo "any rc=$? $(grep -c '\[ problem  \]' $r/test_any.log) problems $(grep -E '^\[  (PASSED|FAILED)  \]|Failure|threw' $r/test_any.log | head -3 | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
save
for t in FwdGpu BwdGpu; do
  kns=attention_fwd; [ $t = BwdGpu ] && kns=attention_bwd
  FLEXJIT_CACHE_DIR=/tmp/fc_$t timeout 100 compute-sanitizer --tool memcheck --kernel-name kns=$kns --error-exitcode 9 $T --gtest_filter=$t.HeadDimsThatAreNoMultipleOf64 > $r/memcheck_$t.log 2>&1
  echo "memcheck $t rc=$? $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $r/memcheck_$t.log | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
done
save
