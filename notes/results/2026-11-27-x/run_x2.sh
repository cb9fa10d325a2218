#!/usr/bin/env bash
# Session (x) x2: the persistent dK/dV kernel with the next unit published early (its walk and first verdicts during the last tile).
# backward TF/s, base = main bb14813's binary (non-persistent), new = this build, two rounds,
# the order alternating.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/x2}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_x2t timeout 100 ./gpu_test_attention --gtest_filter='BwdGpu.PersistentDkdvManyUnitsPerCta' > $r/tests.txt 2>&1
FLEXJIT_CACHE_DIR=/tmp/fc_x2t timeout 90 ./gpu_test_attention --gtest_filter='BwdGpu.WarpSpecializedFastDkdv' >> $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[ +(OK|FAILED|PASSED) ' $r/tests.txt | sed -E 's/\[ +(OK|FAILED) +\] //' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; grep -E 'Failure|error:' -A6 $r/tests.txt | head -40
export FLEXJIT_AUTOTUNE=off
for round in 1 2; do
  order="base new"; [ $round = 2 ] && order="new base"
  for v in $order; do
    bin=./flexjit; [ $v = base ] && bin=./base/flexjit
    export FLEXJIT_CACHE_DIR=/tmp/fc_x2_$v
    timeout 150 $bin bench --suite suite.json --only document_causal_d128,long_document_causal_d128,causal_d128,noop_d128,gqa_causal_d128 > $r/${v}_$round.log 2>&1
    timeout 80 $bin bench --suite suite64x.json --only document_causal_d64,causal_d64,noop_d64 >> $r/${v}_$round.log 2>&1
    echo "$v $round: $(grep -o '"bwd_tflops":[0-9.]*,[^}]*"name":"[a-z_0-9]*"' $r/${v}_$round.log | sed -E 's/"bwd_tflops":([0-9.]+),.*"name":"([a-z_0-9]+)"/\2=\1/' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
  done
done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf x2.tar.gz r && rm -rf r
