#!/usr/bin/env bash
# (zs) call 8, the landing A/B in one device session: main before this session (flexjit_main,
# 277be90) against this session's build (flexjit), and FlexAttention (peers.py), on the ragged
# batches (ragged.json, forward) and the d64 masked problems (d64_masked.json: defaults, and the
# 192-row tiles: the old build walks by the bounds without overlap, the new one overlaps, walking
# or over 192-row tables).
set -u
cd "$(dirname "$0")"
L=/tmp/zs8l; mkdir -p $L ${OUT:-/tmp/zs8}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for round in 1 2; do
  FLEXJIT_CACHE_DIR=/tmp/fo timeout 40 ./flexjit_main bench --no-bwd --suite ragged.json --json $L/old_ragged_$round.jsonl > /dev/null 2>&1
  FLEXJIT_CACHE_DIR=/tmp/fn timeout 40 ./flexjit bench --no-bwd --suite ragged.json --json $L/new_ragged_$round.jsonl > /dev/null 2>&1
  FLEXJIT_CACHE_DIR=/tmp/fo timeout 40 ./flexjit_main bench --no-bwd --suite d64_masked.json --json $L/old_d64_$round.jsonl > /dev/null 2>&1
  FLEXJIT_CACHE_DIR=/tmp/fn timeout 40 ./flexjit bench --no-bwd --suite d64_masked.json --json $L/new_d64_$round.jsonl > /dev/null 2>&1
  FLEXJIT_CACHE_DIR=/tmp/fo timeout 40 ./flexjit_main bench --no-bwd --suite d64_masked.json --only causal_d64,sliding_window_d64 --config m192n128w12s2ws --json $L/old_m192walk_$round.jsonl > /dev/null 2>&1
  FLEXJIT_CACHE_DIR=/tmp/fn timeout 40 ./flexjit bench --no-bwd --suite d64_masked.json --only causal_d64,sliding_window_d64 --config m192n128w12s2ws --json $L/new_m192walk_$round.jsonl > /dev/null 2>&1
  FLEXJIT_CACHE_DIR=/tmp/fn timeout 40 ./flexjit bench --no-bwd --suite d64_masked.json --only causal_d64,sliding_window_d64 --config m192n128w12s2ws --mask-q-block 192 --json $L/new_m192t192_$round.jsonl > /dev/null 2>&1
done
echo "flexjit $(( $(date +%s) - t0 )) s"
left=$(( 225 - ($(date +%s) - t0) ))
[ $left -gt 20 ] && PYTHONUNBUFFERED=1 timeout $left python3 peers.py --no-bwd --no-sdpa --suite ragged.json > $L/flex_ragged.jsonl 2>/dev/null
left=$(( 225 - ($(date +%s) - t0) ))
[ $left -gt 20 ] && PYTHONUNBUFFERED=1 timeout $left python3 peers.py --no-bwd --no-sdpa --suite d64_masked.json > $L/flex_d64.jsonl 2>/dev/null
python3 - "$L" <<'PY'
import json,sys,glob,collections,statistics
t=collections.defaultdict(list)
for f in glob.glob(sys.argv[1]+'/*.jsonl'):
    kind=f.split('/')[-1].rsplit('_',1)[0] if not f.split('/')[-1].startswith('flex_') else 'flex'
    for l in open(f):
        if not l.startswith('{'): continue
        d=json.loads(l)
        if 'fwd_ms' in d and d.get('system') in ('flexjit','flex'):
            t[(d['name'],kind)].append((d['fwd_ms'], d['fwd_tflops'], d.get('fwd_config','')))
for k in sorted(t): print(f'{k[0]:26s} {k[1]:16s} ms', ' '.join(f'{x[0]:7.3f}' for x in t[k]), '  TF/s %.1f' % statistics.median([x[1] for x in t[k]]), t[k][0][2])
PY
(cd /tmp && tar czf ${OUT:-/tmp/zs8}/zs8_logs.tar.gz zs8l)
echo "total $(( $(date +%s) - t0 )) s"
