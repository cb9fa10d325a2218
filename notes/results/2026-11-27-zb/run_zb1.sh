#!/usr/bin/env bash
# Session (zb) zb1: where a fast backward's time goes outside the dK/dV kernel (main 720c049):
# bench bwd_ms, then per-kernel durations at the card's own clocks (ncu --clock-control none,
# no cache flush) for the preprocess, dK/dV and dQ convert kernels.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zb1}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_zb1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
P=noop_d128,causal_d128,document_causal_d128,noop_d64,sliding_window_d128
timeout 150 ./flexjit_base bench --suite suite.json --only $P > $r/bench.jsonl 2> $r/bench.err
echo "bench $(( $(date +%s) - t0 )) s"
for p in noop_d128 causal_d128 document_causal_d128 noop_d64; do
timeout 120 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --kernel-name regex:'bwd' --launch-skip 12 --launch-count 12 --csv ./flexjit_base bench --suite suite.json --only $p > $r/ncu_$p.csv 2> $r/ncu_$p.err
echo "$p rc=$? $(( $(date +%s) - t0 )) s"
grep -E 'gpu__time_duration' $r/ncu_$p.csv | awk -F'","' '{print $5, $NF}' | sort | uniq -c | head -20
done
grep -h bwd_ms $r/bench.jsonl | python3 -c "
import sys,json
for l in sys.stdin:
  o=json.loads(l); print(o['name'], o['fwd_ms'], o['bwd_ms'], o['bwd_tflops'])"
cd $out && tar czf zb1.tar.gz r && rm -rf r
