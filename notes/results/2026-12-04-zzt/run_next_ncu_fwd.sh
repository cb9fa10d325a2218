#!/bin/bash
# Next session (prepared in (zzt), not run): ncu of the warp-specialised forward on noop_d128 and
# ALiBi causal with main's templates (the rescale in the window where the mods read no buffer)
# against V2 (the wait anchored below the softmax, which keeps losing) and against the loop before
# (zzt) (tv_pre: templates of 78b1750): where the softmax stretch's time goes.
# Setup here: mkdir -p .gpu/next && strip -o .gpu/next/flexjit build/flexjit && cp run_next_ncu_fwd.sh
#   ../../../shared/bench/suite.json .gpu/next/; git archive 78b1750 templates | tar x -C .gpu/next &&
#   mv .gpu/next/templates .gpu/next/tv_pre; cp -r templates .gpu/next/tv_v2 &&
#   (cd .gpu/next/tv_v2 && sed 's#/tmp/tv_fwdv1/##; s#/tmp/tv_fwdv2/##' \
#   ../../../notes/results/2026-12-04-zzt/fwd_v2_anchored_wait_over_v1.patch | patch -p0)
#   (checked in (zzt): the patched copy renders the measured V2's PTX).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/next}; r=/tmp/nextr/r; mkdir -p $r $out
save() { (cd /tmp/nextr && tar czf $out/next_ncu_fwd.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
for arm in main:"" v2:$PWD/tv_v2 pre:$PWD/tv_pre; do
  name=${arm%%:*}; tv=${arm#*:}
  for prob in noop_d128 alibi_causal_d128; do
    c=${name}_$prob
    FLEXJIT_TEMPLATE_DIR=$tv FLEXJIT_CACHE_DIR=/tmp/fcn_$name timeout 150 ncu --kernel-name flexjit_attention_fwd --launch-skip 3 --launch-count 1 \
      --section SpeedOfLight --section WarpStateStats --section SourceCounters --section LaunchStats \
      --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed_pipe_xu.sum,smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum \
      --import-source no -o $r/rep_$c ./flexjit bench --suite suite.json --only $prob --no-bwd > $r/ncu_$c.log 2>&1
    echo "ncu $c rc=$? $(( $(date +%s) - t0 )) s"
    ncu -i $r/rep_$c.ncu-rep --print-details all > $r/details_$c.txt 2>&1
    ncu -i $r/rep_$c.ncu-rep --page source --csv --print-source sass > $r/src_$c.csv 2>&1
    grep -E 'Duration|gmma|Issue Slots Busy|SM Frequency|inst_executed|Stall' $r/details_$c.txt | head -20
    rm -f $r/rep_$c.ncu-rep; save
  done
done
echo "done $(( $(date +%s) - t0 )) s"; save
