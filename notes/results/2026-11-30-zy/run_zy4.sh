#!/usr/bin/env bash
# (zy4) Half-slab slices: the new test (ordered way forced), the per-head-dim tests with MLA's
# 192/128 under memcheck / racecheck / synccheck, then main against the build on mla_stages.json
# (deterministic two rounds, fast a third), then the peers on the MLA problems, in one call.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zy4}; r=/tmp/zy4r/r; mkdir -p $r $out
save() { (cd /tmp/zy4r && tar czf $out/zy4.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $r/gpu.txt
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/ft_0 timeout 200 ./gpu_test_attention --gtest_filter=BwdGpu.HalfSlabSlicesAtHeadDimsAbove128 > $r/test_halfslab.log 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/ft_1 timeout 200 ./gpu_test_attention --gtest_filter=BwdGpu.OrderedModeOnePerHeadDim > $r/test_ordered.log 2>&1 &
for tool in memcheck racecheck synccheck; do
  (FLEXJIT_CACHE_DIR=/tmp/ft_$tool timeout 230 compute-sanitizer --tool $tool --kernel-name kns=attention_bwd_dkdv --error-exitcode 9 ./gpu_test_attention --gtest_filter=BwdGpu.FastModeOnePerHeadDim > $r/$tool.log 2>&1; echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/$tool.log | tr '\n' ' ')" > $r/$tool.txt) &
done
wait
cat $r/memcheck.txt $r/racecheck.txt $r/synccheck.txt
for f in $r/test_*.log; do echo "$(basename $f): $(grep -E '^\[  (PASSED|FAILED)  \]|Failure|threw|rror' $f | head -6 | tr '\n' ' ')"; done
echo "tests $(( $(date +%s) - t0 )) s"
save
export FLEXJIT_AUTOTUNE=off
for rd in 1 2 3; do
  for v in old new; do
    [ $rd = 2 ] && v=$([ $v = old ] && echo new || echo old)
    if [ $v = old ]; then run=./flexjit_main; else run=./flexjit; fi
    m=deterministic; [ $rd = 3 ] && m=fast
    FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 100 $run bench --suite mla_stages.json --bwd-mode $m --json $r/${v}_${m}_$rd.jsonl > $r/${v}_${m}_$rd.log 2>&1 || tail -3 $r/${v}_${m}_$rd.log
  done
done
python3 - $r <<'PY'
import json, sys, glob, collections, statistics
r = sys.argv[1]
v = collections.defaultdict(list); cfg = {}
for f in sorted(glob.glob(r + "/*_*_?.jsonl")):
    ver, m, rd = f.split("/")[-1][:-6].split("_")
    for line in open(f):
        o = json.loads(line)
        if "name" in o: v[(o["name"], m, ver)].append(round(o.get("bwd_tflops", 0), 1)); cfg[(o["name"], m, ver)] = o.get("bwd_configs")
for m in ("fast", "deterministic"):
    for n in sorted({k[0] for k in v}):
        a, b = v[(n, m, "old")], v[(n, m, "new")]
        if a and b: print(f"{m:13s} {n:22s} old {a} new {b} x{statistics.median(b)/max(statistics.median(a),1e-9):.3f} {cfg[(n,m,'new')]}")
PY
echo "A/B $(( $(date +%s) - t0 )) s"
save
left=$(( 560 - ($(date +%s) - t0) ))
timeout $left python3 peers.py --suite mla_stages.json --only mla_causal,mla_noop,mla_gqa_causal,causal_160_128 > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
python3 - $r <<'PY'
import json, sys
for line in open(sys.argv[1] + "/peers.jsonl"):
    try: o = json.loads(line)
    except Exception: continue
    if "name" in o: print(o["name"], o.get("system"), round(o.get("fwd_tflops") or 0, 1), round(o.get("bwd_tflops") or 0, 1))
PY
echo "all $(( $(date +%s) - t0 )) s"
save
