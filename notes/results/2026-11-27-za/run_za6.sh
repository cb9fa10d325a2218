#!/usr/bin/env bash
# Session (za) za6: racecheck's one new hazard (the dK / dV epilogue's ld.shared.v4 against
# st.shared.b32) on the landed d64 kernel, with and without the stagger barrier (template dir).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/za6}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
for v in final nostagger final2; do
  td=""; [ $v = nostagger ] && td=$PWD/nostagger
  FLEXJIT_TEMPLATE_DIR=$td FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 100 compute-sanitizer --tool racecheck --print-limit 100000 ./gpu_test_attention --gtest_filter=BwdGpu.FastModeOnePerHeadDim > $r/race_$v.txt 2>&1
  echo "$v rc=$? $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED' $r/race_$v.txt | tr '\n' ' ') ld_shared_v4 reports: $(grep -c 'Error: Race reported between Read access at flexjit::ld_shared_v4' $r/race_$v.txt) other: $(grep 'Error: Race reported' $r/race_$v.txt | grep -v bulk_load | grep -vc ld_shared_v4) $(( $(date +%s) - t0 )) s"
done
cd $out && tar czf za6.tar.gz r && rm -rf r
