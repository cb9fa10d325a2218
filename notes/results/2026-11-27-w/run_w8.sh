#!/usr/bin/env bash
# Session (w) w8, the review build (kernels byte-identical to 5fe1ca4, cuobjdump): in ONE device
# session, 1) the column-value tests and compute-sanitizer on the changed family (forward);
# 2) A/B forward TF/s, base = main bb14813's binary, new = this build, two rounds; 3) the peers
# (FlexAttention Triton) on the same problems.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/w8}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_w8t timeout 150 ./gpu_test_attention --gtest_filter='FwdGpu.MaskColumnValues*' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[ +(OK|FAILED|PASSED) ' $r/tests.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; grep -E 'Failure' -A6 $r/tests.txt | head -20
for tool in racecheck synccheck memcheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_w8t timeout 100 compute-sanitizer --tool $tool ./gpu_test_attention --gtest_filter='FwdGpu.MaskColumnValuesOutOfBounds' > $r/san_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED)' $r/san_$tool.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
done
export FLEXJIT_AUTOTUNE=off
P128=document_causal_d128,document_nested_causal_d128,long_document_causal_d128
for round in 1 2; do
  order="base new"; [ $round = 2 ] && order="new base"
  for v in $order; do
    bin=./flexjit; [ $v = base ] && bin=./base/flexjit
    export FLEXJIT_CACHE_DIR=/tmp/fc_w8_$v
    timeout 90 $bin bench --suite suite.json --only $P128 --no-bwd > $r/${v}_$round.jsonl 2>&1
    timeout 60 $bin bench --suite suite64x.json --only document_causal_d64 --no-bwd >> $r/${v}_$round.jsonl 2>&1
    echo "$v $round: $(grep -o '"fwd_tflops":[0-9.]*,[^}]*"name":"[a-z_0-9]*"' $r/${v}_$round.jsonl | sed -E 's/"fwd_tflops":([0-9.]+),.*"name":"([a-z_0-9]+)"/\2=\1/' | tr '\n' ' ')"
  done
done
timeout 200 python3 peers.py --suite suite.json --only $P128 --no-sdpa --no-bwd > $r/peers.jsonl 2> $r/peers.err
timeout 80 python3 peers.py --suite suite64x.json --only document_causal_d64 --no-sdpa --no-bwd >> $r/peers.jsonl 2>> $r/peers.err
echo "peers: $(python3 fwd_tflops.py $r/peers.jsonl)"
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf w8.tar.gz r && rm -rf r
