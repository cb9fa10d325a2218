#!/usr/bin/env bash
# Session (z) z3 (main a650cfd's binary): 1) forward block-config sweep on the d64 sliding window
# and causal problems, two rounds; 2) ncu source counters of the sliding-window d64 forward and the
# causal d64 one (default configs), for where the sliding window's extra time goes.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/z3}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_z3
t0=$(date +%s)
for round in 1 2; do
  for c in default m128n128w8s3ws m192n128w12s2ws m192n64w12s2ws m128n64w8s2ws m64n128w4s2ws m128n128w8s2g m128n64w8s3ws; do
    arg=""; [ $c != default ] && arg="--config $c"
    timeout 60 ./flexjit bench --suite suite64x.json --only sliding_window_d64,causal_d64,document_causal_d64 --no-bwd $arg --json $r/sweep_${c}_$round.jsonl > $r/sweep_${c}_$round.log 2>&1 || tail -2 $r/sweep_${c}_$round.log
    echo "$c r$round: $(grep -o '"name": *"[a-z_0-9]*"\|"fwd_tflops": *[0-9.]*\|"fwd_config": *"[^"]*"' $r/sweep_${c}_$round.jsonl | sed 's/"[a-z_]*": *//' | tr -d '"' | paste -sd' ') $(( $(date +%s) - t0 )) s"
  done
done
for p in sliding_window_d64 causal_d64; do
  timeout 150 ncu --kernel-name regex:'attention_fwd' --launch-skip 1 --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SourceCounters --section LaunchStats --import-source no -o $r/rep_$p ./flexjit bench --suite suite64x.json --only $p --no-bwd > $r/ncu_$p.log 2>&1; echo "$p rc=$? $(( $(date +%s) - t0 )) s"
  ncu -i $r/rep_$p.ncu-rep --print-details all > $r/details_$p.txt 2>&1
  ncu -i $r/rep_$p.ncu-rep --page source --csv --print-source sass > $r/src_$p.csv 2>&1
  grep -E 'Duration|Tensor|Issue Slots Busy|Executed Ipc A' $r/details_$p.txt | head -8
done
rm -f $r/*.ncu-rep
cd $out && tar czf z3.tar.gz r && rm -rf r
