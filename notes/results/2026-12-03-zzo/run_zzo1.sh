#!/bin/bash
# zzo1: what (zzn) owed. (1) BwdGpu/DqByTurnsOverTheTensorsColumns.* (cases 8 and 9 never ran on a
# GPU) and SeqLensGpu.HeadDimsThatAreNoMultipleOf64, with memcheck and synccheck on cases 8 and 9;
# (2) the landed default (three stages, turns) against main before 0fda193 (flexjitA = b4ab94a)
# and beside SDPA's cuDNN / FA2, in ONE call, rounds alternating.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzo1}; r=/tmp/zzo1r/r; mkdir -p $r $out
save() { (cd /tmp/zzo1r && tar czf $out/zzo1.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1
t0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > $r/gpu.txt 2>&1
FLEXJIT_CACHE_DIR=/tmp/fct timeout 250 ./gpu_test_attention --gtest_filter='BwdGpu/DqByTurnsOverTheTensorsColumns.*:SeqLensGpu.HeadDimsThatAreNoMultipleOf64' > $r/tests.txt 2>&1 &
for i in 8 9; do for tool in memcheck synccheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_${tool}_$i timeout 250 compute-sanitizer --tool $tool --kernel-name kns=attention_bwd_dkdv ./gpu_test_attention --gtest_filter="BwdGpu/DqByTurnsOverTheTensorsColumns.Case/$i" > $r/${tool}_$i.txt 2>&1 &
done; done
wait; echo "tests $(( $(date +%s) - t0 )) s"; grep -E "OK \]|FAILED \]|PASSED|FAILED" $r/tests.txt | tail -20; grep -h "ERROR SUMMARY" $r/memcheck_*.txt $r/synccheck_*.txt; save
export FLEXJIT_AUTOTUNE=off
arm() { a=$1; n=$2; shift 2; FLEXJIT_CACHE_DIR=/tmp/fc_$a timeout 60 ./$a bench --json $r/${a}_$n.jsonl "$@" > $r/${a}_$n.log 2>&1; echo "$a $n rc=$? $(( $(date +%s) - t0 )) s"; save; }
arm flexjitA h1 --suite bwd_hd.json; arm flexjit h1 --suite bwd_hd.json
arm flexjit h2 --suite bwd_hd.json; arm flexjitA h2 --suite bwd_hd.json
arm flexjitA h3 --suite bwd_hd.json; arm flexjit h3 --suite bwd_hd.json
timeout 150 python3 offsuite_peers.py --suite bwd_hd.json --no-flex > $r/peers.jsonl 2> $r/peers.err; echo "peers rc=$?"; save
for a in flexjitA flexjit; do echo "== $a"; python3 ratios_by_time.py $r/${a}_h[123].jsonl --peers $r/peers.jsonl; done > $r/ratios.txt 2>&1
python3 - $r <<'PY' | tee $r/ab.txt
import json, sys, glob, statistics as st
t = {}
for f in glob.glob(sys.argv[1] + "/flexjit*_h*.jsonl"):
    a = f.split("/")[-1].rsplit("_", 1)[0]
    for l in open(f):
        if l.startswith("{") and "bwd_ms" in l:
            o = json.loads(l); t.setdefault((o["name"], a), []).append(o["bwd_ms"])
for n in sorted({k[0] for k in t}):
    x, y = t.get((n, "flexjitA"), []), t.get((n, "flexjit"), [])
    if x and y: print(f"{n}: A {x} main {y} A/main median {st.median(x)/st.median(y):.3f}")
PY
echo "done $(( $(date +%s) - t0 )) s"; save
