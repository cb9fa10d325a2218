#!/bin/bash
# zzp4: ncu of the fast backward's dK/dV kernel on noop_d64, 64-query tiles (m64n128w8s3ws, the
# default) against the 128-query tiles with dQ a tile late (m128n128w8s2ws): where the time goes.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzp4}; r=/tmp/zzp4r/r; mkdir -p $r $out
save() { (cd /tmp/zzp4r && tar czf $out/zzp4.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off FLEXJIT_TEMPLATE_DIR=$PWD/tv_v0
t0=$(date +%s)
for c in m64n128w8s3ws m128n128w8s2ws; do
  FLEXJIT_CACHE_DIR=/tmp/fcn timeout 200 ncu --kernel-name flexjit_attention_bwd_dkdv --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SourceCounters --section LaunchStats --section MemoryWorkloadAnalysis \
    --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_active.avg,gpc__cycles_elapsed.max,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed_pipe_xu.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed.sum \
    --import-source no -o $r/rep_$c ./flexjit bench --suite d64_q128_small.json --only noop_d64 --dkdv-config $c > $r/ncu_$c.log 2>&1
  echo "ncu $c rc=$? $(( $(date +%s) - t0 )) s"
  ncu -i $r/rep_$c.ncu-rep --print-details all > $r/details_$c.txt 2>&1
  ncu -i $r/rep_$c.ncu-rep --page source --csv --print-source sass > $r/src_$c.csv 2>&1
  grep -E 'Duration|gmma|Issue Slots Busy|SM Frequency|cycles_active|wavefronts|bank_conflicts|inst_executed|Mem Busy|Max Bandwidth|Registers' $r/details_$c.txt | head -20
  rm -f $r/rep_$c.ncu-rep; save
done
echo "done $(( $(date +%s) - t0 )) s"; save
