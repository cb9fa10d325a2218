#!/usr/bin/env bash
# Session (zc) zc2: is the noop forward's K/V traffic near the L2's bandwidth? (ncu, one forward launch)
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zc2}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
m=gpu__time_duration.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,lts__t_sectors_op_read.sum,lts__t_sector_hit_rate.pct,l1tex__m_xbar2l1tex_read_bytes.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,lts__d_sectors_fill_sysmem.sum,smsp__cycles_active.avg,sm__cycles_elapsed.avg
for prob in noop_d128 noop_d64 causal_d128; do
  FLEXJIT_CACHE_DIR=/tmp/fc_b timeout 120 ncu --clock-control none --kernel-name flexjit_attention_fwd --launch-skip 3 --launch-count 1 \
    --metrics $m --section MemoryWorkloadAnalysis ./flexjit bench --suite suite.json --only $prob --no-bwd > $r/ncu_$prob.txt 2>&1
  echo "$prob rc=$?"
  grep -E "time_duration|lts__|xbar2l1tex|hmma|dram__|L2|Max Bandwidth|Mem Busy|cycles" $r/ncu_$prob.txt | head -30
done
cd $out && tar czf zc2.tar.gz r && rm -rf r
