#!/usr/bin/env bash
# (zv) call 2: head_dims.json beside the peers (FlexAttention Triton, FA2, cuDNN through SDPA), flexjit
# before and after them; then compute-sanitizer memcheck on the new head-dim tests (fwd, bwd, decode).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zv2}; r=/tmp/zv2r/r; mkdir -p $r $out
save() { (cd /tmp/zv2r && tar czf $out/zv2.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_b
timeout 120 ./flexjit bench --suite head_dims.json --json $r/flexjit.jsonl > $r/flexjit.log 2>&1 || tail -3 $r/flexjit.log
echo "flexjit $(( $(date +%s) - t0 )) s"
export PYTHONUNBUFFERED=1
timeout 260 python3 peers.py --suite head_dims.json > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s $(grep -c '"name"' $r/peers.jsonl) rows"
timeout 100 ./flexjit bench --suite head_dims.json --json $r/flexjit_r2.jsonl > $r/flexjit_r2.log 2>&1 || tail -3 $r/flexjit_r2.log
echo "flexjit again $(( $(date +%s) - t0 )) s"
python3 compare.py $r/flexjit.jsonl $r/peers.jsonl > $r/compare.txt 2>&1; cat $r/compare.txt | head -60
python3 compare.py $r/flexjit_r2.jsonl $r/peers.jsonl > $r/compare_r2.txt 2>&1
save
left=$(( 575 - ($(date +%s) - t0) ))
CS=compute-sanitizer
for t in "FwdGpu.HeadDimsThatAreNoMultipleOf64 kns=attention_fwd" "BwdGpu.HeadDimsThatAreNoMultipleOf64 kns=attention_bwd" "DecodeGpu.HeadDimsThatAreNoMultipleOf64 kns=attention_decode"; do
  set -- $t
  (FLEXJIT_CACHE_DIR=/tmp/fc_s_$1 timeout $left $CS --tool memcheck --kernel-name $2 --error-exitcode 9 ./gpu_test_attention --gtest_filter=$1 > $r/memcheck_$1.log 2>&1; echo "rc=$?" >> $r/memcheck_$1.log) &
done
wait
for f in $r/memcheck_*.log; do echo "$(basename $f): $(grep -E 'ERROR SUMMARY|PASSED|FAILED|rc=' $f | tr '\n' ' ')"; done
echo "total $(( $(date +%s) - t0 )) s"
save
