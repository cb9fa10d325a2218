#!/bin/bash
# zzn5: the landing build's default dK/dV config at d72-d96 (two stages, two dQ staging buffers)
# against three stages (one buffer taken by turns), fast backward, rounds alternating.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzn5}; r=/tmp/zzn5r/r; mkdir -p $r $out
save() { (cd /tmp/zzn5r && tar czf $out/zzn5.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1 FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
O="--only noop_d80,causal_d80,noop_d96,causal_d96,causal_d72,gqa_causal_d96,vith_d80_s257,phi3_d96_causal_s2048"
arm() { a=$1; n=$2; shift 2; FLEXJIT_CACHE_DIR=/tmp/fc timeout 50 ./flexjitC bench --suite bwd_hd.json $O --json $r/${a}_$n.jsonl "$@" > $r/${a}_$n.log 2>&1; echo "$a $n rc=$? $(grep -c bwd_ms $r/${a}_$n.jsonl) $(( $(date +%s) - t0 )) s" >> $r/rc.txt; save; }
arm s2 1 --dkdv-config m64n128w8s2ws; arm s3 1 --dkdv-config m64n128w8s3ws; arm s3 2 --dkdv-config m64n128w8s3ws; arm s2 2 --dkdv-config m64n128w8s2ws; arm s2 3 --dkdv-config m64n128w8s2ws; arm s3 3 --dkdv-config m64n128w8s3ws
python3 - $r <<'PY' | tee $r/ab.txt
import json, sys, glob, statistics as st
t = {}
for f in glob.glob(sys.argv[1] + "/s*_*.jsonl"):
    a = f.split("/")[-1][:2]
    for l in open(f):
        if l.startswith("{") and "bwd_ms" in l:
            o = json.loads(l); t.setdefault((o["name"], a), []).append(o["bwd_ms"])
for n in sorted({k[0] for k in t}):
    x, y = t.get((n, "s2"), []), t.get((n, "s3"), [])
    if x and y: print(f"{n}: s2 {x} s3 {y} s3/s2 x median {st.median(x)/st.median(y):.3f}")
PY
cat $r/rc.txt; save
