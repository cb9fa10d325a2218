#!/bin/bash
# zzp2: variants of the 128-query tiles (template dirs tv_v0..v3: v0 Pᵀ staged for dV and DK_EARLY 2;
# v1 all of dK before dQ; v2 dV from registers after dSᵀ; v3 both), against m64n128w8s3ws (v0's
# templates), rounds alternating; then BwdGpu.FastModeSplitsGqaGroupsOverCtas (cut by zzp1's timeout).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzp2}; r=/tmp/zzp2r/r; mkdir -p $r $out
save() { (cd /tmp/zzp2r && tar czf $out/zzp2.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
arm() { v=$1; c=$2; n=$3; FLEXJIT_TEMPLATE_DIR=$PWD/tv_$v FLEXJIT_CACHE_DIR=/tmp/fcb timeout 100 ./flexjit bench --json $r/${v}_${c}_$n.jsonl --suite d64_q128_small.json --dkdv-config $c > $r/${v}_${c}_$n.log 2>&1; echo "$v $c $n rc=$? $(( $(date +%s) - t0 )) s"; save; }
for v in v0 v1 v2 v3; do arm $v m128n128w8s2ws 0; done; arm v0 m64n128w8s3ws 0
for n in 1 2; do
  arm v0 m64n128w8s3ws $n; for v in v0 v1 v2 v3; do arm $v m128n128w8s2ws $n; done
done
arm v0 m64n128w8s3ws 3
python3 - $r <<'PY' | tee $r/ab.txt
import json, sys, glob, statistics as st
t = {}
for f in glob.glob(sys.argv[1] + "/v*_[123].jsonl"):
    a = f.split("/")[-1].rsplit("_", 1)[0]
    for l in open(f):
        if l.startswith("{") and "bwd_ms" in l:
            o = json.loads(l); t.setdefault((o["name"], a), []).append(o["bwd_ms"])
arms = sorted({k[1] for k in t})
for n in sorted({k[0] for k in t}):
    base = st.median(t[(n, "v0_m64n128w8s3ws")])
    print(n, " ".join(f"{a}: {st.median(t[(n, a)]):.4f} ({base / st.median(t[(n, a)]):.3f})" for a in arms if (n, a) in t))
PY
echo "bench done $(( $(date +%s) - t0 )) s"; save
FLEXJIT_CACHE_DIR=/tmp/fc2 timeout 240 ./gpu_test_attention --gtest_filter='BwdGpu.FastModeSplitsGqaGroupsOverCtas' > $r/splits.txt 2>&1
grep -hE "OK \]|FAILED|PASSED|Failure" $r/splits.txt | head; echo "done $(( $(date +%s) - t0 )) s"; save
