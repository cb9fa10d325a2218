#!/usr/bin/env bash
# Session (s) s2: template A/B on one binary, interleaved rounds (ROUNDS), forward and fast backward
# TF/s: base (the templates of a6ebb6e), new (embedded: DK_SPLIT, DQ_LATE_ARRIVAL, KV_START_AHEAD),
# split (new without the late arrival), late (new without the split). Then the deterministic
# backward once for base and new.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/s2}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
V=${V:-"base new split late"}
only=noop_d128,causal_d128,gqa_causal_d128,alibi_causal_d128,softcap_causal_d128,sliding_window_d128,document_causal_d128,prefix_lm_d128
for round in ${ROUNDS:-1 2}; do
  for v in $V; do
    env=""; [ $v = new ] || env="FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_$v"
    export FLEXJIT_CACHE_DIR=/tmp/fc_$v
    f=$r/${v}_$round.jsonl
    env $env timeout 120 ./flexjit bench --suite suite.json --only $only --json $f.a > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    env $env timeout 60 ./flexjit bench --suite suite64x.json --only noop_d64,causal_d64 --json $f.b >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    cat $f.a $f.b > $f
    echo "  $v round $round $(( $(date +%s) - t0 )) s"
  done
done
if [ -n "${DET:-}" ]; then
  for v in base new; do
    env=""; [ $v = new ] || env="FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_$v"
    export FLEXJIT_CACHE_DIR=/tmp/fc_$v
    env $env timeout 90 ./flexjit bench --suite suite.json --only noop_d128,causal_d128,gqa_causal_d128 --bwd-mode deterministic --json $r/${v}_det.jsonl > $r/${v}_det.log 2>&1 || tail -2 $r/${v}_det.log
  done
fi
python3 - $r "$V" "${ROUNDS:-1 2}" <<'PY' | tee $r/summary.txt
import json, sys
d = sys.argv[1]; V = sys.argv[2].split(); R = sys.argv[3].split()
def load(f):
    out = {}
    try:
        for l in open(f):
            try: j = json.loads(l)
            except Exception: continue
            if "name" in j: out[j["name"]] = j
    except FileNotFoundError: pass
    return out
runs = {v: [load(f"{d}/{v}_{i}.jsonl") for i in R] for v in V}
for key in ("fwd_tflops", "bwd_tflops"):
    print(f"{key:26} " + " ".join(f"{v:>12}" for v in V) + "   x base")
    for n in runs["base"][0]:
        cells = []
        for v in V:
            a = [x.get(n, {}).get(key) or 0 for x in runs[v]]
            cells.append("/".join(f"{y:.0f}" for y in a).rjust(12))
        b = sum(x.get(n, {}).get(key) or 0 for x in runs["base"])
        rat = " ".join(f"{sum(x.get(n, {}).get(key) or 0 for x in runs[v]) / max(b, 1):.3f}" for v in V[1:])
        print(f"{n:26} " + " ".join(cells) + "   " + rat)
for v in ("base", "new"):
    det = load(f"{d}/{v}_det.jsonl")
    if det: print(f"deterministic {v}: " + " ".join(f"{n} {det[n].get('bwd_tflops')}" for n in det))
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
