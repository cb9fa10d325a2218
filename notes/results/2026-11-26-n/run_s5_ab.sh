#!/usr/bin/env bash
# Session (n) s5 A/B: the ws kernel at d128/d64 with the session's templates against the
# templates of the commit before (same binary, FLEXJIT_TEMPLATE_DIR), two rounds, backward TF/s.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/s5ab}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
only=noop_d128,causal_d128,noop_d64,causal_d64,gqa_causal_d128,alibi_causal_d128,softcap_causal_d128
for round in 1 2; do
  FLEXJIT_TEMPLATE_DIR=$PWD/oldtmpl timeout 120 ./flexjit bench --suite suite.json --only $only --json $r/old_$round.jsonl > $r/old_$round.log 2>&1 || tail -3 $r/old_$round.log
  timeout 120 ./flexjit bench --suite suite.json --only $only --json $r/new_$round.jsonl > $r/new_$round.log 2>&1 || tail -3 $r/new_$round.log
done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys
d = sys.argv[1]
def load(f):
    out = {}
    for l in open(f):
        try: j = json.loads(l)
        except Exception: continue
        if "name" in j: out[j["name"]] = j
    return out
runs = {k: [load(f"{d}/{k}_{i}.jsonl") for i in (1, 2)] for k in ("old", "new")}
for n in runs["new"][0]:
    a = [x.get(n, {}).get("bwd_tflops", 0) for x in runs["old"]]
    b = [x.get(n, {}).get("bwd_tflops", 0) for x in runs["new"]]
    print(f"{n:24} bwd old {a[0]:4.0f} / {a[1]:4.0f}  new {b[0]:4.0f} / {b[1]:4.0f}  x {sum(b)/max(sum(a),1):.3f}")
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
