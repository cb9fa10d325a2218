#!/bin/bash
# zzg4: the landing build of the split GQA groups (a compile-time variant, HEAD_SPLITS; other
# kernels' SASS is main's). GPU tests against the float64 reference (the new test, the GQA and
# lengths tests, NaN propagation, random problems), memcheck and racecheck on the new test, then
# main's flexjit (flexjit_old) against the new one, alternating, two rounds, on gqa_few_heads.json,
# and SDPA's cuDNN / FA2 and FlexAttention on its rows.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzg4}; r=/tmp/zzg4r/r; mkdir -p $r $out
save() { (cd /tmp/zzg4r && tar czf $out/zzg4.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
tests='BwdGpu.FastModeSplitsGqaGroupsOverCtas:SeqLensGpu.WarpSpecializedBackward:BwdGpu.Gqa8To1AndBshd:BwdGpu.ShortSequencesWithAnOddGqaRatio:BwdGpu.NanInDoReachesOnlyTheGradientsThatReadIt:BwdGpu.FastModeOnePerHeadDim:RandomProblemsGpu.PaddedBatchesForwardAndBackward:RandomProblemsGpu.RaggedBatchesForwardAndBackward'
FLEXJIT_CACHE_DIR=/tmp/fct timeout 300 ./gpu_test_attention --gtest_filter="$tests" > $r/tests.txt 2>&1; echo "rc=$?" >> $r/tests.txt
grep -E '^\[  (PASSED|FAILED) |^\[ +OK|FAILED  \]|rc=|Failure' $r/tests.txt | tail -30; echo "tests $(( $(date +%s) - t0 )) s"; save
export FLEXJIT_AUTOTUNE=off
for round in 1 2; do
  for v in old new; do
    bin=./flexjit; [ $v = old ] && bin=./flexjit_old
    FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 70 $bin bench --suite gqa_few_heads.json --json $r/few_${v}_$round.jsonl > $r/few_${v}_$round.log 2>&1 || tail -3 $r/few_${v}_$round.log
  done
  echo "round $round $(( $(date +%s) - t0 )) s"; save
done
for tool in memcheck racecheck; do
  left=$(( 480 - ($(date +%s) - t0) ))
  [ $left -gt 30 ] && FLEXJIT_CACHE_DIR=/tmp/fct timeout $left compute-sanitizer --tool $tool ./gpu_test_attention --gtest_filter='BwdGpu.FastModeSplitsGqaGroupsOverCtas' > $r/$tool.txt 2>&1; echo "rc=$?" >> $r/$tool.txt
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED|rc=" $r/$tool.txt | tail -4; echo "$tool $(( $(date +%s) - t0 )) s"; save
done
left=$(( 540 - ($(date +%s) - t0) ))
[ $left -gt 30 ] && timeout $left python3 offsuite_peers.py --suite gqa_few_heads.json > $r/peers.jsonl 2> $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s"; save
python3 - $r <<'PY'
import json, sys, os
r = sys.argv[1]
def load(f):
    d = {}
    if os.path.exists(f):
        for line in open(f):
            if line.startswith("{") and '"name"' in line:
                o = json.loads(line); d[o["name"]] = o
    return d
peers = {}
for line in open(f"{r}/peers.jsonl") if os.path.exists(f"{r}/peers.jsonl") else []:
    if line.startswith("{") and '"name"' in line:
        o = json.loads(line); peers.setdefault(o["name"], {})[o["system"]] = o
runs = {(v, k): load(f"{r}/few_{v}_{k}.jsonl") for v in ("old", "new") for k in (1, 2)}
for n in runs[("new", 1)]:
    def vals(v, key): return [runs[(v, k)].get(n, {}).get(key) or 0 for k in (1, 2)]
    ob, nb = vals("old", "bwd_tflops"), vals("new", "bwd_tflops")
    mode = runs[("new", 1)][n].get("bwd_mode", "")
    ps = " ".join(f"{s} {v.get('bwd_tflops')}" for s, v in sorted(peers.get(n, {}).items()))
    best = max([v.get('bwd_tflops') or 0 for v in peers.get(n, {}).values()] or [0])
    print(f"{n:28s} bwd old {ob} new {nb} x{max(nb)/max(max(ob),1e-9):.3f} | {ps} | new/best {max(nb)/best if best else 0:.2f} | {mode}")
PY
echo "$(( $(date +%s) - t0 )) s"
save
