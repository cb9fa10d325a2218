#!/bin/bash
# zze1: the forward's cross-work-tile overlap (CROSS_TILE: a work tile's last P V shares its window
# with the next tile's first S) against main's templates (tpl_old), forward only, alternating
# old / new three times over the suite; then the forward GPU tests on the new templates.
cd "$(dirname "$0")"; g=$PWD
export FLEXJIT_AUTOTUNE=off LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; W=/tmp/w1; mkdir -p $O $W
save() { tar czf $O/zze1.tar.gz -C $W .; }
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
for r in 1 2 3; do
  FLEXJIT_CACHE_DIR=/tmp/fc_old FLEXJIT_TEMPLATE_DIR=$g/tpl_old timeout 110 ./flexjit bench --suite suite.json --no-bwd --json $W/old_r$r.jsonl > $W/old_r$r.log 2>&1 || tail -3 $W/old_r$r.log
  FLEXJIT_CACHE_DIR=/tmp/fc_new timeout 110 ./flexjit bench --suite suite.json --no-bwd --json $W/new_r$r.jsonl > $W/new_r$r.log 2>&1 || tail -3 $W/new_r$r.log
  echo "round $r $(( $(date +%s) - t0 )) s"
done
python3 - $W <<'PY'
import json,sys,collections
W=sys.argv[1]; rows=collections.defaultdict(dict)
for tag in ("old_r1","new_r1","old_r2","new_r2","old_r3","new_r3"):
    try: lines=open(f'{W}/{tag}.jsonl').read().splitlines()
    except Exception: continue
    for l in lines:
        try: o=json.loads(l)
        except Exception: continue
        if 'name' in o: rows[o['name']][tag]=(o.get('fwd_tflops'), o.get('fwd_config'))
for n,v in rows.items():
    o=sorted(v.get(t,(0,))[0] or 0 for t in ('old_r1','old_r2','old_r3')); nw=sorted(v.get(t,(0,))[0] or 0 for t in ('new_r1','new_r2','new_r3'))
    print(f"{n:28s} old {o}  new {nw}  median ratio {nw[1]/max(o[1],1e-9):.3f}  {v.get('new_r1',(0,''))[1]}")
PY
save
left=$(( 570 - ($(date +%s) - t0) ))
FLEXJIT_CACHE_DIR=/tmp/fc_t timeout $left ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecialized*:FwdGpu.SuiteMods:FwdGpu.OddLengths:FwdGpu.DifferentQueryAndKeyLengths:FwdGpu.GqaCausal:FwdGpu.FullyMasked*:FwdGpu.HopperWgmmaPath:SeqLensGpu.WarpSpecializedForward*:FwdGpu.ScoreModsAffineInKeys' > $W/tests.txt 2>&1; echo "rc=$?" >> $W/tests.txt
grep -E '^\[  (PASSED|FAILED) |FAILED  \]|rc=|Failure' $W/tests.txt | head -30; echo "tests $(( $(date +%s) - t0 )) s"
save
