#!/usr/bin/env bash
# (zza8) The affine pass's guard for work tiles past their sequence's queries: the ragged ws forward
# test with a slope that reads a buffer by the query, on c478bbd's templates (expected to report a
# read out of bounds for the empty sequence) and on the build; the affine tests on the build.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zza8}; r=/tmp/zza8r/r; mkdir -p $r $out
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_before FLEXJIT_CACHE_DIR=/tmp/ft_a timeout 200 ./gpu_test_attention --gtest_filter=SeqLensGpu.WarpSpecializedForward > $r/before.log 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/ft_b timeout 200 ./gpu_test_attention --gtest_filter=SeqLensGpu.WarpSpecializedForward > $r/after.log 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/ft_c timeout 200 ./gpu_test_attention --gtest_filter='FwdGpu.ScoreModsAffineInKeys:FwdGpu.AffineScoreModWithAnInfiniteSlopeGivesEmptyRows:FwdGpu.SuiteMods:RandomProblemsGpu.*' > $r/affine.log 2>&1 &
wait
for f in before after affine; do echo "$f: $(grep -E '^\[  (PASSED|FAILED)  \]|Failure|threw|out of bounds' $r/$f.log | head -4 | tr '\n' ' ')"; done
echo "total $(( $(date +%s) - t0 )) s"
(cd /tmp/zza8r && tar czf $out/zza8.tar.gz r)
