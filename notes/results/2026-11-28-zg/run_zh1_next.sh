#!/usr/bin/env bash
# For the next session's first call (zh1): what (zg) left unrun on a GPU. Stage in .gpu/<s>/:
# libflexjit.so (stripped from build/libflexjit.so.0.1.0), gpu_test_attention (stripped), this
# script and the pytest wheels (pip download -d wheels pytest). Then:
#   1. the Python GPU tests on 59b0870's package (automatic masks built during a graph capture, the stream reader);
#   2. compute-sanitizer racecheck on BwdGpu.OrderedModeOnePerHeadDim (the ordered kernels' lean
#      form, 2fba0dc), given the time zg7's 215 s did not: side by side with 1.
set -u
cd "$(dirname "$0")"; g=$PWD
out=${OUT:-/tmp/zh1}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_race timeout 560 compute-sanitizer --tool racecheck --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.OrderedModeOnePerHeadDim > $out/san_racecheck.txt 2>&1 &
python3 -c "import pytest" 2>/dev/null || python3 -m pip install -q --no-index --find-links $g/wheels pytest > /dev/null 2>&1
(cd ../../python && FLEXJIT_LIBRARY=$g/libflexjit.so FLEXJIT_CACHE_DIR=/tmp/fc_py PYTHONPATH=$PWD timeout 400 python3 -m pytest -q -rs tests > $out/pytest.txt 2>&1; echo "pytest rc=$?")
tail -3 $out/pytest.txt
wait
echo "racecheck: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED' $out/san_racecheck.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
grep -o 'Race reported between [A-Za-z]* access at [^(]*' $out/san_racecheck.txt | sort | uniq -c | head
