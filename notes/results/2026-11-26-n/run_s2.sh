#!/usr/bin/env bash
# Session (n) s2: ncu on the d256 warp-specialised backward (column slices), causal d256.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/s2}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
p=causal_d256
timeout 300 ncu --kernel-name regex:flexjit_attention_bwd_dkdv --launch-skip 2 --launch-count 1 --set full --import-source yes -o $r/$p ./flexjit bench --suite suite256.json --only $p > $r/ncu_$p.log 2>&1; echo "$p rc=$? $(( $(date +%s) - t0 )) s"
ncu --import $r/$p.ncu-rep --page details > $r/${p}_details.txt 2>&1
ncu --import $r/$p.ncu-rep --page source --csv --print-source sass > $r/${p}_sass.csv 2>&1
python3 top_stalls.py $r/${p}_sass.csv > $r/${p}_top.txt 2>&1; cat $r/${p}_top.txt | head -50
grep -E "Duration|SM Frequency|Compute \(SM\) Throughput|Memory Throughput|L2 Cache Throughput|Registers Per|Achieved Occupancy|Issue Slots Busy|One or More Eligible|Warp Cycles Per Issued" $r/${p}_details.txt | head -20
gzip $r/${p}_sass.csv; rm -f $r/$p.ncu-rep
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
