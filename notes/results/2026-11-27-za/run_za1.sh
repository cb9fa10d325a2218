#!/usr/bin/env bash
# Session (za) za1: where the d64 backward's dK/dV kernel spends its time (main at ae2c159):
# ncu sections + source counters for noop d64 (and causal d64), one launch each.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/za1}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_za1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
./flexjit bench --suite suite.json --only noop_d64 > $r/bench_warm.log 2>&1; echo "warm $(( $(date +%s) - t0 )) s"; cat $r/bench_warm.log | tail -3
for p in noop_d64 causal_d64; do
timeout 200 ncu --kernel-name regex:'bwd_dkdv$' --launch-skip 1 --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section InstructionStats --section SourceCounters --section LaunchStats --import-source no -o $r/rep_$p ./flexjit bench --suite suite.json --only $p > $r/ncu_$p.log 2>&1; echo "$p rc=$? $(( $(date +%s) - t0 )) s"
ncu -i $r/rep_$p.ncu-rep --print-details all > $r/details_$p.txt 2>&1
ncu -i $r/rep_$p.ncu-rep --page source --csv --print-source sass > $r/src_$p.csv 2>&1
grep -E 'Duration|Tensor|Issue Slots Busy|Executed Ipc A|Mem Busy|Shared' $r/details_$p.txt | head -12
done
rm -f $r/*.ncu-rep
cd $out && tar czf za1.tar.gz r && rm -rf r
