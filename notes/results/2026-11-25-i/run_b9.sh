#!/usr/bin/env bash
# Session (i), final on an H100: the BwdGpu tests, then the defaults (fast backward) and the
# deterministic backward beside FlexAttention, FlashAttention-2 and cuDNN in one run.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/b7}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
timeout 200 ./gpu_test_attention --gtest_filter='BwdGpu.FastModeFallsBackOnlyWhereItMustAndSaysWhy:ErrorWordsGpu.*' > $r/t1.txt 2>&1; echo "tests rc=$?: $(tail -1 $r/t1.txt)"
grep -A6 Failure $r/t1.txt | head -20
train=noop_d128,causal_d128,noop_d64,causal_d64,causal_d256,sliding_window_d128,document_causal_d128,document_nested_causal_d128,prefix_lm_d128,alibi_causal_d128,softcap_causal_d128,gqa_causal_d128,long_causal_d128,long_document_causal_d128
timeout 150 ./flexjit bench --suite suite.json --only "$train" --json $r/flexjit.jsonl > $r/flexjit.log 2>&1 || tail -3 $r/flexjit.log
timeout 120 ./flexjit bench --suite suite.json --only "$train" --bwd-mode deterministic --json $r/flexjit_det.jsonl > $r/flexjit_det.log 2>&1 || tail -3 $r/flexjit_det.log
echo "flexjit $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 330 python3 peers.py --suite suite.json --only "$train" > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s"
python3 compare.py $r/flexjit.jsonl $r/peers.jsonl | tee $r/compare.txt
python3 compare.py $r/flexjit_det.jsonl $r/peers.jsonl > $r/compare_det.txt 2>&1
grep -E "flexjit" $r/compare_det.txt | awk '{print "det", $1, $3, $4}'
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
