#!/bin/bash
# zzm1: zzl_sync_narrow.patch's GPU run (the synchronous dK/dV kernels and the dQ kernel over the
# tensors' columns rounded to 16). First the GPU tests against the float64 reference, side by side;
# then main's templates (A, 0b73190) against the new ones (B) on the synchronous backward paths,
# from one binary through FLEXJIT_TEMPLATE_DIR, rounds alternating.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzm1}; r=/tmp/zzm1r/r; mkdir -p $r $out
save() { (cd /tmp/zzm1r && tar czf $out/zzm1.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1
t0=$(date +%s)
left() { echo $(( 580 - ($(date +%s) - t0) )); }
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > $r/gpu.txt 2>&1
t() { n=$1; shift; FLEXJIT_CACHE_DIR=/tmp/fct$n timeout 220 ./gpu_test_attention "$@" > $r/tests$n.txt 2>&1; echo "tests$n rc=$? $(( $(date +%s) - t0 )) s" >> $r/rc.txt; }
t 1 --gtest_filter='BwdGpu/SynchronousKernelsSpanOnlyTheTensorsColumns.*:BwdGpu.BlockConfigs' &
t 2 --gtest_filter='BufferGradGpu.*' &
t 3 --gtest_filter='BwdGpu.HeadDimsThatAreNoMultipleOf64:SeqLensGpu.HeadDimsThatAreNoMultipleOf64:BwdGpu.TilesWithAWholeSlabPastTheHeadDim' &
FLEXJIT_RANDOM_PROBLEMS=10 t 4 --gtest_filter='RandomProblemsGpu.AnyHeadDimForwardAndBackward' &
t 5 --gtest_filter='FwdGpu/OutputGemmSpansOnlyVsColumns.*:BwdGpu/GradientGemmsSpanOnlyTheTensorsColumns.*:*Deterministic*' &
wait
cat $r/rc.txt; for f in $r/tests*.txt; do echo "== $f"; grep -E "PASSED|FAILED|Failure|SKIPPED \]" $f | head -12; done; save
export FLEXJIT_AUTOTUNE=off
arm() { a=$1; n=$2; shift 2; [ $(left) -lt 50 ] && return; FLEXJIT_TEMPLATE_DIR=$PWD/tpl$a FLEXJIT_CACHE_DIR=/tmp/fc_$a timeout $(( $(left) < 110 ? $(left) - 10 : 100 )) ./flexjit bench --suite bwd_hd.json --json $r/${a}_$n.jsonl "$@" > $r/${a}_$n.log 2>&1 || tail -3 $r/${a}_$n.log; echo "$a $n $(( $(date +%s) - t0 )) s"; save; }
G="--bwd-mode deterministic --dkdv-config m64n128w8s2g --dq-config m64n64w4s2g"  # 'g' dK/dV + dQ kernel
M="--bwd-mode deterministic --dkdv-config m64n64w4s2 --dq-config m64n64w4s2"      # mma.sync (sm_80's path)
F="--bwd-mode fast --dkdv-config m64n128w8s2g"                                    # 'g' dK/dV adding dQ
arm A g1 $G; arm B g1 $G; arm A m1 $M; arm B m1 $M; arm B g2 $G; arm A g2 $G; arm A f1 $F; arm B f1 $F
python3 - $r > $r/ab.txt <<'PY'
import json, sys, glob
r = sys.argv[1]
t = {}
for f in sorted(glob.glob(r + "/[AB]_*.jsonl")):
    arm, run = f.split("/")[-1][:-6].split("_", 1)
    for line in open(f):
        if not line.startswith("{"): continue
        o = json.loads(line)
        if "bwd_ms" in o: t.setdefault((run[0], o["name"], arm), []).append(o["bwd_ms"])
for kind in "gmf":
    for name in dict.fromkeys(k[1] for k in t if k[0] == kind):
        a, b = t.get((kind, name, "A"), []), t.get((kind, name, "B"), [])
        if a and b: print(f"{kind} {name}: A {a} B {b} x {min(a)/min(b):.4f}")
PY
cat $r/ab.txt; save
