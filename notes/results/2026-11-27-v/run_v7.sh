#!/usr/bin/env bash
# Session (v) v7: do the new checks catch the old code? The landing build's tests with main's
# (pre-fix) templates: OrderedModeNamesEachTileAfterItLands three times, and racecheck on
# OrderedModeOnePerHeadDim (now with the unmasked cases).
set -u
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_main FLEXJIT_CACHE_DIR=/tmp/fc_v7
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
timeout 120 ./gpu_test_attention --gtest_filter='BwdGpu.OrderedModeNamesEachTileAfterItLands' --gtest_repeat=3 > /tmp/v7a.txt 2>&1
echo "old templates, new test x3: $(grep -cE '^\[  FAILED  \] BwdGpu' /tmp/v7a.txt) failed iterations; $(grep -cE 'Expected: \(r\.d[kv]_error\)' /tmp/v7a.txt) dk/dv expectations failed; $(( $(date +%s) - t0 )) s"
grep -E 'error\) <' -A2 /tmp/v7a.txt | grep -E 'run [0-9]' | head -6
timeout 150 compute-sanitizer --tool racecheck ./gpu_test_attention --gtest_filter='BwdGpu.OrderedModeOnePerHeadDim' > /tmp/v7b.txt 2>&1
echo "racecheck, old templates: $(grep -E 'RACECHECK SUMMARY|^\[  (PASSED|FAILED)' /tmp/v7b.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
grep -E "Race reported between" -A1 /tmp/v7b.txt | grep -oE "(Write|Read) access at [a-zA-Z_:]+[^+]*\+0x[0-9a-f]+ in [a-z_.A-Z0-9]+:[0-9]+" | sed -E 's/\+0x[0-9a-f]+//' | sort | uniq -c | head -20
