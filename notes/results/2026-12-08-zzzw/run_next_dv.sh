#!/usr/bin/env bash
# (zzzw, for the next session) dv-after-ds (`dv_after_ds.patch`, branch `dv-after-ds`): with the
# dSᵀ exchange (d128), dV += Pᵀ dO issued once dSᵀ is staged, beside dK's early k-steps, instead
# of before dPᵀ's wait (FA4's sm90 order; notes/perf.md, end of "(zzzw)"). Template-only: one
# binary of main's C++ and two template folders.
# Prepare here (`.gpu/zzzx`, ignored): strip + xz main's build/flexjit and
# build/tests/gpu_test_attention as flexjit.xz and gta.xz; copy main's templates/ to tmain/templates
# and the branch's to tdv/templates; copy scripts/device_lib.sh, notes/results/2026-12-04-zzv/ab2.sh,
# this script and ab_dv.json (below) into the folder. Then run `bash .gpu/zzzx/run_next_dv.sh`
# carrying `.gpu/zzzx`; about 450 s.
# ab_dv.json: the shared suite's noop_d128, causal_d128, gqa_causal_d128, long_causal_d128,
# sliding_window_d128, document_causal_d128, softcap_causal_d128, alibi_causal_d128, noop_d64
# (d64 has no exchange: the same kernel in both arms, the call's noise floor).
set -u
cd "$(dirname "$0")"
source ./device_lib.sh
out=${OUT:-/tmp/zzzx}; r=/tmp/zzzxr/t; mkdir -p $out $r
device_start $r
device_unpack .
export FLEXJIT_TEMPLATE_DIR=$PWD/tdv/templates
device_tests suite ./gta 'BwdGpu.SuiteMods:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.Gqa8To1AndBshd:BwdGpu.NanInDoReachesOnlyTheGradientsThatReadIt:BwdGpu.FullyMaskedRowsGiveZeroGradients' 200
device_tests dims ./gta 'BwdGpu.HeadDimsAndHalfPrecision:BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim' 200
device_tests ws ./gta 'BwdGpu.WarpSpecializedFastDkdv:BwdGpu.FastModeOverLengthsTheTilesDivide:BwdGpu.ScoreDiagonalValues' 200
FLEXJIT_RANDOM_PROBLEMS=6 device_tests random ./gta 'RandomProblemsGpu.*' 200
device_sanitize memcheck ./gta 'BwdGpu.FastModeOnePerHeadDim' 200
wait
unset FLEXJIT_TEMPLATE_DIR
device_failures
(cd /tmp/zzzxr && tar czf $out/x_tests.tar.gz t)
OUT=$out bash ab2.sh xab ab_dv.json bwd_ms ${BUDGET:-200} ${ROUNDS:-4} "" main:./flexjit:tmain/templates \
  dv:./flexjit:tdv/templates 2>&1 | grep -v "^xab "
echo "all $(( $(date +%s) - device_t0 )) s"
