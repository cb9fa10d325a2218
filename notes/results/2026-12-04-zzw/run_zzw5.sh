#!/bin/bash
# (zzw) 5: the forward's sections under documents (host only): one section of every (batch, head)
# pair where a buffer read at q_idx cuts the walks, against main's sections; forward only.
cd "$(dirname "$0")"
bash ab2.sh zzw5 mix5.json fwd_ms 150 4 "--no-bwd" main:./flexjit_main: sec:./flexjit_sec: 2>&1 | grep -v "^zzw5 "
