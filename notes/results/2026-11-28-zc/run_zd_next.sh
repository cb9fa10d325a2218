#!/usr/bin/env bash
# Written in session (zc) for the next one (not run): where the d64 ordered dK/dV kernel loses
# to the fast one (sliding window d64: 290 against 353 TF/s, zc6). ncu source counters of both
# kernels, one launch each, the landing build's kernels; compare the per-tile instruction counts
# and the stall samples by SASS line (writers' turns and the deferred dQ measured level: zc8, zc9).
# Stage: flexjit and suite64x.json beside it (.gpu/<session>/), FLEXJIT_AUTOTUNE=off.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zd_next}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_zd
t0=$(date +%s)
for mode in fast deterministic; do
  p=sliding_window_d64
  timeout 60 ./flexjit bench --suite suite64x.json --only $p --bwd-mode $mode > $r/bench_${mode}.log 2>&1
  FLEXJIT_DETERMINISTIC_DQ=ordered timeout 150 ncu --kernel-name regex:'bwd_dkdv$' --launch-skip 1 --launch-count 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SourceCounters \
    --section LaunchStats --import-source no -o $r/rep_$mode ./flexjit bench --suite suite64x.json --only $p \
    --bwd-mode $mode > $r/ncu_$mode.log 2>&1
  echo "$mode rc=$? $(( $(date +%s) - t0 )) s"
  ncu -i $r/rep_$mode.ncu-rep --print-details all > $r/details_$mode.txt 2>&1
  ncu -i $r/rep_$mode.ncu-rep --page source --csv --print-source sass > $r/src_$mode.csv 2>&1
  grep -E 'Duration|Tensor|Issue Slots Busy|Executed Ipc A' $r/details_$mode.txt | head -8
done
rm -f $r/*.ncu-rep
cd $out && tar czf zd_next.tar.gz r && rm -rf r
