#!/usr/bin/env bash
# (zt) call 7: the two sanitizer runs zt3-zt5 left without the d256 cases: memcheck on
# SeqLensGpu.WarpSpecializedOrderedBackward and synccheck on SeqLensGpu.WarpSpecializedBackward.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zt7}; L=/tmp/zt7l; mkdir -p $out $L
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
(FLEXJIT_CACHE_DIR=/tmp/fm timeout 200 compute-sanitizer --tool memcheck --kernel-name kns=bwd_dkdv --error-exitcode 9 ./gpu_test_attention --gtest_filter='SeqLensGpu.WarpSpecializedOrderedBackward' > $L/memcheck.log 2>&1; echo "memcheck rc=$?" >> $L/rc) &
(FLEXJIT_CACHE_DIR=/tmp/fs timeout 200 compute-sanitizer --tool synccheck --kernel-name kns=bwd_dkdv --error-exitcode 9 ./gpu_test_attention --gtest_filter='SeqLensGpu.WarpSpecializedBackward' > $L/synccheck.log 2>&1; echo "synccheck rc=$?" >> $L/rc) &
wait
cat $L/rc; grep -hE 'ERROR SUMMARY|^\[  (PASSED|FAILED)|^\[       OK|Failure' $L/memcheck.log $L/synccheck.log | head
(cd /tmp && tar czf $out/zt7_logs.tar.gz zt7l)
echo "total $(( $(date +%s) - t0 )) s"
