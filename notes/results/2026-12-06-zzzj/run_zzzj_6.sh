#!/bin/bash
# (zzzj) call 6 (carry .gpu/zzzk6; about 200 s): the final build beside FlexAttention and SDPA's
# cuDNN / FA2 (peers.py, no --flash) on the diagonal-table peer suite, forward + fast backward
# (run_zzzd_d.sh); then the forward A/B main / final on the suite rows that moved in call 4
# (ALiBi causal 0.956, GQA causal 0.983: same SASS but for parameter offsets), 4 rounds.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzk6}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
OUT=$out bash run_zzzd_d.sh
OUT=$out bash ab2.sh re recheck.json fwd_ms 90 4 "--no-bwd" main:./flexjit_main:: new:./flexjit:: 2>&1 | grep -v "^re "
echo "all done $(( $(date +%s) - t0 )) s"
