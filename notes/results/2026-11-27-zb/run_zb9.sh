#!/usr/bin/env bash
# Session (zb) zb9, the landing call's second half for 30b7b73 (dq_accum zeroed by the preprocess):
# compute-sanitizer on one fast backward per head dim and on the ordered mode (its chains' copies),
# then flexjit beside the peers in one run (fast backward; SDPA: cuDNN, FA2; FlexAttention).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zb9}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
for tool in memcheck racecheck synccheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_tests timeout 90 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.FastModeOnePerHeadDim > $r/san_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$tool.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
done
FLEXJIT_CACHE_DIR=/tmp/fc_tests timeout 90 compute-sanitizer --tool memcheck --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.OrderedModeOnePerHeadDim > $r/san_memcheck_ordered.txt 2>&1
echo "memcheck ordered rc=$? $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $r/san_memcheck_ordered.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
grep -h "Race reported\|Hazard" $r/san_racecheck.txt | sort | uniq -c | head -5
FLEXJIT_CACHE_DIR=/tmp/fc_b timeout 80 ./flexjit bench --suite suite.json --only noop_d128,causal_d128,noop_d64,causal_d64,document_causal_d128,gqa_causal_d128 > $r/flexjit.jsonl 2> $r/flexjit.err
echo "flexjit $(( $(date +%s) - t0 )) s"
timeout 150 python3 peers.py --suite suite.json --only noop_d128,causal_d128,noop_d64,gqa_causal_d128 > $r/peers.jsonl 2> $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s"
left=$(( 540 - ($(date +%s) - t0) ))
[ $left -gt 40 ] && timeout $left python3 peers.py --no-sdpa --suite suite.json --only document_causal_d128,causal_d64 >> $r/peers.jsonl 2>> $r/peers.err
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys
r = sys.argv[1]
rows = {}
for f in ("flexjit.jsonl", "peers.jsonl"):
    for line in open(f"{r}/{f}"):
        line = line.strip()
        if not line.startswith("{"): continue
        o = json.loads(line)
        if "name" not in o: continue
        rows.setdefault(o["name"], {})[o["system"]] = o
for n, d in rows.items():
    print(n, " ".join(f"{s}={o.get('fwd_tflops')}/{o.get('bwd_tflops')}" for s, o in d.items()))
PY
cd $out && tar czf zb9.tar.gz r && rm -rf r
