#!/bin/bash
# Alternating A/B(/C) rounds of `flexjit bench` in one call; ab.sh with per-arm bench arguments.
# Usage: ab2.sh TAG SUITE METRIC BUDGET_S ROUNDS "BENCH ARGS" ARM... ;
# ARM = name:binary:template_dir[:extra bench args] (template_dir may be empty: the embedded templates). Each arm keeps its own kernel cache.
# Rounds rotate the arms' order; no round starts past BUDGET_S. METRIC: fwd_ms or bwd_ms.
set -u
cd "$(dirname "$0")"
tag=$1 suite=$2 metric=$3 budget=$4 rounds=$5 args=$6; shift 6
arms=("$@")
out=${OUT:-/tmp/out}; r=/tmp/${tag}r/r; mkdir -p $r $out
save() { (cd /tmp/${tag}r && tar czf $out/$tag.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $r/gpu.txt
t0=$(date +%s)
k=${#arms[@]}
for n in $(seq 1 $rounds); do
  [ $(( $(date +%s) - t0 )) -gt $budget ] && break
  for i in $(seq 0 $((k - 1))); do
    a=${arms[$(( (i + n) % k ))]}
    name=${a%%:*}; rest=${a#*:}; bin=${rest%%:*}; rest=${rest#*:}; tv=${rest%%:*}; extra=""; [ "$rest" != "$tv" ] && extra=${rest#*:}
    FLEXJIT_TEMPLATE_DIR=$tv FLEXJIT_CACHE_DIR=/tmp/fc_${tag}_$name timeout 200 $bin bench --json $r/${name}_$n.jsonl --suite $suite $args $extra > $r/${name}_$n.log 2>&1
    echo "$tag $name $n rc=$? $(( $(date +%s) - t0 )) s"
  done
  save
done
python3 - $r $metric ${arms[@]%%:*} <<'PY' | tee $r/ab.txt
import json, sys, glob, statistics as st
r, metric, names = sys.argv[1], sys.argv[2], [a.split(":")[0] for a in sys.argv[3:]]
t = {}
for a in names:
    for f in glob.glob(f"{r}/{a}_*.jsonl"):
        n = int(f.rsplit("_", 1)[1].split(".")[0])
        for l in open(f):
            if l.startswith("{") and metric in l:
                o = json.loads(l); t.setdefault((o["name"], a), []).append((n, o[metric]))
base = names[0]
for prob in sorted({k[0] for k in t}):
    b = [x for _, x in sorted(t.get((prob, base), []))]
    line = f"{prob:32s} {base} " + " ".join(f"{x:.4f}" for x in b)
    for a in names[1:]:
        v = [x for _, x in sorted(t.get((prob, a), []))]
        if not b or not v: line += f" | {a} missing"; continue
        wins = sum(x > y for x, y in zip(b, v))
        line += f" | {a} " + " ".join(f"{x:.4f}" for x in v) + f" {base}/{a} {st.median(b)/st.median(v):.3f} ({wins}/{min(len(b), len(v))})"
    print(line)
PY
echo "$tag done $(( $(date +%s) - t0 )) s"; save
