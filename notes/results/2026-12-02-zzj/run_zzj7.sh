#!/bin/bash
# zzj7: the dK/dV kernels' query walk without the tiles past the queries' end (TileWalk's TRIM):
# main's templates (A) against the new (B), alternating rounds, forward + fast backward and the
# deterministic backward; then the backward GPU tests on B (the embedded templates).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzj7}; r=/tmp/zzj7r/r; mkdir -p $r $out
save() { (cd /tmp/zzj7r && tar czf $out/zzj7.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
left() { echo $(( 420 - ($(date +%s) - t0) )); }
arm() { a=$1; n=$2; shift 2; [ $(left) -lt 40 ] && return; FLEXJIT_TEMPLATE_DIR=$PWD/tpl$a FLEXJIT_CACHE_DIR=/tmp/fc_$a timeout $(left) ./flexjit bench --suite trim.json --json $r/${a}_$n.jsonl "$@" > $r/${a}_$n.log 2>&1 || tail -3 $r/${a}_$n.log; echo "$a $n $(( $(date +%s) - t0 )) s"; save; }
arm A 1; arm B 1; arm B 2; arm A 2
arm A d1 --bwd-mode deterministic; arm B d1 --bwd-mode deterministic
python3 - $r > $r/ab.txt <<'PY'
import json, sys, glob
r = sys.argv[1]
def rows(pat):
    d = {}
    for f in sorted(glob.glob(f"{r}/{pat}")):
        for line in open(f):
            if line.startswith("{") and '"name"' in line:
                o = json.loads(line)
                for k in ("fwd_ms", "bwd_ms"):
                    if o.get(k): d.setdefault(o["name"], {}).setdefault(k, []).append(o[k])
    return d
for tag, pa, pb in (("fast", "A_[12].jsonl", "B_[12].jsonl"), ("det", "A_d1.jsonl", "B_d1.jsonl")):
    A, B = rows(pa), rows(pb)
    for n in A:
        a, b = A[n].get("bwd_ms", []), B.get(n, {}).get("bwd_ms", [])
        if a and b: print(f"{tag} {n:24s} bwd ms A {'/'.join(f'{x:.4f}' for x in a)} B {'/'.join(f'{x:.4f}' for x in b)} speed-up x{min(a)/min(b):.3f}")
PY
cat $r/ab.txt; save
FLEXJIT_CACHE_DIR=/tmp/fct timeout $(left) ./gpu_test_attention --gtest_filter='BwdGpu.QueryTilesPastTheQueriesEndAreLeftOut:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.WarpSpecializedFastDkdv*:BwdGpu.Gqa8To1AndBshd:BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim:SeqLensGpu.WarpSpecialized*Backward:BwdGpu.SuiteMods:BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches:BwdGpu.OrderedModeWritesDqOfQueryTilesNoKeyReaches' > $r/tests.txt 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |OK \]|FAILED \]|Failure" $r/tests.txt | head -30; save
