#!/bin/bash
# (zzzl) call 2 (carry .gpu/zzzl and .fa4b, after a call that copied .fa4a to /tmp/fa4a; about
# 480 s). FA4's install in the background (for call 3); the one test call 1 ran out of time for;
# the backward A/B main / seed / seed64 (the seed at head dim 64 only) on table_bwd.json, 2 rounds;
# compute-sanitizer memcheck of small table-form calls (forward and backward); then the branch
# beside FlexAttention and SDPA's cuDNN / FA2 (peers.py, no --flash) on the diagonal-table peer
# suite (suite.json here), flexjit before and after the peers (run_zzzd_d.sh).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzl2}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
(cd ../.. && timeout 200 bash .fa4b/install.sh) > $out/install.txt 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/fj3 timeout 60 ./gta --gtest_filter='SeqLensGpu.ScoreDiagonalValuesOfShortSequences' > $out/tests_c.txt 2>&1
grep -hE "^\[ +(OK|FAILED) |Failure" $out/tests_c.txt | head
echo "test $(( $(date +%s) - t0 )) s"
OUT=$out bash ab2.sh bwd2 table_bwd.json bwd_ms 100 2 "" main:./flexjit_main:: seed:./flexjit:: seed64:./flexjit_seed64:: 2>&1 | grep -v "^bwd2 "
FLEXJIT_CACHE_DIR=/tmp/fjm timeout 90 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 9 \
  ./flexjit bench --suite memcheck_small.json > $out/memcheck.txt 2>&1
echo "memcheck rc=$? $(( $(date +%s) - t0 )) s"; grep -hE "ERROR SUMMARY|t5_small|relh_small" $out/memcheck.txt | head -5
OUT=$out bash run_zzzd_d.sh
wait; echo "install: $(tail -1 $out/install.txt)"
echo "all done $(( $(date +%s) - t0 )) s"
