#!/usr/bin/env bash
# For the next session, prepared in (zo), not run: ncu SourceCounters on one launch of the causal
# d256 ordered dK/dV kernel for the ranker's three ways to wait for the staged dQ (rk_old:
# tpl_f7e9557, whole warp polls, measured 375 TF/s in zo1; rk_lane0: tpl_znranker, 315 in zo7;
# rk_sync: tpl_zorankersyncwait), as run_zn2.sh did: where the writers and consumers wait in each.
# Map SASS offsets with `FLEXJIT_TEMPLATE_DIR=$PWD/<tpl> ./flexjit_ranker emit --family bwd_dkdv
# --arch sm_90a --ordered-dq --head-dim 256 --mask 'q_idx >= kv_idx' --config m64n64w8s2ws
# --divisible --format cubin` and `nvdisasm -g`, then ../../notes/results/2026-11-29-zn/stall_lines.py.
# Stage beside run_zp1_next.sh. About 120 s.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zp3}; r=/tmp/zp3r/r; mkdir -p $r $out
save() { (cd /tmp/zp3r && tar czf $out/zp3.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
for v in rk_old:tpl_f7e9557 rk_lane0:tpl_znranker rk_sync:tpl_zorankersyncwait; do
  tag=${v%%:*} tpl=${v#*:}
  export FLEXJIT_TEMPLATE_DIR=$PWD/$tpl FLEXJIT_CACHE_DIR=/tmp/fc_zp3_$tag
  timeout 60 ./flexjit_ranker bench --suite suite256.json --only causal_d256 --bwd-mode deterministic > $r/bench_$tag.log 2>&1
  timeout 150 ncu --kernel-name regex:'bwd_dkdv$' --launch-skip 1 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SourceCounters --section LaunchStats \
    --import-source no -o $r/rep_$tag ./flexjit_ranker bench --suite suite256.json --only causal_d256 \
    --bwd-mode deterministic > $r/ncu_$tag.log 2>&1
  echo "$tag rc=$? $(( $(date +%s) - t0 )) s"
  ncu -i $r/rep_$tag.ncu-rep --print-details all > $r/details_$tag.txt 2>&1
  ncu -i $r/rep_$tag.ncu-rep --page source --csv --print-source sass > $r/src_$tag.csv 2>&1
  grep -E 'Duration|Issue Slots Busy' $r/details_$tag.txt | head -3
  rm -f $r/rep_$tag.ncu-rep
  save
done
echo "$(( $(date +%s) - t0 )) s"
