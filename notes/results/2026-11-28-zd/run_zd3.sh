#!/usr/bin/env bash
# Session (zd), the landed build (first-store ordered sums): (1) the ordered sums forced on the
# document masks (auto takes the dQ kernel there), against auto, two rounds; (2) every BwdGpu test
# in the default mode.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zd3}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_zd3
t0=$(date +%s)
b() {  # way suite only round
  FLEXJIT_DETERMINISTIC_DQ=$1 timeout 100 ./flexjit bench --suite $2.json --only $3 --bwd-mode deterministic > $r/b_$1_$2_r$4.jsonl 2> $r/b_$1_$2_r$4.err
  echo "$1 $2 r$4 rc=$? $(( $(date +%s) - t0 )) s"
}
for round in 1 2; do
  for way in auto ordered; do
    b $way suite document_causal_d128,long_document_causal_d128 $round
    b $way suite64x document_causal_d64 $round
  done
done
timeout 100 ./flexjit bench --suite suite.json --only document_causal_d128,long_document_causal_d128 > $r/b_fast_suite.jsonl 2>&1
timeout 60 ./flexjit bench --suite suite64x.json --only document_causal_d64 > $r/b_fast_suite64x.jsonl 2>&1
grep -h '"name"' $r/b_*.jsonl | python3 -c "
import sys, json
for l in sys.stdin:
    o = json.loads(l); print(o['name'], o.get('bwd_mode'), o.get('bwd_tflops'))
" | sort | tee $r/summary.txt
FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 330 ./gpu_test_attention --gtest_filter='BwdGpu.*' > $r/tests_default.txt 2>&1
echo "BwdGpu.* default rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $r/tests_default.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
grep -E "^\[       OK|FAILED|Failure" $r/tests_default.txt | head -40
cd $out && tar czf zd3.tar.gz r && rm -rf r
