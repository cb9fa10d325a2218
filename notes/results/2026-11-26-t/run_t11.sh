#!/usr/bin/env bash
# Session (t) t11: the landed build (9fe5a71) beside FlexAttention (Triton) on the buffer-reading
# problems, forward and backward, one run.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/t11}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fct11
t0=$(date +%s)
only=document_causal_d128,document_nested_causal_d128,relpos_learnable_causal_d128,alibi_causal_d128
timeout 90 ./flexjit bench --suite suite.json --only $only --json $r/flexjit.jsonl > $r/flexjit.log 2>&1 || tail -3 $r/flexjit.log
echo "flexjit $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 150 python3 peers.py --no-sdpa --suite suite.json --only "$only" > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s"
python3 compare.py $r/flexjit.jsonl $r/peers.jsonl 2>&1 | tee $r/compare.txt | tail -20
cd $out && tar czf r.tar.gz r && rm -rf r
