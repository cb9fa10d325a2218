#!/usr/bin/env bash
# (zv) call 7: the forward's 128-key tiles at 192/128 through the tests (FwdGpu.HalfPrecisionAndHeadDims
# has 192/128, HeadDimsThatAreNoMultipleOf64 176/120), then memcheck and racecheck on the latter.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zv7}; r=/tmp/zv7r/r; mkdir -p $r $out
save() { (cd /tmp/zv7r && tar czf $out/zv7.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/f1 timeout 200 ./gpu_test_attention --gtest_filter='FwdGpu.HalfPrecisionAndHeadDims:FwdGpu.HeadDimsThatAreNoMultipleOf64:FwdGpu.SuiteMods' > $r/tests.log 2>&1; echo "tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' $r/tests.log | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
grep -A5 Failure $r/tests.log | head -20
for tool in memcheck racecheck; do
  FLEXJIT_CACHE_DIR=/tmp/f1 timeout 200 compute-sanitizer --tool $tool --kernel-name kns=attention_fwd --error-exitcode 9 ./gpu_test_attention --gtest_filter=FwdGpu.HeadDimsThatAreNoMultipleOf64 > $r/$tool.log 2>&1; echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/$tool.log | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
done
save
