#!/usr/bin/env bash
# (zzx) 4, prepared and not run (the device was lost): the lazy rescale beside main's forward
# and every peer, one call, after a call that copied .fa4a to /tmp/fa4a: A/B of main's templates
# (16cf7fd) against the build (three rounds, forward; then prefix LM and causal at d256 over 1000
# keys, d256.json: prefix LM's full form fits now and replaces the lean one), then
# peers.py --flash --no-bwd (FA4, FLASH, Triton, cuDNN, FA2), then the six forward tests zzx3 did
# not reach. Folder beside it: flexjit and gta (stripped builds), ab2.sh (../2026-12-04-zzv),
# peers.py and suite.json (../shared/bench), tv_main/templates (git archive 16cf7fd templates).
# Carry .fa4b (scripts/fa4_prepare.sh) and that folder.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/l4}; r=/tmp/l4r/r; mkdir -p $r $out
save() { (cd /tmp/l4r && tar czf $out/l4.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
( cd ../.. && timeout 150 bash .fa4b/join_install.sh ) > $r/install.txt 2>&1 &
inst=$!
bash ab2.sh l4ab suite.json fwd_ms 100 3 "--no-bwd" main:./flexjit:$PWD/tv_main/templates new:./flexjit: 2>&1 | grep -v "^l4ab "
bash ab2.sh l4d256 d256.json fwd_ms 30 2 "--no-bwd" main:./flexjit:$PWD/tv_main/templates new:./flexjit: 2>&1 | grep -v "^l4d256 "
cp /tmp/l4d256r/r/ab.txt $r/ab_d256.txt 2>/dev/null
cp /tmp/l4abr/r/ab.txt $r/ 2>/dev/null; cp /tmp/l4abr/r/*.jsonl $r/ 2>/dev/null
echo "ab $(( $(date +%s) - t0 )) s"
save
wait $inst; echo "install: $(tail -1 $r/install.txt)"
export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages PYTHONUNBUFFERED=1
left=$(( 330 - ($(date +%s) - t0) ))
timeout $left python3 peers.py --flash --no-bwd --suite suite.json > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s $(grep -c '"name"' $r/peers.jsonl) rows"
save
export FLEXJIT_AUTOTUNE=off
left=$(( 440 - ($(date +%s) - t0) ))
(FLEXJIT_CACHE_DIR=/tmp/fct_ra timeout $left ./gta --gtest_filter='FwdGpu.OutOfBoundsBufferReadsAreReported:FwdGpu.MaskColumnValues:FwdGpu.MaskColumnValuesOutOfBounds:FwdGpu.KeysBroadcastOverHeadsTakeTheSynchronousTwin' > $r/tests_ra.txt 2>&1; echo "tests_ra rc=$?" >> $r/rc.txt) &
(FLEXJIT_CACHE_DIR=/tmp/fct_rb timeout $left ./gta --gtest_filter='FwdGpu.WarpSpecializedRowsPastTheQueriesEnd:FwdGpu.WarpSpecializedTileBoundsWalk' > $r/tests_rb.txt 2>&1; echo "tests_rb rc=$?" >> $r/rc.txt) &
wait
cat $r/rc.txt; grep -hE "^\[  (PASSED|FAILED) |^\[       OK|FAILED  \]|Failure" $r/tests_r*.txt
python3 - $r <<'PY'
import json, sys, os, glob, statistics as st
r = sys.argv[1]
fl = {}
for f in sorted(glob.glob(f"{r}/new_*.jsonl")):
    if os.path.exists(f):
        for l in open(f):
            if l.startswith("{") and '"name"' in l:
                o = json.loads(l); fl.setdefault(o["name"], []).append(o.get("fwd_tflops"))
peers = {}
for l in open(f"{r}/peers.jsonl"):
    if l.startswith("{") and '"name"' in l:
        o = json.loads(l); peers.setdefault(o["name"], {})[o["system"]] = o.get("fwd_tflops")
for n, v in fl.items():
    p = peers.get(n, {}); best = max(((x, s) for s, x in p.items() if x), default=(None, None))
    med = st.median([x for x in v if x])
    print(f"{n:28s} flexjit {' '.join(f'{x:.0f}' for x in v if x)} med {med:.0f} | " + " ".join(f"{s} {x:.0f}" for s, x in p.items() if x) + (f" | best {best[1]} {med / best[0]:.3f}" if best[0] else ""))
PY
save
