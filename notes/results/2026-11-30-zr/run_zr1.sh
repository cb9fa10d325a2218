#!/usr/bin/env bash
# For the next session, prepared in (zq), not run: do the tensor cores and the MUFU run at once?
# (zq6: the d64 forward's tensor pipe 49 % + MUFU 51 % = 100 % of the elapsed cycles.)
# Here: nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -o .gpu/<s>/overlap \
#   notes/results/2026-11-30-zq/overlap/overlap.cu ; copy this script, main's stripped `flexjit`
#   and ../shared/bench/suite.json beside it. About 40 s.
# Reading it: "T+M / (max of parts)" near 1.0 means the two pipes overlap fully (then the d64
# forward's serialisation is our schedule's, and a schedule that keeps one warpgroup in its
# exponentials while the other's GEMMs run can gain up to 2x on that row); near 2.0 (equal parts)
# means they cannot run at once on this GPU (then only fewer MUFU per score, e.g. exponentials on
# the FMA pipe, moves the d64 forward).
set -u
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
./overlap 4000
./overlap 4000 4000
./overlap 4000 16000
# Then why three consumer warpgroups (m192n128w12s2ws, 426-427 TF/s in zq4) lose to two (441-445)
# and to the synchronous 'g' kernel (458-469) on noop d64, where three should keep the tensor
# cores fed through two warpgroups' elementwise phases: one ncu launch, as zq6's.
out=${OUT:-/tmp/ov}; mkdir -p $out
FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_ov timeout 100 ncu --kernel-name regex:'attention_fwd$' --launch-skip 2 \
  --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
  --section SourceCounters --section Occupancy --import-source no -o $out/rep_m192 ./flexjit bench --no-bwd \
  --suite suite.json --only noop_d64 --config m192n128w12s2ws > $out/ncu_m192.log 2>&1
ncu -i $out/rep_m192.ncu-rep --print-details all > $out/details_m192.txt 2>&1
ncu -i $out/rep_m192.ncu-rep --page source --csv --print-source sass > $out/src_m192.csv 2>&1
rm -f $out/rep_m192.ncu-rep
grep -E 'Duration|Tensor \(All\)|XU|Issue Slots Busy|Stall (Barrier|Wait|Long|MIO)' $out/details_m192.txt | head -12
