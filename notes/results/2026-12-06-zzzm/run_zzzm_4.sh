#!/usr/bin/env bash
# (zzzm) call 4, prepared for the next session (carry .gpu/zzzm4; no machine was left this one):
# whole tiles without dSᵀ's select (branch full-tile-grad, 5196bec: masked or bounded kernels
# whose score_mod has a constant derivative: the identity, ALiBi, bias tables).
#  1. A/B main / branch on six masked rows, whole fast backward, 3 rounds;
#  2. the same in the deterministic mode, 2 rounds (ALiBi's ordered kernel now takes its lean form);
#  3. the branch's backward GPU tests in five processes side by side;
#  4. ncu of main's forward on noop d128 (issue 12 asks for its tensor-pipe share; the last figure,
#     74.9 %, is (zzu)'s, before the lazy rescale). Needs suite.json (../shared/bench/) here too.
# .gpu/zzzm4: flexjit and gta from the branch's build (stripped), flexjit_main from main's, ab2.sh
# (notes/results/2026-12-04-zzv/), ab.json (this folder), suite.json, this script.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzm4}; r=/tmp/zzzm4r/r; mkdir -p $r $out
save() { (cd /tmp/zzzm4r && tar czf $out/zzzm4.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
OUT=$r bash ab2.sh gradab ab.json bwd_ms 100 3 "" main:./flexjit_main:: whole:./flexjit:: 2>&1 | grep -v "^gradab "
echo "A/B fast $(( $(date +%s) - t0 )) s"
OUT=$r bash ab2.sh gradabdet ab.json bwd_ms 70 2 "--bwd-mode deterministic" main:./flexjit_main:: whole:./flexjit:: 2>&1 | grep -v "^gradabdet "
echo "A/B deterministic $(( $(date +%s) - t0 )) s"
save
i=0
for f in 'BwdGpu.SuiteMods' 'NanGpu.*:BwdGpu.FullyMaskedRowsGiveZeroGradients:BwdGpu.OddLengthsAndDifferentLengths' \
         'SeqLensGpu.WarpSpecializedBackward:SeqLensGpu.WarpSpecializedOrderedBackward:BwdGpu.FastAndDeterministicModes' \
         'BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.ScoreModsWithConstantFactors' 'RandomProblemsGpu.*'; do
  i=$((i + 1))
  (FLEXJIT_CACHE_DIR=/tmp/fj_t$i timeout 300 ./gta --gtest_filter="$f" > $r/tests_$i.txt 2>&1; echo "tests $i rc=$? $(( $(date +%s) - t0 )) s") &
done
wait
grep -hE "^\[ +(OK|FAILED) |Failure|FAILED TEST" $r/tests_*.txt | head -40
save
FLEXJIT_CACHE_DIR=/tmp/fcn timeout 120 ncu --kernel-name regex:flexjit_attention_fwd --launch-skip 3 --launch-count 1 \
  --section SpeedOfLight --section WarpStateStats \
  --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_active.avg,gpc__cycles_elapsed.max,smsp__inst_executed.sum \
  -o $r/fwd_noop_d128 ./flexjit_main bench --suite suite.json --only noop_d128 > $r/ncu_fwd.log 2>&1
echo "ncu fwd rc=$? $(( $(date +%s) - t0 )) s"
ncu -i $r/fwd_noop_d128.ncu-rep --print-details all > $r/fwd_details.txt 2>&1
grep -E 'Duration|Hgmma|gmma|Issue Slots Busy|SM Frequency|Warp Cycles Per Issued|Stall (Wait|Long|Barrier|GMMA|Short|Dispatch|Math|MIO)' $r/fwd_details.txt | head -16
echo "all $(( $(date +%s) - t0 )) s"
save
