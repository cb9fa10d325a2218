#!/usr/bin/env bash
# Session (zd): the deterministic way measured when tuning (FLEXJIT_DETERMINISTIC_DQ=auto,
# FLEXJIT_AUTOTUNE=on). (1) the new test and the backward tests the restructured call runs
# through; (2) the documents problems with tuning on, a fresh cache (measures), then again
# (cached), against the rule (tuning off) in the same call.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zd4}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 330 ./gpu_test_attention --gtest_filter='BwdGpu.DeterministicModeMeasuresTheWayWhenTuning:BwdGpu.DeterministicModeTakesTheFasterWayPerCall:BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits:BwdGpu.CapturedInAGraphAndReplayedGivesTheSameGradients:BwdGpu.TuningLaunchesLeaveNoDqBehind:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeWritesDqOfQueryTilesNoKeyReaches:BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.FastAndDeterministicModes' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $r/tests.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
grep -E "^\[       OK|FAILED|Failure|Expected|Which is|actual" $r/tests.txt | head -30
b() {  # tag autotune cache
  FLEXJIT_AUTOTUNE=$2 FLEXJIT_CACHE_DIR=$3 timeout 150 ./flexjit bench --suite suite.json --only document_causal_d128,long_document_causal_d128 --bwd-mode deterministic > $r/b_$1.jsonl 2> $r/b_$1.err
  echo "$1 rc=$? $(( $(date +%s) - t0 )) s"
  FLEXJIT_AUTOTUNE=$2 FLEXJIT_CACHE_DIR=$3 timeout 100 ./flexjit bench --suite suite64x.json --only document_causal_d64 --bwd-mode deterministic > $r/b_${1}_64.jsonl 2>> $r/b_$1.err
  echo "$1 d64 rc=$? $(( $(date +%s) - t0 )) s"
}
b rule off /tmp/fc_rule
b tuned1 on /tmp/fc_tuned
b tuned2 on /tmp/fc_tuned
b rule2 off /tmp/fc_rule
grep -h '"name"' $r/b_*.jsonl /dev/null | python3 -c "
import sys, json
for l in sys.stdin:
    o = json.loads(l); print(o['name'], o.get('bwd_mode'), o.get('bwd_configs'), o.get('bwd_tflops'))
" | tee $r/summary.txt
grep -o '"[^"]*family=deterministic_dq;[^"]*"' /tmp/fc_tuned/autotune.json | head -3 > $r/keys.txt
python3 -c "
import json; d=json.load(open('/tmp/fc_tuned/autotune.json'))
es=d.get('entries', d)
for k,v in (es.items() if isinstance(es, dict) else []):
    if 'deterministic_dq' in k: print(k[-80:], json.dumps(v)[:600])
" | tee -a $r/summary.txt
cd $out && tar czf zd4.tar.gz r && rm -rf r
