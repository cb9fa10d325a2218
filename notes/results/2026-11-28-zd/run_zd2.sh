#!/usr/bin/env bash
# Session (zd): branch zd-ordered-first-store against main, deterministic and fast backward, the
# order alternating (zc's run_zd1_next.sh, its A/B part).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zd2}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
run() {  # binary tag mode suite round
  FLEXJIT_CACHE_DIR=/tmp/fc_$2 timeout 120 ./$1 bench --suite $4.json --bwd-mode $3 > $r/b_$2_$3_$4_r$5.jsonl 2> $r/b_$2_$3_$4_r$5.err
  echo "$2 $3 $4 r$5 rc=$? $(( $(date +%s) - t0 )) s"
}
for s in suite suite64x; do run flexjit_base base deterministic $s 1; run flexjit new deterministic $s 1; done
for s in suite suite64x; do run flexjit new deterministic $s 2; run flexjit_base base deterministic $s 2; done
run flexjit_base base fast suite 1; run flexjit new fast suite 1
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    tag, mode = re.search(r"b_(base|new)_(\w+?)_suite", f).groups()
    for line in open(f):
        line = line.strip()
        if not line.startswith("{"): continue
        o = json.loads(line)
        if "name" not in o or o.get("bwd_tflops") is None: continue
        rows[(o["name"], mode)][tag].append(o["bwd_tflops"])
for (n, mode), d in rows.items():
    b, nw = d.get("base", []), d.get("new", [])
    x = f"{statistics.mean(nw) / statistics.mean(b):.3f}" if b and nw else "-"
    print(f"{n:28s} {mode:14s} base {[round(v) for v in b]} new {[round(v) for v in nw]} {x}")
PY
cd $out && tar czf zd2.tar.gz r && rm -rf r
