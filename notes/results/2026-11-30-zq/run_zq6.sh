#!/usr/bin/env bash
# (zq) call 6: counting first for the next session. ncu (one launch each, SpeedOfLight,
# ComputeWorkloadAnalysis, WarpStateStats, SourceCounters: stall samples per SASS line) on the
# rows furthest behind FA4 / FLASH in zq3: noop_d64's forward at its default ('g', synchronous)
# and at the warp-specialised m128n128w8s2ws (0.95x the 'g' one in zq4), and causal_d128's fast
# dK/dV kernel (0.94x FA4). Map SASS offsets with `flexjit emit ... --format cubin` + nvdisasm -g.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zq6}; r=/tmp/zq6r/r; mkdir -p $r $out
save() { (cd /tmp/zq6r && tar czf $out/zq6.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_zq6
t0=$(date +%s)
prof() {  # tag kernel-regex bench-args...
  local tag=$1 k=$2; shift 2
  timeout 100 ncu --kernel-name regex:"$k" --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SourceCounters \
    --section LaunchStats --section Occupancy --import-source no -o $r/rep_$tag ./flexjit bench --suite suite.json "$@" > $r/ncu_$tag.log 2>&1
  echo "$tag rc=$? $(( $(date +%s) - t0 )) s"
  ncu -i $r/rep_$tag.ncu-rep --print-details all > $r/details_$tag.txt 2>&1
  ncu -i $r/rep_$tag.ncu-rep --page source --csv --print-source sass > $r/src_$tag.csv 2>&1
  grep -E 'Duration|Tensor|Issue Slots Busy|Executed Ipc A|SM Frequency' $r/details_$tag.txt | head -8
  rm -f $r/rep_$tag.ncu-rep
  save
}
prof fwd_d64_g 'attention_fwd$' --no-bwd --only noop_d64
prof fwd_d64_ws 'attention_fwd$' --no-bwd --only noop_d64 --config m128n128w8s2ws
prof bwd_causal_d128 'bwd_dkdv$' --only causal_d128
echo "$(( $(date +%s) - t0 )) s"
save
