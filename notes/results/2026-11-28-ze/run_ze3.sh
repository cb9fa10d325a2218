#!/usr/bin/env bash
# Session (ze) ze3: main + the deterministic way's memo (this session's build). After a call that
# copied .fa4a to /tmp/fa4a: FA4 installed; the memo's GPU test; flexjit on the suite and the d64
# suite (forward, fast backward; deterministic backward), FLEXJIT_AUTOTUNE=off; then the peers
# (SDPA's FA2 and cuDNN, FlexAttention Triton and FLASH, FA4) on the dense problems, one run.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/ze3}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
(cd ../.. && timeout 120 bash .fa4b/install.sh) > $r/install.txt 2>&1; echo "install rc=$? $(tail -1 $r/install.txt) $(( $(date +%s) - t0 )) s"
FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 90 ./gpu_test_attention --gtest_filter='BwdGpu.DeterministicModeMeasuresTheWayWhenTuning' > $r/t_memo.txt 2>&1
echo "memo test rc=$? $(grep -E '^\[ +(OK|FAILED) ' $r/t_memo.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
grep -B2 -A6 Failure $r/t_memo.txt | head -20
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_b
timeout 100 ./flexjit bench --suite suite.json --json $r/flexjit.jsonl > $r/flexjit.log 2>&1 || tail -3 $r/flexjit.log
timeout 80 ./flexjit bench --suite suite.json --bwd-mode deterministic --json $r/flexjit_det.jsonl > $r/flexjit_det.log 2>&1 || tail -3 $r/flexjit_det.log
timeout 60 ./flexjit bench --suite suite64x.json --json $r/flexjit64.jsonl > $r/flexjit64.log 2>&1 || tail -3 $r/flexjit64.log
timeout 60 ./flexjit bench --suite suite64x.json --bwd-mode deterministic --json $r/flexjit64_det.jsonl > $r/flexjit64_det.log 2>&1 || tail -3 $r/flexjit64_det.log
echo "flexjit $(( $(date +%s) - t0 )) s"
export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages PYTHONUNBUFFERED=1
left=$(( 570 - ($(date +%s) - t0) ))
timeout $left python3 peers.py --flash --suite suite.json --only noop_d128,causal_d128,noop_d64,causal_d64,gqa_causal_d128,long_causal_d128 > $r/peers_dense.jsonl 2> $r/peers_dense.err || tail -3 $r/peers_dense.err
echo "peers dense $(( $(date +%s) - t0 )) s"
grep -c fwd_tflops $r/peers_dense.jsonl
cd $out && tar czf ze3.tar.gz r && rm -rf r
