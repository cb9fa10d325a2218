#!/bin/bash
# (zzzd) call 1 (carry .gpu/zzzd; about 540 s): the A/B of the fast backward
# over the issue's suite, rounds alternating (ab2.sh; the metric is bwd_ms): main (main's embedded
# templates) / F / M / FM (prepare.sh says what each is). Rounds start until 400 s; each takes
# about 140 s once the kernels are cached (the first about 240 s).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzab}; r=/tmp/zzzabr/r; mkdir -p $r $out
save() { (cd /tmp/zzzabr && tar czf $out/zzzab.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
bash ab2.sh zb suite.json bwd_ms 400 3 "" main:./flexjit: F:./flexjit:$PWD/tv_F/templates \
  M:./flexjit:$PWD/tv_M/templates FM:./flexjit:$PWD/tv_FM/templates 2>&1 | grep -v "^zb "
cp /tmp/zbr/r/ab.txt $r/ab.txt 2>/dev/null; cp /tmp/zbr/r/*.jsonl $r/ 2>/dev/null
# Backward TF/s medians per arm.
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
for n in sorted(arms.get("main", {})):
    print(f"{n:28s} " + " ".join(f"{a} {st.median(v[n]):.0f}" for a, v in sorted(arms.items()) if n in v))
PY
echo "done $(( $(date +%s) - t0 )) s"; save
