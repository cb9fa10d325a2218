#!/usr/bin/env bash
# Session (ze) ze2/ze3: the fast backward, main (flexjit_base) against the branch with the switch
# off (0) and on (1), two rounds alternating, FLEXJIT_AUTOTUNE=off. $1: the suite (suite or suite64x).
set -u
cd "$(dirname "$0")"
s=$1; out=${OUT:-/tmp/ze2}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader
t0=$(date +%s)
run() {  # binary tag switch round
  FLEXJIT_EXP_DQ_FIRST=$3 FLEXJIT_CACHE_DIR=/tmp/fc_$2 timeout 120 ./$1 bench --suite $s.json --bwd-mode fast > $r/b_$2$3_${s}_r$4.jsonl 2> $r/b_$2$3_${s}_r$4.err
  echo "$2$3 $s r$4 rc=$? $(( $(date +%s) - t0 )) s"
}
run flexjit_base base 0 1; run flexjit new 0 1; run flexjit new 1 1
run flexjit new 1 2; run flexjit new 0 2; run flexjit_base base 0 2
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    tag = re.search(r"b_(base0|new0|new1)_", f).group(1)
    for line in open(f):
        if not line.startswith("{"): continue
        o = json.loads(line)
        if o.get("bwd_tflops") is None: continue
        rows[o["name"]][tag].append(o["bwd_tflops"])
for n, d in rows.items():
    b, off, on = d["base0"], d["new0"], d["new1"]
    m = statistics.mean
    print(f"{n:28s} main {[round(v) for v in b]} off {[round(v) for v in off]} on {[round(v) for v in on]} "
          f"off/main {m(off) / m(b):.3f} on/main {m(on) / m(b):.3f}")
PY
cd $out && tar czf ze2_$s.tar.gz r && rm -rf r
