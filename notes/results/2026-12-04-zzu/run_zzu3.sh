#!/bin/bash
cd "$(dirname "$0")"
bash ab.sh mix mix.json bwd_ms 200 4 "" main:./flexjit: mix:./flexjit_mix: 2>&1 | grep -v "^mix "
bash ab.sh tree suite.json fwd_ms 200 6 "--no-bwd --only noop_d128,causal_d128,gqa_causal_d128,softcap_causal_d128,noop_d64,causal_d64,alibi_causal_d128,document_causal_d128,sliding_window_d128" \
  main:./flexjit: tree:./flexjit:$PWD/tv_tree treesum:./flexjit:$PWD/tv_treesum 2>&1 | grep -v "^tree "
