#!/usr/bin/env bash
# Session (p) pz: the final code (7c0caa5, dQ by turns at d64) on the d64 problems beside every
# peer, FA4 and the FLASH backend included (.fa4a copied by the call before, this one carrying
# .fa4b); plus noop and causal d128 as the run's controls against pf_peers.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/pz}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
(cd ../.. && timeout 150 bash .fa4b/install.sh) > $r/install.log 2>&1; echo "install rc=$? $(( $(date +%s) - t0 )) s: $(tail -1 $r/install.log)"
only=noop_d64,causal_d64,noop_d128,causal_d128
timeout 60 ./flexjit bench --suite suite.json --only $only --json $r/flexjit.jsonl > $r/flexjit.log 2>&1 || tail -3 $r/flexjit.log
timeout 60 ./flexjit bench --suite suite.json --only $only --bwd-mode deterministic --json $r/flexjit_det.jsonl > $r/flexjit_det.log 2>&1 || tail -3 $r/flexjit_det.log
export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages
PYTHONUNBUFFERED=1 timeout 200 python3 peers.py --flash --suite suite.json --only "$only" > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
python3 compare.py $r/flexjit.jsonl $r/peers.jsonl > $r/compare.txt 2>&1; cat $r/compare.txt
grep -h '"bwd_tflops"' $r/flexjit_det.jsonl | python3 -c "import sys,json; [print('det', j['name'], j['bwd_tflops'], j.get('bwd_mode')) for j in map(json.loads, sys.stdin)]"
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
