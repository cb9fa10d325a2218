#!/usr/bin/env bash
# For the next session, prepared in (zp), not run: what the fold (01b33df) still owes a GPU.
# compute-sanitizer memcheck, synccheck and racecheck (kns=bwd_dkdv) on tests whose d128 kernels
# fold soft-capping's derivative (fast and ordered), beside the two longest ordered tests on the
# same build, and the backward's NaN test (added in (zp), not yet run on a GPU). Stage in .gpu/<s>/: gpu_test_attention (strip -o from main's build), this script.
# About 330 s, one call.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zq1}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
T=420
g1='BwdGpu.NanInDoReachesOnlyTheGradientsThatReadIt:BwdGpu.DeterministicModeSumsDqInOrder'
g2='BwdGpu.FastAndDeterministicModes'
for g in g1 g2; do FLEXJIT_CACHE_DIR=/tmp/fc_$g timeout $T ./gpu_test_attention --gtest_filter=${!g} > $out/$g.log 2>&1 & done
# Soft-capping at d128 on the warp-specialised kernel: TwoRunsOnTheSameInputsGiveTheSameBits in the
# deterministic mode (ordered, folded), Gqa8To1AndBshd in the fast mode (GQA 4:1, [B,S,H,D]).
S='BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits:BwdGpu.Gqa8To1AndBshd'
for tool in memcheck synccheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_$tool timeout $T compute-sanitizer --tool $tool --kernel-name kns=bwd_dkdv --error-exitcode 1 ./gpu_test_attention --gtest_filter=$S > $out/san_$tool.log 2>&1 &
done
FLEXJIT_CACHE_DIR=/tmp/fc_race timeout $T compute-sanitizer --tool racecheck --kernel-name kns=bwd_dkdv --print-limit 3000 ./gpu_test_attention --gtest_filter=BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits > $out/san_racecheck.log 2>&1 &
wait
for f in $out/*.log; do echo "$(basename $f): $(grep -cE '^\[       OK' $f) ok, $(grep -cE '^\[  FAILED  \] [A-Z]' $f) failed, last: $(grep -E '^\[ +(RUN|OK|FAILED) +\]' $f | tail -1)"; done
grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' $out/san_*.log
grep -A1 'Error: Race' $out/san_racecheck.log | sed -E 's/\+0x[0-9a-f]+//g; s/\[[0-9]+ hazards\]//; s/\(.*\) in / in /; s/<[^>]*>//g' | grep -v '^--' | paste - - | sort | uniq -c | sort -rn | head -8
echo "$(( $(date +%s) - t0 )) s"
