#!/usr/bin/env bash
# Session (ze) ze4: after ze3 on the same machine (FA4 in /tmp/site): the peers on the masked
# suite problems (FlexAttention Triton and FLASH), then compare.py over ze3's flexjit files.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/ze4}; mkdir -p $out/r; r=$out/r
nvidia-smi --query-gpu=name --format=csv,noheader | tee $r/gpu.txt
test -d /tmp/site || echo "no /tmp/site: a fresh machine (FLASH backend will fail)"
t0=$(date +%s)
export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages PYTHONUNBUFFERED=1
timeout 560 python3 peers.py --flash --suite suite.json --only sliding_window_d128,document_causal_d128,prefix_lm_d128,alibi_causal_d128,softcap_causal_d128,long_document_causal_d128,long_sliding_window_d128 > $r/peers_masked.jsonl 2> $r/peers_masked.err || tail -3 $r/peers_masked.err
echo "peers masked $(( $(date +%s) - t0 )) s"
cd $out && tar czf ze4.tar.gz r && rm -rf r
