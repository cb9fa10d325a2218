#!/bin/bash
# zzd1: the forward's dead 64-key halves (QUADRANT_SKIP) against main's templates (tpl_old: HEAD's
# templates, the include of flexjit_tile_bounds.cuh under the new context key), forward only,
# alternating old / new twice on the masked suite rows and two controls (noop, documents); then
# the forward GPU tests and memcheck / racecheck / synccheck on one forward per head dim.
cd "$(dirname "$0")"; g=$PWD
export FLEXJIT_AUTOTUNE=off LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; W=/tmp/w1; mkdir -p $O $W
save() { tar czf $O/zzd1.tar.gz -C $W .; }
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
X=sliding_window_d128,long_sliding_window_d128,causal_d128,causal_d64,gqa_causal_d128,long_causal_d128,prefix_lm_d128,alibi_causal_d128,softcap_causal_d128,noop_d128,document_causal_d128
for r in 1 2 3; do
  FLEXJIT_CACHE_DIR=/tmp/fc_old FLEXJIT_TEMPLATE_DIR=$g/tpl_old timeout 100 ./flexjit bench --suite suite.json --only $X --no-bwd --json $W/old_r$r.jsonl > $W/old_r$r.log 2>&1 || tail -3 $W/old_r$r.log
  FLEXJIT_CACHE_DIR=/tmp/fc_new timeout 100 ./flexjit bench --suite suite.json --only $X --no-bwd --json $W/new_r$r.jsonl > $W/new_r$r.log 2>&1 || tail -3 $W/new_r$r.log
  echo "round $r $(( $(date +%s) - t0 )) s"
done
python3 - $W <<'PY'
import json,sys,collections
W=sys.argv[1]; rows=collections.defaultdict(dict)
for tag in ('old_r1","new_r1","old_r2","new_r2","old_r3","new_r3):
    for l in open(f'{W}/{tag}.jsonl'):
        try: o=json.loads(l)
        except Exception: continue
        if 'name' in o: rows[o['name']][tag]=(o.get('fwd_tflops'), o.get('fwd_config'))
for n,v in rows.items():
    o=sorted(v.get(t,(0,))[0] or 0 for t in ('old_r1','old_r2','old_r3')); nw=sorted(v.get(t,(0,))[0] or 0 for t in ('new_r1','new_r2','new_r3'))
    print(f"{n:28s} old {o}  new {nw}  median ratio {nw[1]/max(o[1],1e-9):.3f}  {v.get('new_r1',(0,''))[1]}")
PY
save
left=$(( 540 - ($(date +%s) - t0) ))
FLEXJIT_CACHE_DIR=/tmp/fc_t timeout $left ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecialized*:FwdGpu.SuiteMods:FwdGpu.OddLengths:FwdGpu.DifferentQueryAndKeyLengths:FwdGpu.GqaCausal:FwdGpu.FullyMasked*:FwdGpu.HopperWgmmaPath:SeqLensGpu.WarpSpecializedForward:FwdGpu.ScoreModsAffineInKeys' > $W/tests.txt 2>&1; echo "rc=$?" >> $W/tests.txt
grep -E '^\[  (PASSED|FAILED) |FAILED  \]|rc=|Failure' $W/tests.txt | head -30; echo "tests $(( $(date +%s) - t0 )) s"
save
