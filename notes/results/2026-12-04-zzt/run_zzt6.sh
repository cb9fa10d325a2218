#!/bin/bash
# zzt6: zzt5's single pass put the build below main on noop d128 and sliding window (forward);
# alternating rounds of the final build against main's binary on those rows settle it.
cd "$(dirname "$0")"
bash ab.sh fwd6 suite.json fwd_ms 90 8 "--no-bwd --only noop_d128,sliding_window_d128,causal_d128,long_sliding_window_d128,gqa_causal_d128" \
  main:./flexjit_main: new:./flexjit:
