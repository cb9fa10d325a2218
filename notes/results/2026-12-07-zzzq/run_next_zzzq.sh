#!/usr/bin/env bash
# Prepared in (zzzq), not run. Branches delta-ahead (the full form reads two LSE pairs ahead of Sᵀ's
# wait and two delta pairs ahead of dPᵀ's) and ahead-lean (on top: the fast d128+ kernels with a
# constant score gradient, GQA included, compile their lean form first and read the whole rows
# ahead). Tests of ahead-lean (and delta-ahead's d128 full form), sanitizers, then a three-arm A/B
# of the fast backward: main, delta, whole. Carry .gpu/zzzq. About 560 s on a GPU.
# SHORT=1: about 280 s (fewer tests, memcheck only, two arms main / whole over four rows).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/nzq}; r=/tmp/nzqr/r; mkdir -p $r $out
save() { (cd /tmp/nzqr && tar czf $out/next_zzzq.tar.gz r); }
for f in *.xz; do [ -f "${f%.xz}" ] || python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f"; chmod +x "${f%.xz}"; done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
short=${SHORT:-0}; lim=$([ $short = 1 ] && echo 90 || echo 140)
run() { local tag=$1 bin=$2 filter=$3; (FLEXJIT_CACHE_DIR=/tmp/fj_$tag timeout $lim ./$bin --gtest_filter="$filter" > $r/tests_$tag.txt 2>&1; echo "$tag rc=$? $(( $(date +%s) - t0 )) s $(grep -c '^\[       OK' $r/tests_$tag.txt) ok") & }
run al1 gta_al 'BwdGpu.FastModeOverLengthsTheTilesDivide:BwdGpu.FastModeOnePerHeadDim:NanGpu.*'
run al5 gta_al 'BwdGpu.SuiteMods'
if [ $short = 0 ]; then
  run da1 gta_da 'BwdGpu.FastModeOverLengthsTheTilesDivide'
  run al2 gta_al 'BwdGpu.FastAndDeterministicModes:BwdGpu.ScoreModsWithConstantFactors:BwdGpu.FullyMaskedRowsGiveZeroGradients:BwdGpu.Gqa*'
  run al3 gta_al 'RandomProblemsGpu.*'
fi
for tool in memcheck $([ $short = 0 ] && echo synccheck); do
  (FLEXJIT_CACHE_DIR=/tmp/fjs_$tool timeout $lim compute-sanitizer --tool $tool ./gta_al --gtest_filter='BwdGpu.FastModeOverLengthsTheTilesDivide' > $r/$tool.txt 2>&1
   echo "$tool rc=$? $(grep -h 'ERROR SUMMARY' $r/$tool.txt | tail -1)") &
done
wait
grep -hE "^\[ +(OK|FAILED) |Failure|FAILED TEST|of seed" $r/tests_*.txt | grep -v "^\[       OK" | head -40
save
if [ $short = 0 ]; then
  OUT=$r bash ab2.sh qab suite.json bwd_ms 290 3 "--only noop_d128,causal_d128,noop_d64,causal_d64,sliding_window_d128,prefix_lm_d128,long_causal_d128,alibi_causal_d128,gqa_causal_d128" main:./flexjit:: delta:./flexjit_da:: whole:./flexjit_al:: 2>&1 | grep -v "^qab "
else
  OUT=$r bash ab2.sh qab suite.json bwd_ms 110 3 "--only noop_d128,causal_d128,gqa_causal_d128,causal_d64" main:./flexjit:: whole:./flexjit_al:: 2>&1 | grep -v "^qab "
fi
echo "all $(( $(date +%s) - t0 )) s"
save
