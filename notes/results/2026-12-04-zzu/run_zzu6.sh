#!/bin/bash
# zzu6: what zzu4 ran out of time for: BwdGpu.BufferReadsWithThirtyTwoAndSixtyFourBitOffsets (its
# new table + documents cases take the 32-bit reads in the dK/dV kernel that sums dQ), alone.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzu6}; r=/tmp/zzu6r/r; mkdir -p $r $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fct_f timeout 330 ./gta --gtest_filter='BwdGpu.BufferReadsWithThirtyTwoAndSixtyFourBitOffsets' > $r/tests_f.txt 2>&1
echo "tests_f rc=$? $(( $(date +%s) - t0 )) s"; grep -hE "^\[  (PASSED|FAILED) |FAILED  \]|Failure|OK \]" $r/tests_f.txt | head
(cd /tmp/zzu6r && tar czf $out/zzu6.tar.gz r)
