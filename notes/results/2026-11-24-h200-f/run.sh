#!/usr/bin/env bash
# Session f, final: the defaults (FLEXJIT_AUTOTUNE=off, deterministic backward) on the training
# problems, forward and backward, beside FlexAttention, FlashAttention-2 and cuDNN in one run;
# then the fast backward mode on the same problems.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/g2}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee $out/gpu.txt
t0=$(date +%s)
train=noop_d128,causal_d128,noop_d64,causal_d64,causal_d256,sliding_window_d128,document_causal_d128,document_nested_causal_d128,prefix_lm_d128,alibi_causal_d128,relpos_learnable_causal_d128,relpos_learnable_causal_d64,alibi_learnable_causal_d128,softcap_causal_d128,gqa_causal_d128,long_causal_d128,long_document_causal_d128,long_sliding_window_d128
timeout 150 ./flexjit bench --suite suite.json --only "$train" --json $out/flexjit.jsonl > $out/flexjit.log 2>&1 || tail -3 $out/flexjit.log
echo "flexjit $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout ${PEERS_S:-380} python3 peers.py --suite suite.json --only "$train" > $out/peers.jsonl 2> $out/peers.err || tail -3 $out/peers.err
echo "peers $(( $(date +%s) - t0 )) s"
python3 compare.py $out/flexjit.jsonl $out/peers.jsonl | tee $out/compare.txt
timeout 60 ./flexjit bench --suite suite.json --only "$train" --bwd-mode fast --json $out/flexjit_fast.jsonl > /dev/null 2>&1
python3 compare.py $out/flexjit_fast.jsonl $out/peers.jsonl > $out/compare_fast.txt 2>&1
echo "total $(( $(date +%s) - t0 )) s"
