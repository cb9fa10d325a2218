#!/bin/bash
# zzg3: GQA groups split over the fast dK/dV kernel's CTAs (FLEXJIT_BWD_HEAD_SPLITS / the
# simulated grid's choice). The GPU tests the change touches against the float64 reference,
# memcheck on the new test, then main's flexjit (flexjit_old) against the new one, alternating,
# two rounds, on gqa_few_heads.json and six suite rows, and SDPA's cuDNN / FA2 on the few-heads rows.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzg3}; r=/tmp/zzg3r/r; mkdir -p $r $out
save() { (cd /tmp/zzg3r && tar czf $out/zzg3.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
tests='BwdGpu.FastModeSplitsGqaGroupsOverCtas:SeqLensGpu.WarpSpecializedBackward:BwdGpu.Gqa8To1AndBshd:BwdGpu.FastModeOnePerHeadDim:BwdGpu.ShortSequencesWithAnOddGqaRatio:BwdGpu.WarpSpecializedFastDkdvManyKvTiles'
FLEXJIT_CACHE_DIR=/tmp/fct timeout 230 ./gpu_test_attention --gtest_filter="$tests" > $r/tests.txt 2>&1; echo "rc=$?" >> $r/tests.txt
grep -E '^\[  (PASSED|FAILED) |^\[ +OK|FAILED  \]|rc=|Failure|error' $r/tests.txt | tail -30; echo "tests $(( $(date +%s) - t0 )) s"; save
export FLEXJIT_AUTOTUNE=off
for round in 1 2; do
  for v in old new; do
    bin=./flexjit; [ $v = old ] && bin=./flexjit_old
    FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 80 $bin bench --suite gqa_few_heads.json --json $r/few_${v}_$round.jsonl > $r/few_${v}_$round.log 2>&1 || tail -3 $r/few_${v}_$round.log
    FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 60 $bin bench --suite suite6.json --json $r/suite_${v}_$round.jsonl > $r/suite_${v}_$round.log 2>&1 || tail -3 $r/suite_${v}_$round.log
  done
  echo "round $round $(( $(date +%s) - t0 )) s"; save
done
left=$(( 500 - ($(date +%s) - t0) ))
[ $left -gt 30 ] && timeout $left python3 offsuite_peers.py --suite gqa_few_heads.json --no-flex > $r/sdpa.jsonl 2> $r/sdpa.err
echo "sdpa $(( $(date +%s) - t0 )) s"; save
left=$(( 585 - ($(date +%s) - t0) ))
[ $left -gt 40 ] && FLEXJIT_CACHE_DIR=/tmp/fct timeout $left compute-sanitizer --tool memcheck ./gpu_test_attention --gtest_filter='BwdGpu.FastModeSplitsGqaGroupsOverCtas' > $r/memcheck.txt 2>&1; echo "rc=$?" >> $r/memcheck.txt
grep -E "ERROR SUMMARY|PASSED|FAILED|rc=" $r/memcheck.txt | tail -5
python3 - $r <<'PY'
import json, sys, os, glob
r = sys.argv[1]
def load(f):
    d = {}
    if os.path.exists(f):
        for line in open(f):
            if line.startswith("{") and '"name"' in line:
                o = json.loads(line); d[o["name"]] = o
    return d
peers = {}
for line in open(f"{r}/sdpa.jsonl") if os.path.exists(f"{r}/sdpa.jsonl") else []:
    if line.startswith("{") and '"name"' in line:
        o = json.loads(line); peers.setdefault(o["name"], {})[o["system"]] = o
for kind in ("few", "suite"):
    runs = {(v, k): load(f"{r}/{kind}_{v}_{k}.jsonl") for v in ("old", "new") for k in (1, 2)}
    for n in runs[("new", 1)]:
        def vals(v, key): return [runs[(v, k)].get(n, {}).get(key) or 0 for k in (1, 2)]
        ob, nb = vals("old", "bwd_tflops"), vals("new", "bwd_tflops")
        of, nf = vals("old", "fwd_tflops"), vals("new", "fwd_tflops")
        mode = runs[("new", 1)][n].get("bwd_mode", "")
        cud = peers.get(n, {}).get("cudnn", {}).get("bwd_tflops")
        print(f"{n:28s} bwd old {ob} new {nb} x{max(nb)/max(max(ob),1e-9):.3f} | fwd old {of} new {nf} | cudnn bwd {cud} new/cudnn {max(nb)/cud if cud else 0:.2f} | {mode}")
PY
echo "$(( $(date +%s) - t0 )) s"
save
