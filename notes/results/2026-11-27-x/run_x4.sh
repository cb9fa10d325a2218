#!/usr/bin/env bash
# Session (x) x4: the dK/dV launch order by walk length (UNIT_ORDER, order kernel). 1) the
# many-kv-tiles test and the ws backward tests; 2) A/B backward TF/s, base = main bb14813's
# binary, new = this build, two rounds, the order alternating.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/x4}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_x4t timeout 100 ./gpu_test_attention --gtest_filter='BwdGpu.ManyKvTilesInTheOrderOfTheirWalks' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[ +(OK|FAILED|PASSED) ' $r/tests.txt | sed -E 's/\[ +(OK|FAILED) +\] //' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; grep -E 'Failure|error:' -A6 $r/tests.txt | head -30
export FLEXJIT_AUTOTUNE=off
for round in 1 2; do
  order="base new"; [ $round = 2 ] && order="new base"
  for v in $order; do
    bin=./flexjit; [ $v = base ] && bin=./base/flexjit
    export FLEXJIT_CACHE_DIR=/tmp/fc_x4_$v
    timeout 150 $bin bench --suite suite.json --only document_causal_d128,document_nested_causal_d128,long_document_causal_d128,causal_d128,gqa_causal_d128,sliding_window_d128,prefix_lm_d128,long_causal_d128 > $r/${v}_$round.log 2>&1
    timeout 80 $bin bench --suite suite64x.json --only document_causal_d64,causal_d64 >> $r/${v}_$round.log 2>&1
    echo "$v $round: $(grep -o '"bwd_tflops":[0-9.]*,[^}]*"name":"[a-z_0-9]*"' $r/${v}_$round.log | sed -E 's/"bwd_tflops":([0-9.]+),.*"name":"([a-z_0-9]+)"/\2=\1/' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
  done
done
FLEXJIT_CACHE_DIR=/tmp/fc_x4t timeout 90 ./gpu_test_attention --gtest_filter='BwdGpu.WarpSpecializedFastDkdv:BwdGpu.SuiteMods' > $r/tests2.txt 2>&1
echo "tests2 rc=$? $(grep -E '^\[ +(OK|FAILED|PASSED) ' $r/tests2.txt | sed -E 's/\[ +(OK|FAILED) +\] //' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; grep -E 'Failure|error:' -A6 $r/tests2.txt | head -30
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf x4.tar.gz r && rm -rf r
