#!/bin/bash
# zzn2: main (A) against main + zzm_dq_turns_in_tile.patch (C, the turns in their tile) and
# main + zzm_dq_turns.patch (B, a tile late through one buffer, the corrected waits), fast
# backward on bwd_hd.json, rounds alternating, every round bounded; SDPA's cuDNN and FA2 on the
# same problems in the same call; then main's deterministic mode and its synchronous paths
# ('g' dK/dV + dQ kernel, mma.sync) beside them (owed since (zzm)).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzn2}; r=/tmp/zzn2r/r; mkdir -p $r $out
save() { (cd /tmp/zzn2r && tar czf $out/zzn2.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1 FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
left() { echo $(( 580 - ($(date +%s) - t0) )); }
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > $r/gpu.txt 2>&1
arm() { a=$1; n=$2; shift 2; [ $(left) -lt 50 ] && return; FLEXJIT_CACHE_DIR=/tmp/fc_$a timeout $(( $(left) < 70 ? $(left) - 10 : 60 )) ./flexjit$a bench --suite bwd_hd.json --json $r/${a}_$n.jsonl "$@" > $r/${a}_$n.log 2>&1; echo "$a $n rc=$? $(grep -c bwd_ms $r/${a}_$n.jsonl) problems $(( $(date +%s) - t0 )) s" | tee -a $r/rc.txt; save; }
# zzn1's first test process ran out of its time before these (gtest runs them in file order)
FLEXJIT_CACHE_DIR=/tmp/fct timeout 200 ./gpu_test_attentionC --gtest_filter='BwdGpu/DqByTurnsOverTheTensorsColumns.*:BwdGpu/GradientGemmsSpanOnlyTheTensorsColumns.Case/11' > $r/tests.txt 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -c 'OK \]' $r/tests.txt) ok $(grep -c 'FAILED \]' $r/tests.txt) failed" | tee -a $r/rc.txt; grep -E "FAILED|Failure" $r/tests.txt | head; save
arm A 1; arm C 1; arm B 1; arm C 2; arm A 2; arm B 2
timeout 150 python3 offsuite_peers.py --suite bwd_hd.json --no-flex > $r/peers.jsonl 2> $r/peers.err; echo "peers rc=$? $(( $(date +%s) - t0 )) s" | tee -a $r/rc.txt; save
arm A 3; arm C 3; arm B 3; arm C 4; arm A 4
G="--bwd-mode deterministic --dkdv-config m64n128w8s2g --dq-config m64n64w4s2g"  # 'g' dK/dV + dQ kernel
M="--bwd-mode deterministic --dkdv-config m64n64w4s2 --dq-config m64n64w4s2"      # mma.sync (sm_80's path)
arm A d1 --bwd-mode deterministic; arm A g1 $G; arm A m1 $M
python3 - $r > $r/ab.txt <<'PY'
import json, sys, glob
r = sys.argv[1]
t = {}
for f in sorted(glob.glob(r + "/[ABC]_*.jsonl")):
    arm, run = f.split("/")[-1][:-6].split("_", 1)
    kind = run[0] if run[0] in "dgm" else "f"
    for line in open(f):
        if not line.startswith("{"): continue
        o = json.loads(line)
        if "bwd_ms" in o: t.setdefault((kind, o["name"], arm), []).append(o["bwd_ms"])
for name in dict.fromkeys(k[1] for k in t if k[0] == "f"):
    a, b, c = (t.get(("f", name, x), []) for x in "ABC")
    s = f"{name}: A {a} C {c} B {b}"
    if a and c: s += f" C/A x {min(a)/min(c):.4f}"
    if a and b: s += f" B/A x {min(a)/min(b):.4f}"
    print(s)
PY
cat $r/ab.txt; save
for f in "A_[1-4].jsonl" "C_[1-4].jsonl" "A_d1.jsonl" "A_g1.jsonl" "A_m1.jsonl"; do echo "== $f vs peers"; python3 ratios_by_time.py $r/$f --peers $r/peers.jsonl 2>&1 | tail -12; done | tee $r/ratios.txt; save
