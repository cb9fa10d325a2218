#!/usr/bin/env bash
# For the next session, prepared in (zm), not run: where the d256 deterministic dK/dV kernel's
# warps wait, beside the fast one (ncu, one launch each of causal_d256, SourceCounters: stall
# samples per SASS line). The ordered kernel's writer warps poll in wait_for_turn
# (ld.acquire.gpu + nanosleep) and wait in cp.async.bulk.wait_group before each release; the
# consumers wait on dq_empty when the writer lags. Map the SASS offsets to the template with
# `flexjit emit --family bwd_dkdv --arch sm_90a --ordered-dq --head-dim 256 --mask 'q_idx >= kv_idx'
# --format cubin` and `nvdisasm -g`. Stage in .gpu/<s>/: flexjit, suite256.json, this script.
# About 250 s.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zn2}; r=/tmp/zn2r/r; mkdir -p $r $out
save() { (cd /tmp/zn2r && tar czf $out/zn2.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_zn2
for mode in fast deterministic; do
  p=causal_d256
  timeout 60 ./flexjit bench --suite suite256.json --only $p --bwd-mode $mode > $r/bench_${mode}.log 2>&1
  timeout 150 ncu --kernel-name regex:'bwd_dkdv$' --launch-skip 1 --launch-count 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SourceCounters \
    --section LaunchStats --section MemoryWorkloadAnalysis --import-source no -o $r/rep_$mode ./flexjit bench \
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
