#!/bin/bash
# zzu2 (rewritten from the session's log after the fact; it ran from .gpu/next): alternating A/B of
# the forward's softmax variants, each a copy of templates/ with the knobs of
# softmax_experiments_tree_fmaexp_treesum.patch set (tree = SOFTMAX_TREE_MAX; tp3 = tree + every
# fourth column pair's exp2 on the FMA pipe, degree 3; tp3h = every second pair; tp4 = every fourth,
# degree 4), a clock / power sampler beside it, then the forward GPU tests on the tp3h copy.
cd "$(dirname "$0")"
out=${OUT:-/tmp/out}; mkdir -p $out
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader -lms 200 > $out/clocks.txt 2>&1 &
CLK=$!
bash ab.sh softmax suite.json fwd_ms 260 5 "--no-bwd --only noop_d128,causal_d128,gqa_causal_d128,softcap_causal_d128,noop_d64,causal_d64" \
  main:./flexjit: tree:./flexjit:$PWD/tv_tree tp3:./flexjit:$PWD/tv_tp3 tp3h:./flexjit:$PWD/tv_tp3h tp4:./flexjit:$PWD/tv_tp4 2>&1 | grep -v "^softmax "
kill $CLK
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
FLEXJIT_TEMPLATE_DIR=$PWD/tv_tp3h FLEXJIT_CACHE_DIR=/tmp/fct_a timeout 200 ./gta --gtest_filter='FwdGpu.*:Configs/NanGpu.*:NegativeScaleGpu.*' > $out/gta_tp3h.log 2>&1
echo "gta tp3h rc=$? $(( $(date +%s) - t0 )) s"; grep -E "PASSED|FAILED|tests ran" $out/gta_tp3h.log | head -20
