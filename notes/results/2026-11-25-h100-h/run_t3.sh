#!/usr/bin/env bash
# Where the time of a masked decode step goes: each kernel's duration (ncu) beside the bench's time.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/t3}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
m="gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__cycles_active.avg,smsp__cycles_active.avg"
for prob in decode_sliding_alibi_b16_kv32k decode_b16_kv32k decode_spec4_b16_kv32k; do
  for c in m16n128w4s3t m16n64w4s3; do
    timeout 120 ncu --metrics $m --launch-skip 8 --launch-count 4 --csv ./flexjit bench --suite suite.json --only $prob --decode-config $c > /tmp/n.csv 2>/tmp/n.err || tail -2 /tmp/n.err
    echo "== $prob $c"; grep -E '"(gpu__time|dram__|sm__|smsp__)' /tmp/n.csv | awk -F'","' '{print $5, $(NF-2), $NF}' | sed 's/"//g' | tee -a $out/ncu.txt
  done
done
