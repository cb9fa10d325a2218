#!/usr/bin/env bash
# Session (zg) zg2: the peers beside the kernels of dcf1cf0 (the first claimant's early release),
# owed by (zf). One call: flexjit HEAD on the suite (forward, fast backward; deterministic
# backward), main before dcf1cf0 (13c64d3, flexjit_base) and HEAD on the first-store problems
# (two rounds, the order alternating), then peers.py (SDPA's FA2 and cuDNN, FlexAttention Triton).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zg2}; r=/tmp/zg2r/r; mkdir -p $r $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
D128=causal_d128,document_causal_d128,gqa_causal_d128,long_causal_d128
ab() {  # binary tag round
  FLEXJIT_CACHE_DIR=/tmp/fc_$2 timeout 60 ./$1 bench --suite suite.json --only $D128 --bwd-mode fast --json $r/ab_$2_r$3.jsonl > $r/ab_$2_r$3.log 2>&1
  echo "ab $2 r$3 rc=$? $(( $(date +%s) - t0 )) s"
}
FLEXJIT_CACHE_DIR=/tmp/fc_new timeout 120 ./flexjit bench --suite suite.json --json $r/flexjit.jsonl > $r/flexjit.log 2>&1; echo "suite rc=$? $(( $(date +%s) - t0 )) s"
FLEXJIT_CACHE_DIR=/tmp/fc_new timeout 100 ./flexjit bench --suite suite.json --bwd-mode deterministic --json $r/flexjit_det.jsonl > $r/flexjit_det.log 2>&1; echo "det rc=$? $(( $(date +%s) - t0 )) s"
ab flexjit_base base 1; ab flexjit new 1; ab flexjit new 2; ab flexjit_base base 2
export PYTHONUNBUFFERED=1
left=$(( 575 - ($(date +%s) - t0) ))
timeout $left python3 peers.py --suite suite.json > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s $(grep -c fwd_tflops $r/peers.jsonl) rows"
python3 compare.py $r/flexjit.jsonl $r/peers.jsonl > $r/compare.txt 2>&1; head -40 $r/compare.txt
cd /tmp/zg2r && tar czf $out/zg2.tar.gz r
