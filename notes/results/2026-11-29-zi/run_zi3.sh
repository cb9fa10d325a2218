#!/usr/bin/env bash
# Session (zi), third call: main 4de3b33 (name barriers) beside the peers in one call, attention
# problems of bench/suite.json (decode unchanged since (zg)). flexjit bench with tuning off:
# forward and fast backward, then the deterministic backward; then peers.py (SDPA's cuDNN and FA2,
# FlexAttention Triton) and compare.py. Stage in .gpu/zk/: flexjit, suite.json, peers.py,
# compare.py (../shared/bench), this script.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zi3}; r=/tmp/zi3r/r; mkdir -p $r $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
ONLY=noop_d128,causal_d128,noop_d64,causal_d64,causal_d256,sliding_window_d128,document_causal_d128,document_nested_causal_d128,prefix_lm_d128,alibi_causal_d128,relpos_learnable_causal_d128,relpos_learnable_causal_d64,alibi_learnable_causal_d128,softcap_causal_d128,gqa_causal_d128,long_causal_d128,long_document_causal_d128,long_sliding_window_d128
FLEXJIT_CACHE_DIR=/tmp/fc timeout 150 ./flexjit bench --suite suite.json --only $ONLY --json $r/flexjit.jsonl > $r/flexjit.log 2>&1; echo "fast rc=$? $(( $(date +%s) - t0 )) s"
FLEXJIT_CACHE_DIR=/tmp/fc timeout 120 ./flexjit bench --suite suite.json --only $ONLY --bwd-mode deterministic --json $r/flexjit_det.jsonl > $r/flexjit_det.log 2>&1; echo "det rc=$? $(( $(date +%s) - t0 )) s"
export PYTHONUNBUFFERED=1
left=$(( 570 - ($(date +%s) - t0) ))
timeout $left python3 peers.py --suite suite.json --only $ONLY > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s $(grep -c fwd_tflops $r/peers.jsonl) rows"
python3 compare.py $r/flexjit.jsonl $r/peers.jsonl > $r/compare.txt 2>&1; cat $r/compare.txt | head -80
grep -h "deterministic" $r/flexjit_det.log | awk '{print $1, $2, $3}' | head -30
cd /tmp/zi3r && tar czf $out/zi3.tar.gz r
