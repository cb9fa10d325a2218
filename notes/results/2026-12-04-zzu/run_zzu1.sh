#!/bin/bash
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
bash ab.sh rowsum suite.json fwd_ms 220 6 "--no-bwd --only noop_d128,causal_d128,gqa_causal_d128,softcap_causal_d128,noop_d64,causal_d64" \
  main:./flexjit: nosum:./flexjit:$PWD/tv_nosum 2>&1 | grep -v "^rowsum "
sed -i 's/for prob in noop_d128 alibi_causal_d128; do/for prob in noop_d128; do/; s/timeout 150/timeout 90/' run_next_ncu_fwd.sh
timeout 330 bash run_next_ncu_fwd.sh
