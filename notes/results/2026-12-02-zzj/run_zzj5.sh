#!/bin/bash
# zzj5: the short backward kernel by kernel (zzj3 caught only forwards): flexjit's backward
# kernels under ncu at the GPU's own clocks, L2 flushed, beside zzj3's cuDNN list.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzj5}; r=/tmp/zzj5r/r; mkdir -p $r $out
save() { (cd /tmp/zzj5r && tar czf $out/zzj5.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1 FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc5
t0=$(date +%s)
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size,sm__warps_active.avg.pct_of_peak_sustained_active
for prob in causal_s257_b32 causal_s129_b64 llama_short_gqa; do
  ./flexjit bench --suite users.json --only $prob --json $r/bench_$prob.jsonl > /dev/null 2>&1
  timeout 100 ncu --clock-control none --kernel-name regex:bwd --metrics $M --launch-skip 30 --launch-count 9 --csv \
    ./flexjit bench --suite users.json --only $prob > $r/fj_$prob.csv 2> $r/fj_$prob.err
  echo "fj $prob rc=$? $(( $(date +%s) - t0 )) s"
  grep -E 'gpu__time_duration|launch__grid_size' $r/fj_$prob.csv | awk -F'","' '{print $1, $5, $(NF-2), $NF}' | cut -c1-140 | head -12
  save
done
