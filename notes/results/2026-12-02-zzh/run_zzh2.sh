#!/bin/bash
# zzh2: the forward's dead warpgroup (rows all past the queries' end): main's templates (tpl_old)
# against the build's, forward only, three alternating rounds; then the forward GPU tests.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzh2}; r=/tmp/zzh2r/r; mkdir -p $r $out
save() { (cd /tmp/zzh2r && tar czf $out/zzh2.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
for round in 1 2 3; do
  for arm in old new; do
    T=""; [ $arm = old ] && T=$PWD/tpl_old
    for s in short odd; do
      FLEXJIT_TEMPLATE_DIR=$T FLEXJIT_CACHE_DIR=/tmp/fc_$arm timeout 200 ./flexjit bench --suite $s.json --no-bwd --json $r/${arm}_${s}_$round.jsonl > $r/${arm}_${s}_$round.log 2>&1 || tail -3 $r/${arm}_${s}_$round.log
    done
    echo "$arm $round $(( $(date +%s) - t0 )) s"
  done
  save
done
python3 - $r <<'PY'
import json, sys, glob, statistics
r = sys.argv[1]
def load(arm):
    d = {}
    for f in glob.glob(f"{r}/{arm}_*_*.jsonl"):
        for line in open(f):
            if '"name"' in line:
                o = json.loads(line); d.setdefault(o["name"], []).append(o["fwd_tflops"])
    return d
o, n = load("old"), load("new")
for k in o:
    a, b = statistics.median(o[k]), statistics.median(n.get(k, [0]))
    print(f"{k:34s} old {a:6.1f} new {b:6.1f} x{b / a:.3f}  ({' '.join(f'{x:.0f}' for x in o[k])} / {' '.join(f'{x:.0f}' for x in n.get(k, []))})")
PY
tests='FwdGpu.WarpSpecializedWarpgroupPastTheQueriesEnd:FwdGpu.WarpSpecializedRowsPastTheQueriesEnd:FwdGpu.OddLengths:FwdGpu.WarpSpecialized*:FwdGpu.SuiteMods:SeqLensGpu.WarpSpecializedForward:FwdGpu.DifferentQueryAndKeyLengths:FwdGpu.GqaCausal'
FLEXJIT_CACHE_DIR=/tmp/fct timeout $(( 560 - ($(date +%s) - t0) )) ./gpu_test_attention --gtest_filter="$tests" > $r/tests.txt 2>&1; echo "rc=$?" >> $r/tests.txt
grep -E '^\[  (PASSED|FAILED) |FAILED  \]|rc=|Failure' $r/tests.txt | tail -20; echo "tests $(( $(date +%s) - t0 )) s"
save
