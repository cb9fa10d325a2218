#!/usr/bin/env bash
# (zv) call 8: padded head dims with per-sequence lengths (both modes) and with learnable buffers.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zv8}; r=/tmp/zv8r/r; mkdir -p $r $out
save() { (cd /tmp/zv8r && tar czf $out/zv8.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
i=0
for f in SeqLensGpu.HeadDimsThatAreNoMultipleOf64 BufferGradGpu.RelativePositionTableCausalGqaOddLengths; do
  (FLEXJIT_CACHE_DIR=/tmp/f$i timeout 250 ./gpu_test_attention --gtest_filter=$f > $r/$f.log 2>&1; echo "rc=$?" >> $r/$f.log) &
  i=$((i+1))
done
wait
for f in $r/*.log; do echo "$(basename $f): $(grep -E '^\[  (PASSED|FAILED)|rc=' $f | tr '\n' ' ')"; done
grep -h -A6 Failure $r/*.log | head -30
echo "total $(( $(date +%s) - t0 )) s"
save
