#!/usr/bin/env bash
set -u
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
out=${OUT:-/tmp/zo6}; mkdir -p $out
(sleep 25; pkill -INT -f "flexjit_ranker bench"; sleep 80; pkill -KILL -f "flexjit_ranker bench") &
eval "FLEXJIT_CACHE_DIR=/tmp/fc5 timeout 150 cuda-gdb -batch $(cat gdbargs) --args ../next_zo/flexjit_ranker bench --suite ../next_zo/suite.json --only noop_d128 --bwd-mode deterministic" > $out/gdb6.txt 2>&1
echo "gdb rc=$?"
tar czf $out/fc6.tar.gz -C /tmp fc5 2>/dev/null
grep -v "^\[New Thread\|^\[Thread" $out/gdb6.txt | grep -v "^R[0-9]\|^UR\|^P[0-9]\|^UP" | head -120
