#!/bin/bash
# zzf2: decode's TMA boxes of every slab (one copy per page, 5-D maps) against main's (one copy per
# page and slab): ilv_steps.py with both libraries, alternating, two rounds, the L2 cold; then the
# decode GPU tests (new and TMA ones first) and memcheck on the new test.
cd "$(dirname "$0")"; g=$PWD
export FLEXJIT_AUTOTUNE=off PYTHONPATH=$g/../../python:$g/../../scripts:$g
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; W=/tmp/w2; mkdir -p $O $W
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
for r in 1 2; do
  for v in old new; do
    lib=$g/libflexjit.so; [ $v = old ] && lib=$g/libflexjit_old.so
    FLEXJIT_CACHE_DIR=/tmp/fjc_$v FLEXJIT_LIBRARY=$lib timeout 140 python3 ilv_steps.py > $W/${v}_r$r.jsonl 2> $W/${v}_r$r.err || tail -3 $W/${v}_r$r.err
  done
  echo "round $r $(( $(date +%s) - t0 )) s"
done
python3 - $W <<'PY'
import json,sys,collections
W=sys.argv[1]; rows=collections.defaultdict(lambda: collections.defaultdict(list))
for v in ('old','new'):
    for r in (1,2):
        try: lines=open(f'{W}/{v}_r{r}.jsonl').read().splitlines()
        except Exception: continue
        for l in lines:
            o=json.loads(l); rows[(o['B'],o['S'],o['page_size'])][v].append(o['flexjit_us'])
for k,d in sorted(rows.items()):
    a=min(d['old'] or [0]); b=min(d['new'] or [1e9])
    print(f"B={k[0]:2d} S={k[1]:5d} page={k[2]:3d} old {d['old']} new {d['new']} old/new {a/b:.3f}{' <-' if abs(a/b-1) > 0.03 else ''}")
PY
tar czf $O/zzf2.tar.gz -C $W .
first='DecodeGpu.TmaBoxesOfPageRowsWithWholeAndPartSlabs:DecodeGpu.TmaPagesOfEverySizeAndContiguous:DecodeGpu.HeadDimsThatAreNoMultipleOf64:DecodeGpu.TmaRatiosQueryCountsModsAndLongSplits:DecodeGpu.TmaHalfPrecisionHeadDimsAndUnequalDv:DecodeGpu.HopperPagedDefaultReadsThroughTmaWherePagesAllow:DecodeGpu.TmaPagesOf64KeepOneSplitForHalfTheSlots:DecodeGpu.HopperContiguousDefaultReadsThroughTma:DecodeGpu.RandomProblems:DecodeGpu.PageSizesWithShuffledPages:DecodeGpu.TmaPageSizeThatIsNoMultipleOfEight:DecodeGpu.BadPageTableIsNeverReadAndIsReported:DecodeGpu.NanInputsGiveNanOutputsOnlyWhereTheyAreRead'
left=$(( 330 - ($(date +%s) - t0) ))
FLEXJIT_CACHE_DIR=/tmp/fjct timeout $left ./gpu_test_attention --gtest_filter="$first" > $W/tests1.txt 2>&1; echo "rc=$?" >> $W/tests1.txt
grep -E '^\[  (PASSED|FAILED) |^\[ +OK|FAILED  \]|rc=|Failure' $W/tests1.txt | head -40; echo "tests1 $(( $(date +%s) - t0 )) s"
tar czf $O/zzf2.tar.gz -C $W .
left=$(( 480 - ($(date +%s) - t0) ))
FLEXJIT_CACHE_DIR=/tmp/fjct timeout $left ./gpu_test_attention --gtest_filter="DecodeGpu.*:-$first" > $W/tests2.txt 2>&1; echo "rc=$?" >> $W/tests2.txt
grep -E '^\[  (PASSED|FAILED) |^\[ +OK|FAILED  \]|rc=|Failure' $W/tests2.txt | head -40; echo "tests2 $(( $(date +%s) - t0 )) s"
tar czf $O/zzf2.tar.gz -C $W .
left=$(( 580 - ($(date +%s) - t0) ))
FLEXJIT_CACHE_DIR=/tmp/fjct timeout $left compute-sanitizer --tool memcheck ./gpu_test_attention --gtest_filter='DecodeGpu.TmaBoxesOfPageRowsWithWholeAndPartSlabs' > $W/memcheck.txt 2>&1; echo "rc=$?" >> $W/memcheck.txt
tail -4 $W/memcheck.txt; echo "memcheck $(( $(date +%s) - t0 )) s"
tar czf $O/zzf2.tar.gz -C $W .
