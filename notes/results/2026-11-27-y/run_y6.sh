#!/usr/bin/env bash
# Session (y) y6: the dK/dV kernel's duration under ncu (its locked clocks), base (main aec4c4e's
# templates) against the landed build 585a691 (embedded), same machine, the order alternating.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/y6}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
for p in causal_d128 document_causal_d128 noop_d128 alibi_causal_d128 softcap_causal_d128 gqa_causal_d128; do
  for v in base new new2 base2; do
    env="FLEXJIT_TEMPLATE_DIR="; case $v in base*) env="FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_base";; esac
    env $env FLEXJIT_CACHE_DIR=/tmp/fc_y6_${v%2} timeout 60 ncu --kernel-name regex:'bwd_dkdv$' --launch-skip 1 --launch-count 1 --section SpeedOfLight ./flexjit bench --suite suite.json --only $p > $r/ncu_${p}_$v.log 2>&1
    echo "$p $v $(grep -E '^ +Duration' $r/ncu_${p}_$v.log | awk '{print $2, $3}') $(( $(date +%s) - t0 )) s"
  done
done
cd $out && tar czf y6.tar.gz r && rm -rf r
