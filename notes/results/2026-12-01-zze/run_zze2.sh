#!/bin/bash
# zze2: three arms, forward only, alternating three times over the suite: main's templates
# (tpl_old); the merged window (tpl_merged: a work tile's last P V and the next tile's first S in
# one window, zze1's form); the split form (the build's templates: the last P V issued, then the
# next tile read and its first S issued in the next window, this tile's epilogue run under that S).
# Then the forward GPU tests on the split form.
cd "$(dirname "$0")"; g=$PWD
export FLEXJIT_AUTOTUNE=off LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; W=/tmp/w2; mkdir -p $O $W
save() { tar czf $O/zze2.tar.gz -C $W .; }
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
for r in 1 2 3; do
  FLEXJIT_CACHE_DIR=/tmp/fc_old FLEXJIT_TEMPLATE_DIR=$g/tpl_old timeout 80 ./flexjit bench --suite suite.json --no-bwd --json $W/old_r$r.jsonl > $W/old_r$r.log 2>&1 || tail -3 $W/old_r$r.log
  FLEXJIT_CACHE_DIR=/tmp/fc_mrg FLEXJIT_TEMPLATE_DIR=$g/tpl_merged timeout 80 ./flexjit bench --suite suite.json --no-bwd --json $W/mrg_r$r.jsonl > $W/mrg_r$r.log 2>&1 || tail -3 $W/mrg_r$r.log
  FLEXJIT_CACHE_DIR=/tmp/fc_new timeout 80 ./flexjit bench --suite suite.json --no-bwd --json $W/new_r$r.jsonl > $W/new_r$r.log 2>&1 || tail -3 $W/new_r$r.log
  echo "round $r $(( $(date +%s) - t0 )) s"
done
python3 - $W <<'PY'
import json,sys,collections
W=sys.argv[1]; rows=collections.defaultdict(dict)
for arm in ("old","mrg","new"):
  for r in (1,2,3):
    try: lines=open(f'{W}/{arm}_r{r}.jsonl').read().splitlines()
    except Exception: continue
    for l in lines:
        try: o=json.loads(l)
        except Exception: continue
        if 'name' in o: rows[o['name']][f'{arm}_r{r}']=o.get('fwd_tflops') or 0
med=lambda v,a: sorted(v.get(f'{a}_r{r}',0) for r in (1,2,3))[1]
for n,v in rows.items():
    o,m,nw=med(v,'old'),med(v,'mrg'),med(v,'new')
    print(f"{n:28s} old {o:6.1f}  merged {m:6.1f} ({m/max(o,1e-9):.3f})  split {nw:6.1f} ({nw/max(o,1e-9):.3f})  new rounds {[v.get(f'new_r{r}') for r in (1,2,3)]}")
PY
save
left=$(( 570 - ($(date +%s) - t0) ))
FLEXJIT_CACHE_DIR=/tmp/fc_t timeout $left ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecialized*:SeqLensGpu.WarpSpecializedForward*:FwdGpu.SuiteMods:FwdGpu.OddLengths:FwdGpu.DifferentQueryAndKeyLengths:FwdGpu.GqaCausal:FwdGpu.FullyMasked*' > $W/tests.txt 2>&1; echo "rc=$?" >> $W/tests.txt
grep -E '^\[  (PASSED|FAILED) |FAILED  \]|rc=|Failure' $W/tests.txt | head -30; echo "tests $(( $(date +%s) - t0 )) s"
save
