#!/usr/bin/env bash
set -u
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
out=${OUT:-/tmp/zo5}; mkdir -p $out
which cuda-gdb
(sleep 25; pkill -INT -f "flexjit_ranker bench"; sleep 60; pkill -KILL -f "flexjit_ranker bench") &
FLEXJIT_CACHE_DIR=/tmp/fc5 timeout 150 cuda-gdb -batch -x gdbcmds --args ../next_zo/flexjit_ranker bench --suite ../next_zo/suite.json --only noop_d128 --bwd-mode deterministic > $out/gdb.txt 2>&1
echo "gdb rc=$?"
tar czf $out/fc5.tar.gz -C /tmp fc5 2>/dev/null
grep -v "^\[New Thread\|^\[Thread" $out/gdb.txt | head -150
