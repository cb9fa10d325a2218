#!/bin/bash
# zzd10: the one-split rule for fast CTAs (pages of 64+ through TMA) against main's rule:
# splits_matrix.py (48 steps, the L2 cold) with main's library and the new one, alternating, two
# rounds; then the decode GPU tests of the TMA paths and the new test.
cd "$(dirname "$0")"; g=$PWD
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fjc10 PYTHONPATH=$g/../../python:$g/../../scripts
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; W=/tmp/w10; mkdir -p $O $W
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
for r in 1 2; do
  for v in old new; do
    lib=$g/libflexjit.so; [ $v = old ] && lib=$g/libflexjit_old.so
    FLEXJIT_LIBRARY=$lib timeout 100 python3 splits_matrix.py > $W/${v}_r$r.jsonl 2> $W/${v}_r$r.err || tail -3 $W/${v}_r$r.err
  done
  echo "round $r $(( $(date +%s) - t0 )) s"
done
python3 - $W <<'PY'
import json,sys,collections
W=sys.argv[1]; rows=collections.defaultdict(lambda: collections.defaultdict(list))
for v in ('old','new'):
    for r in (1,2):
        for l in open(f'{W}/{v}_r{r}.jsonl'):
            o=json.loads(l); rows[(o['B'],o['S'],o['page_size'])][v].append(o['flexjit_us'])
for k,d in sorted(rows.items()):
    a=min(d['old']); b=min(d['new'])
    flag = ' <-' if abs(a/b-1) > 0.03 else ''
    print(f"B={k[0]:2d} S={k[1]:5d} page={k[2]:2d} old {d['old']} new {d['new']} old/new {a/b:.3f}{flag}")
PY
tar czf $O/zzd10.tar.gz -C $W .
left=$(( 400 - ($(date +%s) - t0) ))
timeout $left ./gpu_test_attention --gtest_filter='DecodeGpu.TmaPagesOf64KeepOneSplitForHalfTheSlots:DecodeGpu.TmaPagesOfEverySizeAndContiguous:DecodeGpu.HopperPagedDefaultReadsThroughTmaWherePagesAllow:DecodeGpu.PageSizesWithShuffledPages:DecodeGpu.TmaRatiosQueryCountsModsAndLongSplits' > $W/tests.txt 2>&1; echo "rc=$?" >> $W/tests.txt
grep -E '^\[  (PASSED|FAILED) |^\[       OK|FAILED  \]|rc=|Failure' $W/tests.txt | head -20; echo "tests $(( $(date +%s) - t0 )) s"
tar czf $O/zzd10.tar.gz -C $W .
