#!/usr/bin/env bash
# Session (p) pf, third call: the
# landing A/B: session (o)'s final binary (flexjit_prev, a6769d1) against this session's
# (flexjit, 4f6ed10), fast and deterministic backward and the forward, suite problems, d64 and
# d256, two interleaved rounds.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/pfa}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
only=noop_d128,causal_d128,noop_d64,causal_d64,gqa_causal_d128,alibi_causal_d128,softcap_causal_d128,sliding_window_d128,document_causal_d128,prefix_lm_d128,long_causal_d128
only64=gqa_causal_d64,sliding_window_d64,document_causal_d64,alibi_causal_d64,softcap_causal_d64,prefix_lm_d64
only256=noop_d256,causal_d256,alibi_causal_d256,gqa_causal_d256,softcap_causal_d256,document_causal_d256
for round in 1 2; do
  for b in prev new; do
    bin=./flexjit; [ $b = prev ] && bin=./flexjit_prev
    timeout 100 $bin bench --suite suite.json --only $only --json $r/${b}_$round.jsonl > $r/${b}_$round.log 2>&1 || tail -2 $r/${b}_$round.log
    timeout 60 $bin bench --suite suite64x.json --only $only64 --json $r/${b}_$round.jsonl.b > $r/${b}_$round.logb 2>&1 || tail -2 $r/${b}_$round.logb
    timeout 60 $bin bench --suite suite256x.json --only $only256 --json $r/${b}_$round.jsonl.c > $r/${b}_$round.logc 2>&1 || tail -2 $r/${b}_$round.logc
    timeout 100 $bin bench --suite suite.json --only $only --bwd-mode deterministic --json $r/${b}_det_$round.jsonl > $r/${b}_det_$round.log 2>&1 || tail -2 $r/${b}_det_$round.log
    timeout 60 $bin bench --suite suite64x.json --only $only64 --bwd-mode deterministic --json $r/${b}_det_$round.jsonl.b > $r/${b}_det_$round.logb 2>&1 || tail -2 $r/${b}_det_$round.logb
    cat $r/${b}_$round.jsonl.b $r/${b}_$round.jsonl.c >> $r/${b}_$round.jsonl; cat $r/${b}_det_$round.jsonl.b >> $r/${b}_det_$round.jsonl
    echo "$b round $round $(( $(date +%s) - t0 )) s"
  done
done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys
d = sys.argv[1]
def load(f):
    out = {}
    try:
        for l in open(f):
            try: j = json.loads(l)
            except Exception: continue
            if "name" in j: out[j["name"]] = j
    except FileNotFoundError: pass
    return out
P = [load(f"{d}/prev_{i}.jsonl") for i in (1, 2)]; N = [load(f"{d}/new_{i}.jsonl") for i in (1, 2)]
PD = [load(f"{d}/prev_det_{i}.jsonl") for i in (1, 2)]; ND = [load(f"{d}/new_det_{i}.jsonl") for i in (1, 2)]
def pair(runs, n, k): return [x.get(n, {}).get(k) or 0 for x in runs]
def x(a, b): return sum(b) / max(sum(a), 1e-9)
print(f"{'problem':24} {'fwd prev':>11} {'fwd new':>11} {'x':>6} | {'bwd prev':>11} {'bwd new':>11} {'x':>6} | {'det prev':>11} {'det new':>11} {'x':>6}")
for n in N[0]:
    a, b = pair(P, n, "fwd_tflops"), pair(N, n, "fwd_tflops")
    c, e = pair(P, n, "bwd_tflops"), pair(N, n, "bwd_tflops")
    f, g = pair(PD, n, "bwd_tflops"), pair(ND, n, "bwd_tflops")
    fmt = lambda v: f"{v[0]:.0f}/{v[1]:.0f}"
    print(f"{n:24} {fmt(a):>11} {fmt(b):>11} {x(a,b):6.3f} | {fmt(c):>11} {fmt(e):>11} {x(c,e):6.3f} | {fmt(f):>11} {fmt(g):>11} {x(f,g) if f[0] else 0:6.3f}")
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
