#!/bin/bash
# zzo4: (1) wgmma_rate: the tensor pipe's rate per wgmma shape (m64n64k16 / m64n128k16, SS / RS,
# one or two warpgroups); (2) per-sequence lengths at d72 / d80: two stages (the default) against
# three, rounds alternating.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzo4}; r=/tmp/zzo4r/r; mkdir -p $r $out
save() { (cd /tmp/zzo4r && tar czf $out/zzo4.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $r/gpu.txt
./wgmma_rate 4000 > $r/rate.txt 2>&1; ./wgmma_rate 8000 >> $r/rate.txt 2>&1; cat $r/rate.txt; save
arm() { a=$1; n=$2; shift 2; FLEXJIT_CACHE_DIR=/tmp/fc timeout 60 ./flexjit bench --json $r/${a}_$n.jsonl --suite ragged_72_80.json "$@" > $r/${a}_$n.log 2>&1; echo "$a $n rc=$? $(( $(date +%s) - t0 )) s"; save; }
arm s2 1; arm s3 1 --dkdv-config m64n128w8s3ws; arm s3 2 --dkdv-config m64n128w8s3ws; arm s2 2; arm s2 3; arm s3 3 --dkdv-config m64n128w8s3ws
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
    if x and y: print(f"{n}: s2 {x} s3 {y} s2/s3 median {st.median(x)/st.median(y):.3f}")
PY
echo "done $(( $(date +%s) - t0 )) s"; save
