#!/usr/bin/env bash
# Session (y) y5: ncu source counters of the dK/dV kernel on the landed build 585a691 (causal d128, documents d128)
# (fast mode), for the next session; compare with (x) x7 (main before it).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/y5}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_y5
for p in document_causal_d128 causal_d128; do
  timeout 60 ./flexjit bench --suite suite.json --only $p > $r/bench_$p.log 2>&1
  timeout 150 ncu --kernel-name regex:'bwd_dkdv$' --launch-skip 1 --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SourceCounters --section LaunchStats --import-source no -o $r/rep_$p ./flexjit bench --suite suite.json --only $p > $r/ncu_$p.log 2>&1; echo "$p rc=$? $(( $(date +%s) - t0 )) s"
  ncu -i $r/rep_$p.ncu-rep --print-details all > $r/details_$p.txt 2>&1
  ncu -i $r/rep_$p.ncu-rep --page source --csv --print-source sass > $r/src_$p.csv 2>&1
  grep -E 'Duration|Tensor|Issue Slots Busy|Executed Ipc A' $r/details_$p.txt | head -8
done
echo "total $(( $(date +%s) - t0 )) s"
rm -f $r/*.ncu-rep
cd $out && tar czf y5.tar.gz r && rm -rf r
