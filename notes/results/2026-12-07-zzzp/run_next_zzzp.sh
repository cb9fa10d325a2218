#!/usr/bin/env bash
# Prepared in (zzzp), not run. The branch lse-ahead (the fast dK/dV kernel reads its first two LSE
# pairs into registers ahead of Sᵀ's wait) on a GPU: its tests, sanitizers, then an A/B against
# main's binary on the fast backward. Carry .gpu/<tag> holding: gta.xz and flexjit.xz from main,
# gta_la.xz and flexjit_la.xz from lse-ahead (stripped, `xz -6`), ab2.sh (../2026-12-04-zzv/),
# suite.json (../../../../shared/bench/) and this script. About 420 s on a GPU.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/nzp}; r=/tmp/nzpr/r; mkdir -p $r $out
save() { (cd /tmp/nzpr && tar czf $out/next_zzzp.tar.gz r); }
for f in *.xz; do [ -f "${f%.xz}" ] || python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f"; chmod +x "${f%.xz}"; done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
run() { local tag=$1 bin=$2 filter=$3; (FLEXJIT_CACHE_DIR=/tmp/fj_$tag timeout 300 ./$bin --gtest_filter="$filter" > $r/tests_$tag.txt 2>&1; echo "$tag rc=$? $(( $(date +%s) - t0 )) s $(grep -c '^\[       OK' $r/tests_$tag.txt) ok") & }
run la1 gta_la 'BwdGpu.FastModeOverLengthsTheTilesDivide:BwdGpu.FastModeOnePerHeadDim:NanGpu.*'
run la5 gta_la 'BwdGpu.SuiteMods'
run la2 gta_la 'BwdGpu.FastAndDeterministicModes:BwdGpu.ScoreModsWithConstantFactors:BwdGpu.FullyMaskedRowsGiveZeroGradients'
run la3 gta_la 'RandomProblemsGpu.*'
run la4 gta_la 'RandomProblemsGpu.*'
for tool in memcheck synccheck; do
  (FLEXJIT_CACHE_DIR=/tmp/fjs_$tool timeout 280 compute-sanitizer --tool $tool ./gta_la --gtest_filter='BwdGpu.FastModeOverLengthsTheTilesDivide' > $r/$tool.txt 2>&1
   echo "$tool rc=$? $(grep -h 'ERROR SUMMARY' $r/$tool.txt | tail -1)") &
done
wait
grep -hE "^\[ +(OK|FAILED) |Failure|FAILED TEST|of seed" $r/tests_*.txt | grep -v "^\[       OK" | head -40
save
# The rows whose kernels read ahead (divisible lengths, no GQA) and GQA as a control (unchanged).
OUT=$r bash ab2.sh laab suite.json bwd_ms 200 3 "--only noop_d128,causal_d128,noop_d64,causal_d64,sliding_window_d128,prefix_lm_d128,long_causal_d128,alibi_causal_d128,gqa_causal_d128" main:./flexjit:: ahead:./flexjit_la:: 2>&1 | grep -v "^laab "
echo "all $(( $(date +%s) - t0 )) s"
save
