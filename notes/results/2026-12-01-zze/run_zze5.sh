#!/bin/bash
# zze5: the split rule by TMA box rows (one_split_tile_limit: boxes of 32 rows keep up to 8 tiles in
# one split) against main's (pages of 64+ only): splits_pages.py with both libraries, alternating,
# two rounds, the L2 cold; then the decode GPU tests of the TMA and paged paths.
cd "$(dirname "$0")"; g=$PWD
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fjc5 PYTHONPATH=$g/../../python:$g/../../scripts:$g
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; W=/tmp/w5; mkdir -p $O $W
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
for r in 1 2; do
  for v in old new; do
    lib=$g/libflexjit.so; [ $v = old ] && lib=$g/libflexjit_old.so
    FLEXJIT_LIBRARY=$lib timeout 100 python3 splits_pages.py > $W/${v}_r$r.jsonl 2> $W/${v}_r$r.err || tail -3 $W/${v}_r$r.err
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
tar czf $O/zze5.tar.gz -C $W .
left=$(( 250 - ($(date +%s) - t0) ))
FLEXJIT_CACHE_DIR=/tmp/fjc5t timeout $left ./gpu_test_attention --gtest_filter='DecodeGpu.TmaPagesOf64KeepOneSplitForHalfTheSlots:DecodeGpu.TmaPagesOfEverySizeAndContiguous:DecodeGpu.PageSizesWithShuffledPages:DecodeGpu.HopperPagedDefaultReadsThroughTmaWherePagesAllow:DecodeGpu.TmaRatiosQueryCountsModsAndLongSplits:DecodeGpu.RandomProblems:DecodeGpu.LongSequencesSplitAndRerunBitwiseIdentical:DecodeGpu.ChunkedPrefillOverPages' > $W/tests.txt 2>&1; echo "rc=$?" >> $W/tests.txt
grep -E '^\[  (PASSED|FAILED) |^\[ +OK|FAILED  \]|rc=|Failure' $W/tests.txt | head -30; echo "tests $(( $(date +%s) - t0 )) s"
tar czf $O/zze5.tar.gz -C $W .
