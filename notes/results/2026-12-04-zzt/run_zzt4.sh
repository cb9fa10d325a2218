#!/bin/bash
# zzt4: main's binary against the build (O's rescale in the forward's issue window; 32-bit reads in
# the dK/dV kernel that sums dQ for score_mod buffers beside a mask without any), one call:
# the forward on the suite (forward ms), the fast backward and the deterministic one on
# offsets2.json (backward ms). H200, FLEXJIT_AUTOTUNE=off, alternating rounds.
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
bash ab.sh fwd4 suite.json fwd_ms 100 4 "--no-bwd --only noop_d128,causal_d128,noop_d64,causal_d64,gqa_causal_d128,alibi_causal_d128,softcap_causal_d128,sliding_window_d128,document_causal_d128,prefix_lm_d128,long_causal_d128" \
  main:./flexjit_main: new:./flexjit:
bash ab.sh fast4 offsets2.json bwd_ms 200 4 "" main:./flexjit_main: new:./flexjit:
bash ab.sh det4 offsets2.json bwd_ms 100 3 "--bwd-mode deterministic --only bias_hqk_causal_d128_s2048,relpos_h_causal_d128,alibi_causal_d128,document_causal_d128" \
  main:./flexjit_main: new:./flexjit:
