#!/usr/bin/env bash
# (zzzn) call 1: full-tile-grad (branch merged with main dc0f8f1, b0b1811) against main's binary
# (4ea16f7; the kernels' SASS of dc0f8f1 is the same) on the ten rows it touches: fast 3 rounds,
# deterministic 2 rounds (whole suite minus noop and soft-capping, whose SASS is unchanged). The sanitizers run in call 2.
# .gpu/zzzn1: flexjit and gta (branch, stripped), flexjit_main, ab2.sh, suite.json, this script.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzn1}; r=/tmp/zzzn1r/r; mkdir -p $r $out
save() { (cd /tmp/zzzn1r && tar czf $out/zzzn1.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
rows=causal_d128,causal_d64,sliding_window_d128,document_causal_d128,prefix_lm_d128,alibi_causal_d128,gqa_causal_d128,long_causal_d128,long_document_causal_d128,long_sliding_window_d128
t0=$(date +%s)
OUT=$r bash ab2.sh tgfast suite.json bwd_ms 150 3 "--only $rows" main:./flexjit_main:: whole:./flexjit:: 2>&1 | grep -v "^tgfast "
echo "A/B fast $(( $(date +%s) - t0 )) s"; save
OUT=$r bash ab2.sh tgdet suite.json bwd_ms 100 2 "--only $rows --bwd-mode deterministic" main:./flexjit_main:: whole:./flexjit:: 2>&1 | grep -v "^tgdet "
echo "A/B deterministic $(( $(date +%s) - t0 )) s"; save
save
