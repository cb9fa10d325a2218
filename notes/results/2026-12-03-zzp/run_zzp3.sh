#!/bin/bash
# zzp3: the 128-query tiles with dQ a tile late (each warpgroup its query block's share, warpgroup 1
# half a tile behind, PACKED_SMEM). (1) the new GPU test, the lengths tests, memcheck / synccheck /
# racecheck on the new test (each with its timeout: a hang shows as a timeout); (2) A/B against
# m64n128w8s3ws (tv_v0: Pᵀ staged for dV; tv_v2: dV from registers after dSᵀ), rounds alternating.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzp3}; r=/tmp/zzp3r/r; mkdir -p $r $out
save() { (cd /tmp/zzp3r && tar czf $out/zzp3.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
T=./gpu_test_attention
export FLEXJIT_TEMPLATE_DIR=$PWD/tv_v0
FLEXJIT_CACHE_DIR=/tmp/fc1 timeout 200 $T --gtest_filter='BwdGpu.QueryTilesOf128AtHeadDim64' > $r/new_test.txt 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/fc3 timeout 200 $T --gtest_filter='SeqLensGpu.WarpSpecializedBackward' > $r/seqlens.txt 2>&1 &
for tool in memcheck synccheck racecheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_$tool timeout 280 compute-sanitizer --tool $tool --kernel-name kns=attention_bwd_dkdv $T --gtest_filter='BwdGpu.QueryTilesOf128AtHeadDim64' > $r/$tool.txt 2>&1 &
done
wait; echo "tests $(( $(date +%s) - t0 )) s"
grep -hE "OK \]|FAILED|PASSED|Failure|error" $r/new_test.txt | head -30; grep -hE "FAILED|PASSED|Failure" $r/seqlens.txt | tail -8
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" $r/memcheck.txt $r/synccheck.txt $r/racecheck.txt; grep -hE "PASSED|FAILED" $r/memcheck.txt $r/synccheck.txt $r/racecheck.txt | tail -6
grep -oE "(Write|Read)-after-(Write|Read) hazard[^(]*\(|Race reported between [A-Za-z]* access at [^+]*" $r/racecheck.txt | sort | uniq -c | head
save
export FLEXJIT_AUTOTUNE=off
arm() { v=$1; c=$2; n=$3; FLEXJIT_TEMPLATE_DIR=$PWD/tv_$v FLEXJIT_CACHE_DIR=/tmp/fcb timeout 100 ./flexjit bench --json $r/${v}_${c}_$n.jsonl --suite d64_q128_small.json --dkdv-config $c > $r/${v}_${c}_$n.log 2>&1; echo "$v $c $n rc=$? $(( $(date +%s) - t0 )) s"; save; }
arm v0 m128n128w8s2ws 0; arm v2 m128n128w8s2ws 0; arm v0 m64n128w8s3ws 0
for n in 1 2; do arm v0 m64n128w8s3ws $n; arm v0 m128n128w8s2ws $n; arm v2 m128n128w8s2ws $n; done
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
echo "done $(( $(date +%s) - t0 )) s"; save
