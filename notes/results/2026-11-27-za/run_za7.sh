#!/usr/bin/env bash
# Session (za) za7: is za5's one extra racecheck report (ld.shared.v4 against st.shared.b32, seen
# in one of three runs of the landed code) there before the change too? racecheck on
# BwdGpu.FastModeOnePerHeadDim, main's test binary and the landed one, three runs each, alternating.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/za7}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
for i in 1 2 3; do
  for v in base final; do
    bin=./gpu_test_attention; [ $v = base ] && bin=./gpu_test_attention_base
    FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 60 compute-sanitizer --tool racecheck --print-limit 100000 $bin --gtest_filter=BwdGpu.FastModeOnePerHeadDim > $r/race_${v}_$i.txt 2>&1
    echo "$v $i rc=$? $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED' $r/race_${v}_$i.txt | tr '\n' ' ') not bulk_load: $(grep 'Error: Race reported' $r/race_${v}_$i.txt | grep -vc bulk_load) $(( $(date +%s) - t0 )) s"
  done
done
cd $out && tar czf za7.tar.gz r && rm -rf r
