#!/bin/bash
# zzj6: where the S=257 causal backward's dK/dV kernel spends its time (ncu source counters: stall
# samples per SASS line), to split each CTA's fixed cost from its per-query-tile work.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzj6}; r=/tmp/zzj6r/r; mkdir -p $r $out
save() { (cd /tmp/zzj6r && tar czf $out/zzj6.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc6
t0=$(date +%s)
./flexjit bench --suite users.json --only causal_s257_b32 > $r/bench.log 2>&1
timeout 200 ncu --kernel-name flexjit_attention_bwd_dkdv --launch-skip 5 --launch-count 1 \
  --section SpeedOfLight --section WarpStateStats --section SourceCounters --section LaunchStats --section Occupancy \
  --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_active.avg,gpc__cycles_elapsed.max \
  --import-source no -o $r/rep ./flexjit bench --suite users.json --only causal_s257_b32 > $r/ncu.log 2>&1
echo "ncu rc=$? $(( $(date +%s) - t0 )) s"
ncu -i $r/rep.ncu-rep --print-details all > $r/details.txt 2>&1
ncu -i $r/rep.ncu-rep --page source --csv --print-source sass > $r/src.csv 2>&1
grep -E 'Duration|gmma|Issue Slots Busy|SM Frequency|cycles_active|Achieved Occupancy' $r/details.txt | head -10
rm -f $r/rep.ncu-rep; save
