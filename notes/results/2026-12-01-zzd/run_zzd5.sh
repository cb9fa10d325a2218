#!/bin/bash
# zzd5: decode split counts over B x keys x page size, the L2 cold (splits_matrix.py): the rule
# (with cuDNN beside it), then forced 1, 2 and 4 splits.
cd "$(dirname "$0")"; g=$PWD
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fjc5 PYTHONPATH=$g/../../python:$g/../../scripts FLEXJIT_LIBRARY=$g/libflexjit.so
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; W=/tmp/w5; mkdir -p $O $W
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
timeout 200 python3 splits_matrix.py --sdpa > $W/rule.jsonl 2> $W/rule.err || tail -3 $W/rule.err
echo "rule $(( $(date +%s) - t0 )) s"
tar czf $O/zzd5.tar.gz -C $W .
for s in 1 2 4; do
  left=$(( 560 - ($(date +%s) - t0) )); [ $left -lt 30 ] && break
  FLEXJIT_DECODE_SPLITS=$s timeout $left python3 splits_matrix.py > $W/s$s.jsonl 2> $W/s$s.err || tail -3 $W/s$s.err
  echo "splits $s $(( $(date +%s) - t0 )) s"
  tar czf $O/zzd5.tar.gz -C $W .
done
