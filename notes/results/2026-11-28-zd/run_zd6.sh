#!/usr/bin/env bash
# Session (zd) zd6: the landed build, one run: the deterministic backward on the suite and the d64
# suite (FLEXJIT_AUTOTUNE=off: the rule; the documents problems also with the ordered sums, the
# way zd4's measurement chose for them), the fast mode, and FlexAttention (Triton) beside them.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zd6}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_zd6
t0=$(date +%s)
for s in suite suite64x; do
  for mode in deterministic fast; do
    timeout 90 ./flexjit bench --suite $s.json --bwd-mode $mode > $r/b_${mode}_$s.jsonl 2> $r/b_${mode}_$s.err
    echo "$mode $s rc=$? $(( $(date +%s) - t0 )) s"
  done
done
FLEXJIT_DETERMINISTIC_DQ=ordered timeout 40 ./flexjit bench --suite suite.json --only document_causal_d128 --bwd-mode deterministic > $r/b_ordered_suite.jsonl 2>&1
FLEXJIT_DETERMINISTIC_DQ=ordered timeout 40 ./flexjit bench --suite suite64x.json --only document_causal_d64 --bwd-mode deterministic > $r/b_ordered_suite64x.jsonl 2>&1
echo "ordered documents $(( $(date +%s) - t0 )) s"
left=$(( 245 - ($(date +%s) - t0) ))
timeout $left python3 peers.py --no-sdpa --suite suite.json --only document_causal_d128,sliding_window_d128,long_document_causal_d128,prefix_lm_d128,causal_d128,softcap_causal_d128 > $r/peers.jsonl 2> $r/peers.err
echo "peers rc=$? $(( $(date +%s) - t0 )) s"
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections
r = sys.argv[1]
rows = collections.defaultdict(dict)
for f in sorted(glob.glob(f"{r}/*.jsonl")):
    m = re.search(r"b_(deterministic|fast|ordered)_", f)
    for line in open(f):
        line = line.strip()
        if not line.startswith("{"): continue
        o = json.loads(line)
        if "name" not in o or o.get("bwd_tflops") is None: continue
        rows[o["name"]][m.group(1) if m else o.get("system")] = (o["bwd_tflops"], o.get("bwd_mode", ""))
for n, d in rows.items():
    fast = d.get("fast", (None,))[0]; flex = d.get("flex", (None,))[0]
    for k in ("deterministic", "ordered"):
        if k not in d: continue
        v, how = d[k]
        print(f"{n:28s} {k:13s} {v:6.1f} ({how}) fast {fast} det/fast {v / fast if fast else float('nan'):.3f} triton {flex} det/triton {v / flex if flex else float('nan'):.3f}")
PY
cd $out && tar czf zd6.tar.gz r && rm -rf r
