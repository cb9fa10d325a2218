#!/usr/bin/env bash
# zzd7: where the sliding window's forward time goes beside noop and causal (main's kernels):
# ncu, one launch each (SpeedOfLight, ComputeWorkloadAnalysis, WarpStateStats, SourceCounters,
# the tensor pipe's active cycles), details and per-SASS-line stall samples kept.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/out}; r=/tmp/zzd7r/r; mkdir -p $r $out
save() { (cd /tmp/zzd7r && tar czf $out/zzd7.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_zzd7
t0=$(date +%s)
prof() {  # tag bench-args...
  local tag=$1; shift 1
  timeout 120 ncu --kernel-name regex:'attention_fwd$' --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SourceCounters \
    --section LaunchStats --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_active.avg,gpc__cycles_elapsed.max \
    --import-source no -o $r/rep_$tag ./flexjit bench --suite suite.json "$@" > $r/ncu_$tag.log 2>&1
  echo "$tag rc=$? $(( $(date +%s) - t0 )) s"
  ncu -i $r/rep_$tag.ncu-rep --print-details all > $r/details_$tag.txt 2>&1
  ncu -i $r/rep_$tag.ncu-rep --page source --csv --print-source sass > $r/src_$tag.csv 2>&1
  grep -E 'Duration|gmma|Issue Slots Busy|Executed Ipc A|SM Frequency|Stall|cycles_active' $r/details_$tag.txt | head -12
  rm -f $r/rep_$tag.ncu-rep
  save
}
prof noop --no-bwd --only noop_d128
prof causal --no-bwd --only causal_d128
prof window --no-bwd --only sliding_window_d128
echo "$(( $(date +%s) - t0 )) s"
save
