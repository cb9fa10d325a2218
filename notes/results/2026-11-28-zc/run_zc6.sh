#!/usr/bin/env bash
# Session (zc) zc6: one ordered dQ chain against two (base: main ade6274's behaviour), the
# deterministic backward on every suite problem and the d64 suite, two rounds, order alternating;
# then the fast mode and FlexAttention (Triton) beside them, one run.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zc6}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
run() {  # binary tag suite round
  FLEXJIT_CACHE_DIR=/tmp/fc_$2 timeout 120 ./$1 bench --suite $3.json --bwd-mode deterministic > $r/b_$2_$3_r$4.jsonl 2> $r/b_$2_$3_r$4.err
  echo "$2 $3 r$4 rc=$? $(( $(date +%s) - t0 )) s"
}
for s in suite suite64x; do run flexjit_base base $s 1; run flexjit new $s 1; done
for s in suite suite64x; do run flexjit new $s 2; run flexjit_base base $s 2; done
for s in suite suite64x; do
  FLEXJIT_CACHE_DIR=/tmp/fc_new timeout 120 ./flexjit bench --suite $s.json --bwd-mode fast > $r/b_fast_${s}_r1.jsonl 2> $r/b_fast_${s}_r1.err
  echo "fast $s rc=$? $(( $(date +%s) - t0 )) s"
done
left=$(( 560 - ($(date +%s) - t0) ))
timeout $left python3 peers.py --no-sdpa --suite suite.json --only sliding_window_d128,document_causal_d128,prefix_lm_d128,alibi_causal_d128,softcap_causal_d128,causal_d128,long_document_causal_d128,long_sliding_window_d128 > $r/peers.jsonl 2> $r/peers.err
echo "peers rc=$? $(( $(date +%s) - t0 )) s"
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
paths = {}
for f in sorted(glob.glob(f"{r}/*.jsonl")):
    m = re.search(r"b_(base|new|fast)_", f)
    for line in open(f):
        line = line.strip()
        if not line.startswith("{"): continue
        o = json.loads(line)
        if "name" not in o or o.get("bwd_tflops") is None: continue
        tag = m.group(1) if m else o.get("system")
        rows[o["name"]][tag].append(o["bwd_tflops"])
        if m and m.group(1) == "new": paths[o["name"]] = o.get("dq_path", o.get("bwd_dq_path"))
print(f"{'problem':28s} {'base (2 chains)':>18s} {'new (1 chain)':>18s} {'new/base':>8s} {'fast':>6s} {'det/fast':>8s} {'triton':>6s} {'det/triton':>10s}")
for n, d in rows.items():
    b, nw, f, t = d.get("base", []), d.get("new", []), d.get("fast", []), d.get("flex", [])
    mb, mn = (statistics.mean(b) if b else None), (statistics.mean(nw) if nw else None)
    x = f"{mn / mb:.3f}" if mb and mn else "-"
    df = f"{mn / f[0]:.3f}" if mn and f else "-"
    dt = f"{mn / t[0]:.3f}" if mn and t else "-"
    print(f"{n:28s} {str([round(v) for v in b]):>18s} {str([round(v) for v in nw]):>18s} {x:>8s} {str(round(f[0])) if f else '-':>6s} {df:>8s} {str(round(t[0])) if t else '-':>6s} {dt:>10s}")
PY
cd $out && tar czf zc6.tar.gz r && rm -rf r
