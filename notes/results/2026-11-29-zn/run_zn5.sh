#!/usr/bin/env bash
# (zn) compute-sanitizer on the ordered dK/dV kernels with the early-look writers (names read
# on their own barrier before the staging): memcheck, synccheck, racecheck side by side.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zn5}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
F='BwdGpu.OrderedModeChainsAtHeadDim256:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.OrderedModeAscendingPairsBesideADescendingTail'
for tool in memcheck synccheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_$tool timeout 420 compute-sanitizer --tool $tool --kernel-name kns=bwd_dkdv --error-exitcode 1 ./gpu_test_attention --gtest_filter=$F > $out/san_$tool.txt 2>&1 &
done
FLEXJIT_CACHE_DIR=/tmp/fc_race timeout 420 compute-sanitizer --tool racecheck --kernel-name kns=bwd_dkdv --print-limit 3000 ./gpu_test_attention --gtest_filter=$F > $out/san_racecheck.txt 2>&1 &
wait
for f in $out/san_*.txt; do echo "$(basename $f): $(grep -E '^\[  FAILED|^\[  PASSED|ERROR SUMMARY|RACECHECK SUMMARY' $f | tr '\n' ' ') ok=$(grep -c '^\[       OK' $f)"; grep '^\[       OK' $f; done
grep -A1 'Error: Race' $out/san_racecheck.txt | sed -E 's/\+0x[0-9a-f]+//g; s/\[[0-9]+ hazards\]//; s/\(.*\) in / in /; s/<[^>]*>//g' | grep -v '^--' | paste - - | sort | uniq -c | sort -rn | head -8
echo "$(( $(date +%s) - t0 )) s"
