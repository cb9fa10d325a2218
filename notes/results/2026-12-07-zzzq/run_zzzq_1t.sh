#!/usr/bin/env bash
# (zzzq) lse-ahead and delta-ahead on a GPU: tests (delta-ahead's binary holds both read-aheads;
# lse-ahead's own run of the test whose kernels read ahead), sanitizers, then a three-arm A/B of
# the fast backward: main, lse-ahead, delta-ahead (lse + delta).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/nzq}; r=/tmp/nzqr/r; mkdir -p $r $out
save() { (cd /tmp/nzqr && tar czf $out/zzzq1t.tar.gz r); }
for f in *.xz; do [ -f "${f%.xz}" ] || python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f"; chmod +x "${f%.xz}"; done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
run() { local tag=$1 bin=$2 filter=$3; (FLEXJIT_CACHE_DIR=/tmp/fj_$tag timeout 100 ./$bin --gtest_filter="$filter" > $r/tests_$tag.txt 2>&1; echo "$tag rc=$? $(( $(date +%s) - t0 )) s $(grep -c '^\[       OK' $r/tests_$tag.txt) ok") & }
run da1 gta_da 'BwdGpu.FastModeOverLengthsTheTilesDivide:BwdGpu.FastModeOnePerHeadDim:NanGpu.*'
run da5 gta_da 'BwdGpu.SuiteMods'
run da2 gta_da 'BwdGpu.FastAndDeterministicModes:BwdGpu.ScoreModsWithConstantFactors:BwdGpu.FullyMaskedRowsGiveZeroGradients'
run da3 gta_da 'RandomProblemsGpu.*'
for tool in memcheck synccheck; do
  (FLEXJIT_CACHE_DIR=/tmp/fjs_$tool timeout 100 compute-sanitizer --tool $tool ./gta_da --gtest_filter='BwdGpu.FastModeOverLengthsTheTilesDivide' > $r/$tool.txt 2>&1
   echo "$tool rc=$? $(grep -h 'ERROR SUMMARY' $r/$tool.txt | tail -1)") &
done
wait
grep -hE "^\[ +(OK|FAILED) |Failure|FAILED TEST|of seed" $r/tests_*.txt | grep -v "^\[       OK" | head -40
save
OUT=$r bash ab2.sh qab suite.json bwd_ms 150 3 "--only noop_d128,causal_d128,noop_d64,causal_d64,gqa_causal_d128" main:./flexjit:: delta:./flexjit_da:: 2>&1 | grep -v "^qab "
echo "all $(( $(date +%s) - t0 )) s"
save
