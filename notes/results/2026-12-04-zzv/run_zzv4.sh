#!/bin/bash
# (zzv4) second round of the loop-head A/B (main / pair / vlate), then 176-key tiles on the unmasked forwards.
cd "$(dirname "$0")"
bash ab2.sh pair2 suite.json fwd_ms 190 6 "--no-bwd --only noop_d128,causal_d128,gqa_causal_d128,softcap_causal_d128,noop_d64,causal_d64,alibi_causal_d128,long_causal_d128" \
  main:./flexjit: pair:./flexjit:$PWD/tv_pair vlate:./flexjit:$PWD/tv_vlate 2>&1 | grep -v "^pair2 "
bash ab2.sh n176 suite.json fwd_ms 120 6 "--no-bwd --only noop_d128,noop_d64" \
  main:./flexjit: n176:./flexjit::--config=m128n176w8s2ws pair176:./flexjit:$PWD/tv_pair:--config=m128n176w8s2ws 2>&1 | grep -v "^n176 "
