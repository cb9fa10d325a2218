#!/usr/bin/env bash
# (zzy) prepared, not run (no device this session). Call 2 of 3, after a call that copied .fa4a to
# /tmp/fa4a (`mkdir -p /tmp/fa4a && cp .fa4a/* /tmp/fa4a/`, carrying .fa4a). Carry .fa4b and
# .gpu/zzy. Folder: flexjit (stripped main build), gta (stripped build of branch
# lazy-every-warpgroup-count), ab2.sh (../2026-12-04-zzv), peers.py and suite.json
# (../shared/bench), d256.json and wide_and_short.json (../2026-12-04-zzx), tv_pre/templates
# (git archive 16cf7fd templates: before the lazy rescale), tvW/templates (the branch's templates),
# tvS/templates (main's with ../2026-12-04-zzx/arm_S_lazy_synchronous_forward.patch).
# 1. A/B, forward, three rounds: pre (eager) / main (lazy on two warpgroups) / W (the branch: lazy
#    on one and on unmasked three too) over the issue's suite, then prefix LM and causal at d256
#    over 1000 keys (d256.json: prefix LM's full form replaced the lean one there in (zzx)).
# 2. peers.py --flash --no-bwd (FA4, FLASH, Triton, cuDNN, FA2) in the same call.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzya}; r=/tmp/zzyar/r; mkdir -p $r $out
save() { (cd /tmp/zzyar && tar czf $out/zzya.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
( cd ../.. && timeout 150 bash .fa4b/join_install.sh ) > $r/install.txt 2>&1 &
inst=$!
bash ab2.sh ya suite.json fwd_ms 200 3 "--no-bwd" pre:./flexjit:$PWD/tv_pre/templates main:./flexjit: W:./flexjit:$PWD/tvW/templates 2>&1 | grep -v "^ya "
bash ab2.sh yd d256.json fwd_ms 30 2 "--no-bwd" pre:./flexjit:$PWD/tv_pre/templates main:./flexjit: 2>&1 | grep -v "^yd "
cp /tmp/yar/r/ab.txt $r/ab.txt 2>/dev/null; cp /tmp/yar/r/*.jsonl $r/ 2>/dev/null; cp /tmp/ydr/r/ab.txt $r/ab_d256.txt 2>/dev/null
echo "ab $(( $(date +%s) - t0 )) s"
save
wait $inst; echo "install: $(tail -1 $r/install.txt)"
export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages PYTHONUNBUFFERED=1
left=$(( 540 - ($(date +%s) - t0) ))
timeout $left python3 peers.py --flash --no-bwd --suite suite.json > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s $(grep -c '"name"' $r/peers.jsonl) rows"
save
# flexjit's median over the rounds per arm beside the best peer of the same call.
python3 - $r <<'PY'
import json, sys, glob, statistics as st
r = sys.argv[1]
arms = {}
for f in sorted(glob.glob(f"{r}/*_[0-9].jsonl")):
    arm = f.rsplit("/", 1)[1].rsplit("_", 1)[0]
    for l in open(f):
        if l.startswith("{") and '"name"' in l:
            o = json.loads(l)
            if o.get("fwd_tflops"): arms.setdefault(arm, {}).setdefault(o["name"], []).append(o["fwd_tflops"])
peers = {}
for l in open(f"{r}/peers.jsonl"):
    if l.startswith("{") and '"name"' in l:
        o = json.loads(l)
        if o.get("fwd_tflops"): peers.setdefault(o["name"], {})[o["system"]] = o["fwd_tflops"]
for n in sorted(arms.get("main", {})):
    p = peers.get(n, {}); best = max(((x, s) for s, x in p.items()), default=(None, None))
    line = f"{n:28s} " + " ".join(f"{a} {st.median(v[n]):.0f}" for a, v in sorted(arms.items()) if n in v)
    line += " | " + " ".join(f"{s} {x:.0f}" for s, x in sorted(p.items()))
    if best[0]: line += " | /best(" + best[1] + ") " + " ".join(f"{a} {st.median(v[n]) / best[0]:.3f}" for a, v in sorted(arms.items()) if n in v)
    print(line)
PY
save
