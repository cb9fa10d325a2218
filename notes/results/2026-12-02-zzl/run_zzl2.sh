#!/bin/bash
# zzl2: the backward over the tensors' own columns: main's templates (A) against the new ones (B)
# on head dims that are no multiple of 64, fast and deterministic; then divisible dK/dV kernels
# without the trim's check (059a41b's templates, C) against B; then cuDNN/FA2 on the head dims.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzl2}; r=/tmp/zzl2r/r; mkdir -p $r $out
save() { (cd /tmp/zzl2r && tar czf $out/zzl2.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1 FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
left() { echo $(( 575 - ($(date +%s) - t0) )); }
arm() { a=$1; n=$2; suite=$3; shift 3; [ $(left) -lt 60 ] && return; FLEXJIT_TEMPLATE_DIR=$PWD/tpl$a FLEXJIT_CACHE_DIR=/tmp/fc_$a timeout $(( $(left) < 130 ? $(left) - 10 : 120 )) ./flexjit bench --suite $suite --json $r/${a}_$n.jsonl "$@" > $r/${a}_$n.log 2>&1 || tail -3 $r/${a}_$n.log; echo "$a $n $(( $(date +%s) - t0 )) s"; save; }
arm A 1 bwd_hd.json; arm B 1 bwd_hd.json; arm B 2 bwd_hd.json; arm A 2 bwd_hd.json
arm A d1 bwd_hd.json --bwd-mode deterministic; arm B d1 bwd_hd.json --bwd-mode deterministic
arm B v1 bwd_div.json; arm C v1 bwd_div.json; arm C v2 bwd_div.json; arm B v2 bwd_div.json
python3 - $r > $r/ab.txt <<'PY'
import json, sys, glob
r = sys.argv[1]
t = {}
for f in sorted(glob.glob(r + "/*_*.jsonl")):
    arm, run = f.split("/")[-1][:-6].split("_", 1)
    kind = "det" if run.startswith("d") else "div" if run.startswith("v") else "fast"
    for line in open(f):
        if not line.startswith("{"): continue
        o = json.loads(line)
        if "bwd_ms" in o:
            t.setdefault((kind, o["name"], arm), []).append(o["bwd_ms"])
            if kind == "fast": t.setdefault(("fwd", o["name"], arm), []).append(o["fwd_ms"])
for kind, x, y in (("fast", "A", "B"), ("det", "A", "B"), ("fwd", "A", "B"), ("div", "B", "C")):
    for name in dict.fromkeys(k[1] for k in t if k[0] == kind):
        a, b = t.get((kind, name, x), []), t.get((kind, name, y), [])
        if a and b: print(f"{kind} {name}: {x} {a} {y} {b} x {min(a)/min(b):.4f}")
PY
cat $r/ab.txt; save
for a in A B; do echo "== $a vs peers (zzl1's call)"; python3 ratios_by_time.py $r/${a}_[12].jsonl --peers peers_hd.jsonl 2>&1 | tail -10; done | tee $r/ratios.txt; save
[ $(left) -gt 100 ] && { FLEXJIT_CACHE_DIR=/tmp/fct timeout $(( $(left) - 10 )) ./gpu_test_attention --gtest_filter='BwdGpu.GradientGemmsSpanOnlyTheTensorsColumns' > $r/tests.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "OK \]|FAILED|Failure" $r/tests.txt | head; save; }
