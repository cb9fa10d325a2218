#!/usr/bin/env bash
# (zzzx, for the next session) Call 1 of three on one warm machine, about 560 s: the fa4 arm's GPU
# tests and memcheck, the walk diagnostic, and the four-arm A/B of the fast backward. Prepare with
# prep_next.sh, then run `bash .gpu/zzzx/run_next.sh` carrying `.gpu/zzzx`; then, at once,
# run_next_det.sh (racecheck / synccheck of fa4, the deterministic A/B) and, for an arm other than
# fa4 that wins, run_next_arm.sh.
# 1. GPU tests of the fa4 arm (templates tfa4: the dv arm's change and all of dK after dQ, so a
#    superset of the dv arm's code paths) and memcheck of one fast backward per head dim (d128 is
#    the one with the exchange), five processes at once as (zzzw)'s calls ran them.
# 2. diag_walk.json with main: the per-tile cost of noop (2048 tiles of 64 x 128 per head), of the
#    same walk through a masked kernel with every tile full (`kv_idx >= 0`), of causal's 1056 tiles
#    with none partial (`q_idx / 128 >= kv_idx / 128`) and of causal (64 of them partial); (zzzp)'s
#    ncu counters put our causal tile at 1.12x our noop tile while FA4's two are level.
# 3. ab2.sh over ab_x.json: main / dv / fa4 / late, four rotating rounds (rounds start until 200 s;
#    after the first, a round of the four arms takes about 35 s).
set -u
cd "$(dirname "$0")"
source ./device_lib.sh
source ./bwd_tests.sh
out=${OUT:-/tmp/zzzx}; r=/tmp/zzzxr/t; mkdir -p $out $r
device_start $r
device_unpack .
bwd_arm_tests $PWD/tfa4/templates
wait
device_failures
(cd /tmp/zzzxr && tar czf $out/x_tests.tar.gz t)
echo "tests $(( $(date +%s) - device_t0 )) s"
FLEXJIT_CACHE_DIR=/tmp/fc_diag ./flexjit bench --suite diag_walk.json > /dev/null 2>&1  # compile
for n in 1 2 3; do
  FLEXJIT_CACHE_DIR=/tmp/fc_diag ./flexjit bench --suite diag_walk.json --json $r/diag_$n.jsonl > $r/diag_$n.log 2>&1
done
python3 - $r <<'PY'
import json, glob, sys, statistics as st
t = {}
for f in glob.glob(sys.argv[1] + "/diag_*.jsonl"):
    for l in open(f):
        if l.startswith("{"):
            o = json.loads(l); t.setdefault(o["name"], []).append((o["fwd_ms"], o["bwd_ms"]))
tiles = {"noop": 2048, "alltrue": 2048, "blockcausal": 1056, "causal": 1056}
for D in (128, 64):
    base = None
    for k in ("noop", "alltrue", "blockcausal", "causal"):
        v = t.get(f"{k}_d{D}")
        if not v: print(f"{k}_d{D} missing"); continue
        f, b = st.median(x[0] for x in v), st.median(x[1] for x in v)
        pf, pb = f / tiles[k], b / tiles[k]
        base = base or (pf, pb)
        print(f"{k}_d{D:<4d} fwd {f:.4f} ms bwd {b:.4f} ms; per tile / noop's: fwd {pf / base[0]:.3f} bwd {pb / base[1]:.3f}")
PY
(cd /tmp/zzzxr && tar czf $out/x_tests.tar.gz t)
OUT=$out bash ab2.sh xab ab_x.json bwd_ms ${BUDGET:-200} ${ROUNDS:-4} "" main:./flexjit:tmain/templates \
  dv:./flexjit:tdv/templates fa4:./flexjit:tfa4/templates late:./flexjit:tlate/templates 2>&1 | grep -v "^xab "
echo "all $(( $(date +%s) - device_t0 )) s"
