#!/bin/bash
# (zzw) 4: ncu, SM active cycles avg / max / min: the fast dK/dV kernel on long documents with the
# 1024-CTA groups (main had 82.8 % avg / elapsed), and the forward on long documents after (zzv)'s
# sections (83 % before them) and on long causal and noop d128 (one launch each).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzw4}; r=/tmp/zzw4r/r; mkdir -p $r $out
save() { (cd /tmp/zzw4r && tar czf $out/zzw4.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
m=sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_active.min,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active
one() { k=$1 prob=$2 extra=$3
  FLEXJIT_CACHE_DIR=/tmp/fcn timeout 120 ncu --kernel-name $k --launch-skip 2 --launch-count 1 --section SpeedOfLight --metrics $m \
    -o $r/rep_${k}_$prob ./flexjit bench --suite suite.json --only $prob $extra > $r/ncu_${k}_$prob.log 2>&1
  echo "ncu $k $prob rc=$? $(( $(date +%s) - t0 )) s"
  ncu -i $r/rep_${k}_$prob.ncu-rep --print-details all > $r/details_${k}_$prob.txt 2>&1
  grep -E "Duration|Elapsed Cycles|cycles_active|gmma" $r/details_${k}_$prob.txt | head -8
  rm -f $r/rep_${k}_$prob.ncu-rep; save
}
one flexjit_attention_bwd_dkdv long_document_causal_d128 ""
one flexjit_attention_fwd long_document_causal_d128 --no-bwd
one flexjit_attention_fwd long_causal_d128 --no-bwd
one flexjit_attention_fwd long_sliding_window_d128 --no-bwd
echo "done $(( $(date +%s) - t0 )) s"
