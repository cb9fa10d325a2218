#!/usr/bin/env bash
# Prepared in (zzzq), not run. Branches delta-ahead (the full form reads two LSE pairs ahead of Sᵀ's
# wait and two delta pairs ahead of dPᵀ's) and ahead-lean (on top: the fast d128+ kernels with a
# constant score gradient, GQA included, compile their lean form first and read the whole rows
# ahead). Tests of ahead-lean (and delta-ahead's d128 full form), sanitizers, then a three-arm A/B
# of the fast backward: main, delta, whole. Run from the repository root (scripts/device_lib.sh),
# carrying .gpu/zzzq: `bash .gpu/zzzq/run_next_zzzq.sh`. About 560 s on a GPU.
# SHORT=1: about 280 s (fewer tests, memcheck only, two arms main / whole over four rows).
set -u
source scripts/device_lib.sh
cd "$(dirname "$0")"
out=${OUT:-/tmp/nzq}; r=/tmp/nzqr/r; mkdir -p $out
save() { (cd /tmp/nzqr && tar czf $out/next_zzzq.tar.gz r); }
device_start $r
device_unpack .
short=${SHORT:-0}; lim=$([ $short = 1 ] && echo 90 || echo 140)
device_tests al1 ./gta_al 'BwdGpu.FastModeOverLengthsTheTilesDivide:BwdGpu.FastModeOnePerHeadDim:NanGpu.*' $lim
device_tests al5 ./gta_al 'BwdGpu.SuiteMods' $lim
if [ $short = 0 ]; then
  device_tests da1 ./gta_da 'BwdGpu.FastModeOverLengthsTheTilesDivide' $lim
  device_tests al2 ./gta_al 'BwdGpu.FastAndDeterministicModes:BwdGpu.ScoreModsWithConstantFactors:BwdGpu.FullyMaskedRowsGiveZeroGradients:BwdGpu.Gqa*' $lim
  device_tests al3 ./gta_al 'RandomProblemsGpu.*' $lim
fi
for tool in memcheck $([ $short = 0 ] && echo synccheck); do
  device_sanitize $tool ./gta_al 'BwdGpu.FastModeOverLengthsTheTilesDivide' $lim
done
wait
device_failures
save
if [ $short = 0 ]; then
  OUT=$r bash ab2.sh qab suite.json bwd_ms 290 3 "--only noop_d128,causal_d128,noop_d64,causal_d64,sliding_window_d128,prefix_lm_d128,long_causal_d128,alibi_causal_d128,gqa_causal_d128" main:./flexjit:: delta:./flexjit_da:: whole:./flexjit_al:: 2>&1 | grep -v "^qab "
else
  OUT=$r bash ab2.sh qab suite.json bwd_ms 110 3 "--only noop_d128,causal_d128,gqa_causal_d128,causal_d64" main:./flexjit:: whole:./flexjit_al:: 2>&1 | grep -v "^qab "
fi
echo "all $(( $(date +%s) - device_t0 )) s"
save
