#!/usr/bin/env bash
# Session (z) z9, for the next session: ncu source counters of causal d256's dK/dV kernel with the
# score halves (HEAD's build).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/z9}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_z9
p=causal_d256
timeout 150 ncu --kernel-name regex:'bwd_dkdv$' --launch-skip 1 --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SourceCounters --section LaunchStats --import-source no -o $r/rep_$p ./flexjit bench --suite suite256.json --only $p > $r/ncu_$p.log 2>&1; echo "$p rc=$? $(( $(date +%s) - t0 )) s"
ncu -i $r/rep_$p.ncu-rep --print-details all > $r/details_$p.txt 2>&1
ncu -i $r/rep_$p.ncu-rep --page source --csv --print-source sass > $r/src_$p.csv 2>&1
grep -E 'Duration|Tensor|Issue Slots Busy|Executed Ipc A' $r/details_$p.txt | head -8
rm -f $r/*.ncu-rep
cd $out && tar czf z9.tar.gz r && rm -rf r
