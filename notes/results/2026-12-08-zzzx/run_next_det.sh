#!/usr/bin/env bash
# (zzzx, for the next session) Call 2, on the same warm machine right after run_next.sh (about
# 500 s): racecheck and synccheck of the fa4 arm on one fast backward per head dim (reusing the
# kernels run_next.sh's `dims` group compiled); the walk diagnostic (diag_walk.json with main: the
# per-tile cost of noop (2048 tiles of 64 x 128 per head), of the same walk through a masked kernel
# with every tile full (`kv_idx >= 0`), of causal's 1056 tiles with none partial
# (`q_idx / 128 >= kv_idx / 128`) and of causal (64 of them partial); (zzzp)'s ncu counters put
# our causal tile at 1.12x our noop tile while FA4's two are level); then dv, fa4 and row against
# main in the deterministic mode (the ordered dK/dV kernel also takes the exchange at d128 and the
# statistics' reads; late does not apply there).
set -u
cd "$(dirname "$0")"
source ./device_lib.sh
source ./device_bwd_tests.sh
out=${OUT:-/tmp/zzzx}; r=/tmp/zzzxr/d; mkdir -p $out $r
device_start $r
device_unpack .
device_bwd_race_sync $PWD/tfa4/templates 240
wait
(cd /tmp/zzzxr && tar czf $out/x_det.tar.gz d)
echo "sanitizers $(( $(date +%s) - device_t0 )) s"
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
OUT=$out bash ab2.sh xdet ab_x_det.json bwd_ms ${BUDGET:-120} ${ROUNDS:-3} "--bwd-mode deterministic" \
  main:./flexjit:tmain/templates dv:./flexjit:tdv/templates fa4:./flexjit:tfa4/templates \
  row:./flexjit:trow/templates 2>&1 | grep -v "^xdet "
(cd /tmp/zzzxr && tar czf $out/x_det.tar.gz d)
echo "all $(( $(date +%s) - device_t0 )) s"
