#!/bin/bash
# zze3: the across-work-tile form only where walks are equal and static (CROSS_TILE = no mask, no
# lengths) against main's templates (tpl_old), forward only: the suite (its masked rows run the
# restructured loop without the cross-tile step) and unmasked shapes of our own (extra.json),
# alternating old / new four times. Then the unmasked warp-specialised forward tests.
cd "$(dirname "$0")"; g=$PWD
export FLEXJIT_AUTOTUNE=off LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; W=/tmp/w3; mkdir -p $O $W
save() { tar czf $O/zze3.tar.gz -C $W .; }
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
for r in 1 2 3 4; do
  for s in suite extra; do
    FLEXJIT_CACHE_DIR=/tmp/fc_old FLEXJIT_TEMPLATE_DIR=$g/tpl_old timeout 80 ./flexjit bench --suite $s.json --no-bwd --json $W/old_${s}_r$r.jsonl > $W/old_${s}_r$r.log 2>&1 || tail -3 $W/old_${s}_r$r.log
    FLEXJIT_CACHE_DIR=/tmp/fc_new timeout 80 ./flexjit bench --suite $s.json --no-bwd --json $W/new_${s}_r$r.jsonl > $W/new_${s}_r$r.log 2>&1 || tail -3 $W/new_${s}_r$r.log
  done
  echo "round $r $(( $(date +%s) - t0 )) s"
done
python3 - $W <<'PY'
import json,sys,collections,statistics
W=sys.argv[1]; rows=collections.defaultdict(lambda: collections.defaultdict(list))
for arm in ("old","new"):
  for s in ("suite","extra"):
    for r in (1,2,3,4):
      try: lines=open(f'{W}/{arm}_{s}_r{r}.jsonl').read().splitlines()
      except Exception: continue
      for l in lines:
        try: o=json.loads(l)
        except Exception: continue
        if 'name' in o: rows[o['name']][arm].append(round(o.get('fwd_tflops') or 0,1))
for n,v in rows.items():
    o,nw=statistics.median(v['old'] or [0]),statistics.median(v['new'] or [0])
    print(f"{n:28s} old {o:6.1f} new {nw:6.1f} ratio {nw/max(o,1e-9):.3f}  old {v['old']} new {v['new']}")
PY
save
left=$(( 480 - ($(date +%s) - t0) ))
FLEXJIT_CACHE_DIR=/tmp/fc_t timeout $left ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedShapes*:FwdGpu.WarpSpecializedOnePerHeadDim:FwdGpu.WarpSpecializedManyTilesPerCta:FwdGpu.WarpSpecializedEmptyAndOneKeyTileWalks:FwdGpu.WarpSpecializedOutputInALayoutOfItsOwn:FwdGpu.WarpSpecializedRowsPastTheQueriesEnd:FwdGpu.WarpSpecializedModsTwoConsumers:FwdGpu.WarpSpecializedFullyMaskedRows:FwdGpu.SuiteMods:FwdGpu.OddLengths' > $W/tests.txt 2>&1; echo "rc=$?" >> $W/tests.txt
grep -E '^\[  (PASSED|FAILED) |FAILED  \]|rc=|Failure' $W/tests.txt | head -30; echo "tests $(( $(date +%s) - t0 )) s"
save
