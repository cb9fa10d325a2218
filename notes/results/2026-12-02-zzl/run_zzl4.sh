#!/bin/bash
# zzl4: racecheck on the new forward test alone (zzl3's ran out of time beside seven other processes).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzl4}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fcs timeout 330 compute-sanitizer --tool racecheck ./gpu_test_attention --gtest_filter=FwdGpu.OutputGemmSpansOnlyVsColumns > $out/racecheck_fwd.txt 2>&1
echo "racecheck rc=$? $(( $(date +%s) - t0 )) s"; grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|hazard|OK \]|FAILED' $out/racecheck_fwd.txt | tail -5
