#!/usr/bin/env bash
# Prepared in (zzzn), not run: where FA4's backward is faster than ours per tile (noop d128: FA4
# 577, FLASH 595, flexjit 550 TF/s in zzzn2). Carry .fa4b and a folder holding this script,
# fa4_bwd_once.py and flexjit (after a call that copied .fa4a to /tmp/fa4a, as run_zzzn_2.sh).
# ncu of every backward kernel FA4 launches on noop d128 (one repetition after two warm-ups), the
# same sections as zzzm3 took of ours (notes/results/2026-12-06-zzzm/run_zzzm_3.sh), and the
# source view, to set FA4's warp instructions and tensor-pipe share per tile beside ours
# (per_tile_opcodes.py; FA4 d128 walks 128 x 128 or 64 x 128 tiles: read the grid from the report).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/fa4ncu}; r=/tmp/fa4ncur/r; mkdir -p $r $out
save() { (cd /tmp/fa4ncur && tar czf $out/fa4ncu.tar.gz r); }
( cd ../.. && timeout 200 bash .fa4b/join_install.sh ) > $r/install.txt 2>&1
export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages
python3 fa4_bwd_once.py --reps 1 > $r/warm.txt 2>&1   # compile the kernels once (CuTe DSL cache)
timeout 300 ncu --kernel-name regex:'[Bb]ackward|bwd' --launch-skip 6 --launch-count 3 \
  --section SpeedOfLight --section WarpStateStats --section LaunchStats --section SourceCounters \
  --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum \
  -o $r/fa4_bwd_noop_d128 python3 fa4_bwd_once.py --reps 4 > $r/ncu.log 2>&1
echo "ncu rc=$?"
ncu -i $r/fa4_bwd_noop_d128.ncu-rep --print-summary per-kernel > $r/summary.txt 2>&1
grep -E "Duration|Grid Size|Block Size|Registers|Tensor|Issue Slots|Warp Cycles Per Issued" $r/summary.txt | head -40
save
