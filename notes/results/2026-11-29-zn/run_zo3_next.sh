#!/usr/bin/env bash
# For the next session, prepared in (zn), not run: ncu SourceCounters on the causal d256 dK/dV
# kernels of the ranker build (ZO3_BIN, default flexjit_ranker), fast and deterministic, as
# run_zn2.sh did for main before (zn): where the writers and consumers still wait once the ranks
# leave the writers' path. Map SASS offsets with the ranker build's `flexjit emit --family bwd_dkdv
# --arch sm_90a --ordered-dq --head-dim 256 --mask 'q_idx >= kv_idx' --config m64n64w8s2ws --divisible
# --format cubin` and `nvdisasm -g`. Stage in .gpu/<s>/: flexjit_ranker, suite256.json, this
# script. About 30 s.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zo3}; r=/tmp/zo3r/r; mkdir -p $r $out
save() { (cd /tmp/zo3r && tar czf $out/zo3.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_zo3
for mode in fast deterministic; do
  p=causal_d256
  timeout 60 ./${ZO3_BIN:-flexjit_ranker} bench --suite suite256.json --only $p --bwd-mode $mode > $r/bench_${mode}.log 2>&1
  timeout 150 ncu --kernel-name regex:'bwd_dkdv$' --launch-skip 1 --launch-count 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SourceCounters \
    --section LaunchStats --section MemoryWorkloadAnalysis --import-source no -o $r/rep_$mode ./${ZO3_BIN:-flexjit_ranker} bench \
    --suite suite256.json --only $p --bwd-mode $mode > $r/ncu_$mode.log 2>&1
  echo "$mode rc=$? $(( $(date +%s) - t0 )) s"
  ncu -i $r/rep_$mode.ncu-rep --print-details all > $r/details_$mode.txt 2>&1
  ncu -i $r/rep_$mode.ncu-rep --page source --csv --print-source sass > $r/src_$mode.csv 2>&1
  grep -E 'Duration|Tensor|Issue Slots Busy|Executed Ipc A' $r/details_$mode.txt | head -8
  save
done
rm -f $r/*.ncu-rep
echo "$(( $(date +%s) - t0 )) s"
save
