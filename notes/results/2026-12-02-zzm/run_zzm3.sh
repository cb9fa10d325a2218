#!/bin/bash
# zzm3: dQ by turns at head dims 72 to 96 in the fast mode's warp-specialised dK/dV kernel (the
# turn's share over the tensors' columns rounded to 16). The plan is the host's (dq_plan), so main
# (A: flexjitA, built at f8cbaac) and the change (B: flexjitB) are two binaries, rounds alternating
# on bwd_hd.json (fast, default configs). Then the GPU tests and compute-sanitizer, side by side.
# (490 s: the first try of this call was lost with the machine, and its device time with it.)
# It ran the patch's first form (zzm_dq_turns.patch before the fix in stage_dq: a race, see notes/perf.md "(zzm)").
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzm3}; r=/tmp/zzm3r/r; mkdir -p $r $out
save() { (cd /tmp/zzm3r && tar czf $out/zzm3.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1
t0=$(date +%s)
left() { echo $(( 490 - ($(date +%s) - t0) )); }
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > $r/gpu.txt 2>&1
arm() { a=$1; n=$2; shift 2; FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_$a timeout 100 ./flexjit$a bench --suite bwd_hd.json --json $r/${a}_$n.jsonl "$@" > $r/${a}_$n.log 2>&1 || tail -3 $r/${a}_$n.log; echo "$a $n $(( $(date +%s) - t0 )) s"; save; }
arm A 1; arm B 1; arm B 2; arm A 2
python3 - $r > $r/ab.txt <<'PY'
import json, sys, glob
r = sys.argv[1]
t = {}
for f in sorted(glob.glob(r + "/[AB]_*.jsonl")):
    arm = f.split("/")[-1][0]
    for line in open(f):
        if not line.startswith("{"): continue
        o = json.loads(line)
        if "bwd_ms" in o: t.setdefault((o["name"], arm), []).append(o["bwd_ms"])
for name in dict.fromkeys(k[0] for k in t):
    a, b = t.get((name, "A"), []), t.get((name, "B"), [])
    if a and b: print(f"{name}: A {a} B {b} x {min(a)/min(b):.4f}")
PY
cat $r/ab.txt; save
export FLEXJIT_CACHE_DIR
tt() { n=$1; lim=$2; shift 2; FLEXJIT_CACHE_DIR=/tmp/fct$n timeout $lim "$@" > $r/$n.txt 2>&1; echo "$n rc=$? $(( $(date +%s) - t0 )) s $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $r/$n.txt | tr '\n' ' ') $(grep -c 'OK \]' $r/$n.txt) ok $(grep -c 'FAILED \]' $r/$n.txt) failed" >> $r/rc.txt; }
L=$(( $(left) - 15 ))
T=./gpu_test_attention
tt t1 $L $T --gtest_filter='BwdGpu/DqByTurnsOverTheTensorsColumns.*' &
tt t2 $L $T --gtest_filter='BwdGpu/GradientGemmsSpanOnlyTheTensorsColumns.*:BwdGpu.FastModeSplitsGqaGroupsOverCtas' &
tt t3 $L $T --gtest_filter='BwdGpu.HeadDimsThatAreNoMultipleOf64:SeqLensGpu.HeadDimsThatAreNoMultipleOf64:BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.DeterministicModeTakesTheFasterWayPerCall' &
FLEXJIT_RANDOM_PROBLEMS=10 tt t4 $L $T --gtest_filter='RandomProblemsGpu.AnyHeadDimForwardAndBackward' &
tt t5 $L $T --gtest_filter='BufferGradGpu.*:BwdGpu.FastAndDeterministicModes' &
for i in 0 1 2 3 4 5; do tt rc$i $L compute-sanitizer --tool racecheck $T --gtest_filter="BwdGpu/DqByTurnsOverTheTensorsColumns.Case/$i" & done
tt mc $L compute-sanitizer --tool memcheck $T --gtest_filter='BwdGpu/DqByTurnsOverTheTensorsColumns.*' &
tt sc $L compute-sanitizer --tool synccheck $T --gtest_filter='BwdGpu/DqByTurnsOverTheTensorsColumns.*' &
( while sleep 45; do save; done ) & saver=$!
wait $(jobs -p | grep -v $saver) 2>/dev/null
kill $saver; sort -V $r/rc.txt; for f in $r/t*.txt; do grep -E "FAILED|Failure" $f | head -5; done; save
