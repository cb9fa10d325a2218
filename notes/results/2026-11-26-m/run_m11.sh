#!/usr/bin/env bash
# Session (m) m11: where the warp-specialised dK/dV kernel's time goes (committed code): ncu
# --set full with SASS-level stall samples, noop d128 and noop d64 backward (fast mode).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/m11}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
for p in noop_d128 noop_d64; do
  timeout 200 ncu --kernel-name regex:flexjit_attention_bwd_dkdv --launch-skip 2 --launch-count 1 --set full --import-source yes -o $r/$p ./flexjit bench --suite suite.json --only $p > $r/ncu_$p.log 2>&1; echo "$p rc=$? $(( $(date +%s) - t0 )) s"
  ncu --import $r/$p.ncu-rep --page details > $r/${p}_details.txt 2>&1
  ncu --import $r/$p.ncu-rep --page source --csv --print-source sass > $r/${p}_sass.csv 2>&1
  rm -f $r/$p.ncu-rep
done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
