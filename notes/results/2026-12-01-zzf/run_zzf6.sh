#!/bin/bash
# zzf6: the landing build (whole-slab copies wherever a tensor is as wide as its tile, the warp's row offsets as
# immediates, boxes of 32 rows one split up to 16 tiles) against main: zzf4_steps.py with both
# libraries, alternating, three rounds, the L2 cold, then cuDNN beside the new library; then the
# decode GPU tests the change touches.
cd "$(dirname "$0")"; g=$PWD
export FLEXJIT_AUTOTUNE=off PYTHONPATH=$g/../../python:$g/../../scripts:$g
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; W=/tmp/w6; mkdir -p $O $W
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
for r in 1 2 3; do
  for v in old new; do
    lib=$g/libflexjit.so; [ $v = old ] && lib=$g/libflexjit_old.so
    FLEXJIT_CACHE_DIR=/tmp/fjc_$v FLEXJIT_LIBRARY=$lib timeout 140 python3 zzf4_steps.py > $W/${v}_r$r.jsonl 2> $W/${v}_r$r.err || tail -3 $W/${v}_r$r.err
  done
  echo "round $r $(( $(date +%s) - t0 )) s"
done
FLEXJIT_CACHE_DIR=/tmp/fjc_new FLEXJIT_LIBRARY=$g/libflexjit.so timeout 200 python3 zzf4_steps.py --sdpa > $W/sdpa.jsonl 2> $W/sdpa.err || tail -3 $W/sdpa.err
echo "sdpa $(( $(date +%s) - t0 )) s"
python3 - $W <<'PY'
import json,sys,collections
W=sys.argv[1]; rows=collections.defaultdict(lambda: collections.defaultdict(list))
for v in ('old','new'):
    for r in (1,2,3):
        try: lines=open(f'{W}/{v}_r{r}.jsonl').read().splitlines()
        except Exception: continue
        for l in lines:
            o=json.loads(l); rows[(o['B'],o['S'],o['page_size'])][v].append(o['flexjit_us'])
cud={}
try:
    for l in open(f'{W}/sdpa.jsonl').read().splitlines():
        o=json.loads(l); cud[(o['B'],o['S'],o['page_size'])]=(o['flexjit_us'],o.get('cudnn_us'))
except Exception: pass
for k,d in sorted(rows.items()):
    a=min(d['old'] or [0]); b=min(d['new'] or [1e9]); c=cud.get(k,(None,None))
    print(f"B={k[0]:2d} S={k[1]:5d} page={k[2]:3d} old {d['old']} new {d['new']} old/new {a/b:.3f}{' <-' if abs(a/b-1) > 0.02 else ''} | cudnn {c[1]} new/cudnn-time {b/c[1] if c[1] else 0:.3f}")
PY
tar czf $O/zzf6.tar.gz -C $W .
tests='DecodeGpu.*'
left=$(( 570 - ($(date +%s) - t0) ))
FLEXJIT_CACHE_DIR=/tmp/fjct timeout $left ./gpu_test_attention --gtest_filter="$tests" > $W/tests.txt 2>&1; echo "rc=$?" >> $W/tests.txt
grep -E '^\[  (PASSED|FAILED) |^\[ +OK|FAILED  \]|rc=|Failure' $W/tests.txt | tail -40; echo "tests $(( $(date +%s) - t0 )) s"
tar czf $O/zzf6.tar.gz -C $W .
