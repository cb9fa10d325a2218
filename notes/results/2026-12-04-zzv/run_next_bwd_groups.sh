#!/bin/bash
# Next session (prepared in (zzv), not run): the fast backward's launch groups under masks
# (HEAVY_FIRST_CTAS, about 128 CTAs: one head at S=16384) at 512 and 1024 CTAs (4 and 8 heads
# there; 16 and 32 heads at S=4096), against main. sim_walk_order.py's model puts long documents'
# dK/dV at 88 % busy with one-head groups, 95 % with four, 99 % with eight (one CTA per SM: the
# d128 kernel takes 231,552 bytes of shared memory); larger groups spread the co-resident CTAs'
# dQ sums over more heads ((q): smaller groups read less DRAM), so causal and GQA must not lose.
# Setup here: mkdir -p .gpu/next && strip -o .gpu/next/flexjit build/flexjit &&
#   cp notes/results/2026-12-04-zzv/{run_next_bwd_groups.sh,ab2.sh} ../shared/bench/suite.json .gpu/next/ &&
#   for g in 512 1024; do cp -r templates .gpu/next/tv_g$g && sed -i "s/HAS_MASK ? 128 : 0;/HAS_MASK ? $g : 0;/" \
#   .gpu/next/tv_g$g/attention_bwd_dkdv_ws.cu.j2; done   (bwd_heavy_first_512.patch is the 512 edit)
# Run: bash .gpu/next/run_next_bwd_groups.sh with carry [".gpu/next"] (about 300 s).
cd "$(dirname "$0")"
bash ab2.sh groups suite.json bwd_ms 260 4 "--only long_document_causal_d128,document_causal_d128,long_causal_d128,causal_d128,gqa_causal_d128,sliding_window_d128,alibi_causal_d128" \
  main:./flexjit: g512:./flexjit:$PWD/tv_g512 g1024:./flexjit:$PWD/tv_g1024 2>&1 | grep -v "^groups "
