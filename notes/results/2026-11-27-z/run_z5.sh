#!/usr/bin/env bash
# Session (z) z5: the forward kernel alone under ncu (locked clocks), base (main 3667b6c's binary)
# against the decoded work tile (z4's build), order base / new / new / base.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/z5}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
run() {  # suite problem
  for v in base new new2 base2; do
    bin=./flexjit; case $v in base*) bin=./flexjit_base;; esac
    FLEXJIT_CACHE_DIR=/tmp/fc_z5_${v%2} timeout 60 ncu --kernel-name regex:'attention_fwd' --launch-skip 1 --launch-count 1 --section SpeedOfLight $bin bench --suite $1 --only $2 --no-bwd > $r/ncu_$2_$v.log 2>&1
    echo "$2 $v $(grep -E '^ +Duration' $r/ncu_$2_$v.log | awk '{print $2, $3}') $(( $(date +%s) - t0 )) s"
  done
}
for p in sliding_window_d64 softcap_causal_d64 document_causal_d64 prefix_lm_d64 causal_d64; do run suite64x.json $p; done
for p in alibi_causal_d128 softcap_causal_d128 document_causal_d128 gqa_causal_d128 causal_d128; do run suite.json $p; done
cd $out && tar czf z5.tar.gz r && rm -rf r
