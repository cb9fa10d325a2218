#!/bin/bash
# zzk2: GQA head splits that need not divide the group (7 heads in 3: 2, 2, 3), on the build with
# the trim patch and the uneven splits. First the timings on a quiet GPU: per problem, the old
# choice on zzk1's templates (tplB: divisors only) against the new default, then forced counts,
# then cuDNN (SDPA) in the same call. Then the backward GPU tests (zzk1's timed-out rest and the
# split tests), four processes side by side, and memcheck on the split tests.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzk2}; r=/tmp/zzk2r/r; mkdir -p $r $out
save() { (cd /tmp/zzk2r && tar czf $out/zzk2.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1 FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
left() { echo $(( 575 - ($(date +%s) - t0) )); }
# arm TAG TEMPLATES SPLITS PROBLEM: one bench of one problem ('' splits: the call's own choice)
arm() { [ $(left) -lt 330 ] && return; FLEXJIT_BWD_HEAD_SPLITS=$3 FLEXJIT_TEMPLATE_DIR=$PWD/$2 FLEXJIT_CACHE_DIR=/tmp/fc_$2 timeout 60 ./flexjit bench --suite zzk2_$4.json --json $r/$1_$4.jsonl > $r/$1_$4.log 2>&1 || tail -2 $r/$1_$4.log; }
for round in 1 2; do
  for pair in gqa7_s1500_b3:7 gqa7_s1500_b3_d64:7 gqa5_s2048_b2:5 gqa3_s4096_b1:3 gqa6_s3000_b2:3 gqa8_1kv_s8192:4; do
    n=${pair%%:*}; old=${pair##*:}
    arm old$round tplB $old $n; arm new$round tplN "" $n
  done
  echo "round $round $(( $(date +%s) - t0 )) s"; save
done
for s in 2 3 4; do
  for n in gqa7_s1500_b3 gqa5_s2048_b2 gqa6_s3000_b2; do arm f$s tplN $s $n; done
done
arm f1 tplN 1 gqa7_s1500_b3; arm f5 tplN 5 gqa7_s1500_b3; arm f2 tplN 2 gqa3_s4096_b1
echo "forced $(( $(date +%s) - t0 )) s"; save
timeout 100 python3 offsuite_peers.py --suite zzk2.json --no-flex > $r/peers.jsonl 2> $r/peers.err; echo "peers rc=$? $(( $(date +%s) - t0 )) s"; save
python3 - $r > $r/splits.txt <<'PY'
import json, sys, glob, os, collections
r = sys.argv[1]
t = collections.defaultdict(dict)
for f in glob.glob(f"{r}/*.jsonl"):
    arm = os.path.basename(f).split("_")[0]
    for line in open(f):
        if line.startswith("{") and '"name"' in line and "error" not in line:
            o = json.loads(line)
            if o.get("bwd_ms"): t[o["name"]][o.get("system", arm) if arm == "peers.jsonl" or arm == "peers" else arm] = o["bwd_ms"]
for n, d in sorted(t.items()):
    old = min(d.get("old1", 9), d.get("old2", 9)); new = min(d.get("new1", 9), d.get("new2", 9))
    print(f"{n:22s} old {old:.4f} new {new:.4f} x{old/new:.3f} | " + " ".join(f"{k} {v:.4f}" for k, v in sorted(d.items())))
PY
cat $r/splits.txt; save
T=./gpu_test_attention
run_tests() { FLEXJIT_CACHE_DIR=/tmp/fct_$1 timeout $(( $(left) - 60 )) $T --gtest_filter="$2" > $r/tests_$1.txt 2>&1; echo "tests $1 rc=$?"; }
run_tests 1 'BwdGpu.WarpSpecializedFastDkdv' &
run_tests 2 'BwdGpu.WarpSpecializedFastDkdvManyKvTiles:BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.QueryTilesPastTheQueriesEndAreLeftOut' &
run_tests 3 'SeqLensGpu.WarpSpecialized*Backward:BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches:BwdGpu.OrderedModeWritesDqOfQueryTilesNoKeyReaches:BwdGpu.ShortSequencesWithAnOddGqaRatio' &
run_tests 4 'BwdGpu.FastModeSplitsGqaGroupsOverCtas:BwdGpu.OrderedModeSplitsGqaGroupsOverCtas:BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.Gqa8To1AndBshd' &
wait
echo "tests $(( $(date +%s) - t0 )) s"; grep -hE "^\[  (PASSED|FAILED) |FAILED \]|Failure|OK \]" $r/tests_*.txt | head -40; save
[ $(left) -gt 50 ] && { FLEXJIT_CACHE_DIR=/tmp/fct_4 timeout $(( $(left) - 5 )) compute-sanitizer --tool memcheck --kernel-name kns=bwd_dkdv ./gpu_test_attention --gtest_filter='BwdGpu.FastModeSplitsGqaGroupsOverCtas' > $r/memcheck.txt 2>&1; echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $r/memcheck.txt | tail -2 | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; save; }
