#!/bin/bash
# (zzza) prepared, not run. Call 3 of 3, after a call that copied .fa4a to /tmp/fa4a
# (`mkdir -p /tmp/fa4a && cp .fa4a/* /tmp/fa4a/`, carrying .fa4a). Carry .fa4b and .gpu/zzza.
# 1. A/B of the fast backward over the issue's suite, rounds alternating (ab2.sh; the metric is
#    bwd_ms): main (main's embedded templates) / F / M / FM (prepare.sh says what each is).
# 2. peers.py --flash over the same suite, forward and backward (FA4, FLASH, Triton, cuDNN, FA2):
#    the backward beside the peers that (zzz) owed, main's and the arms' medians beside them.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzab}; r=/tmp/zzzabr/r; mkdir -p $r $out
save() { (cd /tmp/zzzabr && tar czf $out/zzzab.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
( cd ../.. && timeout 150 bash .fa4b/join_install.sh ) > $r/install.txt 2>&1 &
inst=$!
bash ab2.sh zb suite.json bwd_ms 230 3 "" main:./flexjit: F:./flexjit:$PWD/tv_F/templates \
  M:./flexjit:$PWD/tv_M/templates FM:./flexjit:$PWD/tv_FM/templates 2>&1 | grep -v "^zb "
cp /tmp/zbr/r/ab.txt $r/ab.txt 2>/dev/null; cp /tmp/zbr/r/*.jsonl $r/ 2>/dev/null
echo "ab $(( $(date +%s) - t0 )) s"
save
wait $inst; echo "install: $(tail -1 $r/install.txt)"
export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages PYTHONUNBUFFERED=1
left=$(( 560 - ($(date +%s) - t0) ))
timeout $left python3 peers.py --flash --suite suite.json > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s $(grep -c '"name"' $r/peers.jsonl) rows"
save
# Backward TF/s: each arm's median over the rounds beside every peer of the same call.
python3 - $r <<'PY'
import json, sys, glob, statistics as st
r = sys.argv[1]
arms = {}
for f in sorted(glob.glob(f"{r}/*_[0-9].jsonl")):
    arm = f.rsplit("/", 1)[1].rsplit("_", 1)[0]
    for l in open(f):
        if l.startswith("{") and '"name"' in l:
            o = json.loads(l)
            if o.get("bwd_tflops"): arms.setdefault(arm, {}).setdefault(o["name"], []).append(o["bwd_tflops"])
peers = {}
for l in open(f"{r}/peers.jsonl"):
    if l.startswith("{") and '"name"' in l:
        o = json.loads(l)
        if o.get("bwd_tflops"): peers.setdefault(o["name"], {})[o["system"]] = o["bwd_tflops"]
for n in sorted(arms.get("main", {})):
    p = peers.get(n, {}); best = max(((x, s) for s, x in p.items()), default=(None, None))
    line = f"{n:28s} " + " ".join(f"{a} {st.median(v[n]):.0f}" for a, v in sorted(arms.items()) if n in v)
    line += " | " + " ".join(f"{s} {x:.0f}" for s, x in sorted(p.items()))
    if best[0]: line += " | /best(" + best[1] + ") " + " ".join(f"{a} {st.median(v[n]) / best[0]:.3f}" for a, v in sorted(arms.items()) if n in v)
    print(line)
PY
echo "done $(( $(date +%s) - t0 )) s"; save
