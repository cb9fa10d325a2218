#!/usr/bin/env bash
# (zza7) The final build's forward on the ALiBi rows beside FlexAttention (Triton), one call.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zza7}; r=/tmp/zza7r/r; mkdir -p $r $out
export FLEXJIT_AUTOTUNE=off
X=alibi_causal_d128,alibi_causal_d64,alibi_noop_d128,alibi_window_d128,causal_d128
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
FLEXJIT_CACHE_DIR=/tmp/fc timeout 100 ./flexjit bench --suite al.json --only $X --no-bwd --json $r/flexjit_1.jsonl > $r/flexjit_1.log 2>&1 || tail -3 $r/flexjit_1.log
timeout 240 python3 peers.py --suite al.json --only $X --no-bwd --no-sdpa > $r/peers.jsonl 2> $r/peers.err || tail -5 $r/peers.err
FLEXJIT_CACHE_DIR=/tmp/fc timeout 100 ./flexjit bench --suite al.json --only $X --no-bwd --json $r/flexjit_2.jsonl > $r/flexjit_2.log 2>&1 || tail -3 $r/flexjit_2.log
python3 - $r <<'PY'
import json, sys, collections
r = sys.argv[1]
rows = collections.defaultdict(dict)
for f, tag in ((r + "/flexjit_1.jsonl", "flexjit1"), (r + "/flexjit_2.jsonl", "flexjit2"), (r + "/peers.jsonl", None)):
    for line in open(f):
        try: o = json.loads(line)
        except Exception: continue
        if "name" not in o: continue
        rows[o["name"]][tag or o.get("system", "?")] = o.get("fwd_tflops")
for n, v in rows.items():
    print(n, v)
PY
(cd /tmp/zza7r && tar czf $out/zza7.tar.gz r)
