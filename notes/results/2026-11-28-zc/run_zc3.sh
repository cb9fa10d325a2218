#!/usr/bin/env bash
# Session (zc) zc3: the deterministic backward against the fast one and FlexAttention (Triton) on
# every suite problem (main ade6274's build), one run.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zc3}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
for s in suite suite64x; do
  for mode in fast deterministic; do
    FLEXJIT_CACHE_DIR=/tmp/fc_b timeout 150 ./flexjit bench --suite $s.json --bwd-mode $mode > $r/b_${s}_$mode.jsonl 2> $r/b_${s}_$mode.err
    echo "$s $mode rc=$? $(( $(date +%s) - t0 )) s"
  done
done
left=$(( 560 - ($(date +%s) - t0) ))
timeout $left python3 peers.py --no-sdpa --suite suite.json --only sliding_window_d128,document_causal_d128,prefix_lm_d128,alibi_causal_d128,softcap_causal_d128,causal_d128,long_document_causal_d128,long_sliding_window_d128 > $r/peers.jsonl 2> $r/peers.err
echo "peers rc=$? $(( $(date +%s) - t0 )) s"
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections
r = sys.argv[1]
rows = collections.defaultdict(dict)
for f in sorted(glob.glob(f"{r}/*.jsonl")):
    tag = re.sub(r".*/(b_suite64x_|b_suite_)?", "", f).replace(".jsonl", "")
    for line in open(f):
        line = line.strip()
        if not line.startswith("{"): continue
        o = json.loads(line)
        if "name" not in o: continue
        key = tag if tag != "peers" else o.get("system")
        rows[o["name"]][key] = o.get("bwd_tflops")
for n, d in rows.items():
    f, dt, t = d.get("fast"), d.get("deterministic"), d.get("flex")
    ratio = f"{dt / f:.3f}" if f and dt else "-"
    rt = f"{dt / t:.3f}" if t and dt else "-"
    print(f"{n:32s} fast {f} det {dt} det/fast {ratio} triton {t} det/triton {rt} {d}")
PY
cd $out && tar czf zc3.tar.gz r && rm -rf r
