#!/usr/bin/env bash
# (zs) call 2: the gpu_test_attention tests zs1's shards did not reach in 330 s (rem.txt: 52 tests,
# the ones each shard was running or had not started), in 4 shards. Logs come back as one tarball.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zs2}; mkdir -p $out /tmp/zs2l
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
F=$(cat rem.txt)
for i in 0 1 2 3; do
  (FLEXJIT_CACHE_DIR=/tmp/fs$i GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 540 ./gpu_test_attention --gtest_filter="$F" > /tmp/zs2l/shard$i.log 2>&1; echo "shard$i rc=$?" >> /tmp/zs2l/rc) &
done
wait
cat /tmp/zs2l/rc
for f in /tmp/zs2l/shard*.log; do echo "$(basename $f): $(grep -cE '^\[       OK' $f) ok, $(grep -cE '^\[  FAILED  \] [A-Z]' $f) failed; last: $(grep -E '^\[ +(RUN|OK|FAILED) +\]' $f | tail -1)"; grep -E '^\[  FAILED  \] [A-Z]' $f | head; done
grep -hE '^\[       OK' /tmp/zs2l/shard*.log | sed -E 's/.*OK \] //' | sort > /tmp/zs2l/ok.txt
(cd /tmp && tar czf $out/zs2_logs.tar.gz zs2l)
echo "total $(( $(date +%s) - t0 )) s"
