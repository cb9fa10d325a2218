#!/bin/bash
# zzp1: 128-query tiles at d64 (m128n128w8s2ws). (1) the new GPU test alone, the fast-mode tests
# the statistics' 128-row padding touches, racecheck owed by (zzo); memcheck / synccheck on the new
# test; (2) A/B of the dK/dV config on d64_q128.json, rounds alternating.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzp1}; r=/tmp/zzp1r/r; mkdir -p $r $out
save() { (cd /tmp/zzp1r && tar czf $out/zzp1.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
T=./gpu_test_attention
FLEXJIT_CACHE_DIR=/tmp/fc1 timeout 300 $T --gtest_filter='BwdGpu.QueryTilesOf128AtHeadDim64' > $r/new_test.txt 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/fc2 timeout 300 $T --gtest_filter='BwdGpu.WarpSpecializedFastDkdv*:BwdGpu.FastMode*:BwdGpu.OrderedModeWritesDq*:BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.OddLengths*:BwdGpu.QueryTilesPast*' > $r/bwd.txt 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/fc3 timeout 300 $T --gtest_filter='SeqLensGpu.*' > $r/seqlens.txt 2>&1 &
for tool in memcheck synccheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_$tool timeout 330 compute-sanitizer --tool $tool --kernel-name kns=attention_bwd_dkdv $T --gtest_filter='BwdGpu.QueryTilesOf128AtHeadDim64' > $r/$tool.txt 2>&1 &
done
FLEXJIT_CACHE_DIR=/tmp/fc_race timeout 330 compute-sanitizer --tool racecheck --kernel-name kns=attention_bwd_dkdv \
  $T --gtest_filter='SeqLensGpu.UnmaskedHeadDims72And80WithThreeStages' > $r/racecheck_zzo.txt 2>&1 &
wait; echo "tests $(( $(date +%s) - t0 )) s"
grep -hE "OK \]|FAILED|PASSED|Failure|error" $r/new_test.txt | head -40; grep -hE "FAILED|PASSED" $r/bwd.txt $r/seqlens.txt | tail -12
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" $r/memcheck.txt $r/synccheck.txt $r/racecheck_zzo.txt; grep -hE "PASSED|FAILED" $r/memcheck.txt $r/synccheck.txt $r/racecheck_zzo.txt | tail -6
grep -oE "(Write|Read)-after-(Write|Read) hazard[^(]*\(" $r/racecheck_zzo.txt | sort | uniq -c | head
save
export FLEXJIT_AUTOTUNE=off
arm() { c=$1; n=$2; FLEXJIT_CACHE_DIR=/tmp/fcb timeout 100 ./flexjit bench --json $r/${c}_$n.jsonl --suite d64_q128.json --dkdv-config $c > $r/${c}_$n.log 2>&1; echo "$c $n rc=$? $(( $(date +%s) - t0 )) s"; save; }
arm m64n128w8s3ws 0
arm m64n128w8s3ws 1; arm m128n128w8s2ws 1; arm m128n128w8s2ws 2; arm m64n128w8s3ws 2
python3 - $r <<'PY' | tee $r/ab.txt
import json, sys, glob, statistics as st
t = {}
for f in glob.glob(sys.argv[1] + "/m*_[12].jsonl"):
    a = f.split("/")[-1].rsplit("_", 1)[0]
    for l in open(f):
        if l.startswith("{") and "bwd_ms" in l:
            o = json.loads(l); t.setdefault((o["name"], a), []).append(o["bwd_ms"])
for n in sorted({k[0] for k in t}):
    x, y = t.get((n, "m64n128w8s3ws"), []), t.get((n, "m128n128w8s2ws"), [])
    if x and y: print(f"{n}: m64 {x} m128 {y} m64/m128 median {st.median(x)/st.median(y):.3f}")
PY
echo "done $(( $(date +%s) - t0 )) s"; save
