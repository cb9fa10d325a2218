#!/bin/bash
# zzv8: ncu of the warp-specialised forward (0b02126's templates) on the two long masked problems
# whose forward bar (1.2x FlexAttention's FLASH backend) is unmet: long sliding window (1.14x in
# zzv2) and long documents (1.16x). One launch each, clocks locked by ncu.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzv8}; r=/tmp/zzv8r/r; mkdir -p $r $out
save() { (cd /tmp/zzv8r && tar czf $out/zzv8.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
for prob in long_sliding_window_d128 long_document_causal_d128; do
  FLEXJIT_CACHE_DIR=/tmp/fcn timeout 140 ncu --kernel-name flexjit_attention_fwd --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SourceCounters --section LaunchStats --section Occupancy \
    --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed_pipe_xu.sum,smsp__inst_executed.sum,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_active.min \
    --import-source no -o $r/rep_$prob ./flexjit bench --suite suite.json --only $prob --no-bwd > $r/ncu_$prob.log 2>&1
  echo "ncu $prob rc=$? $(( $(date +%s) - t0 )) s"
  ncu -i $r/rep_$prob.ncu-rep --print-details all > $r/details_$prob.txt 2>&1
  ncu -i $r/rep_$prob.ncu-rep --page source --csv --print-source sass > $r/src_$prob.csv 2>&1
  grep -E 'Duration|gmma|Issue Slots Busy|SM Frequency|cycles_active|inst_executed' $r/details_$prob.txt | head -14
  rm -f $r/rep_$prob.ncu-rep; save
done
echo "done $(( $(date +%s) - t0 )) s"
