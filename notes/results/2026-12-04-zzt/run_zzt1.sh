#!/bin/bash
# zzt1: forward A/B/C (main, V1 = O's rescale inside the issue window, V2 = V1 + the wait anchored
# below the softmax), then the d64 statistics pairs on/off for tables. H200, FLEXJIT_AUTOTUNE=off.
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
D=$PWD
bash ab.sh fwd suite.json fwd_ms 400 6 "--no-bwd --only noop_d128,causal_d128,noop_d64,causal_d64,gqa_causal_d128,alibi_causal_d128,softcap_causal_d128,sliding_window_d128,document_causal_d128,prefix_lm_d128,long_causal_d128" \
  main:./flexjit_main: v1:./flexjit_main:$D/tv_fwdv1 v2:./flexjit_main:$D/tv_fwdv2
