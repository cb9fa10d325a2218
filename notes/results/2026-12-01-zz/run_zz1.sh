#!/usr/bin/env bash
# (zz1) soft-capping with its constants folded (hand-written templates, timing and a GPU test):
# main's templates against tfold/ (tanh(acc * (scale / 30)) * (30 log2 e), derivative 1 - t^2),
# forward and both backward modes, rounds in alternating order.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zz1}; r=/tmp/zz1r/r; mkdir -p $r $out
save() { (cd /tmp/zz1r && tar czf $out/zz1.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $r/gpu.txt
cat $r/gpu.txt
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
for rd in 1 2 3; do
  for v in base fold; do
    [ $((rd % 2)) = 0 ] && v=$([ $v = base ] && echo fold || echo base)
    if [ $v = fold ]; then export FLEXJIT_TEMPLATE_DIR=$PWD/tfold; else unset FLEXJIT_TEMPLATE_DIR; fi
    for m in fast deterministic; do
      [ $rd = 3 ] && [ $m = deterministic ] && continue
      FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 150 ./flexjit bench --suite sc.json --bwd-mode $m --json $r/${v}_${m}_$rd.jsonl > $r/${v}_${m}_$rd.log 2>&1 || tail -3 $r/${v}_${m}_$rd.log
    done
  done
  echo "round $rd $(( $(date +%s) - t0 )) s"
done
unset FLEXJIT_TEMPLATE_DIR
python3 - $r <<'PY'
import json, sys, glob, collections, statistics
r = sys.argv[1]
bw = collections.defaultdict(list); fw = collections.defaultdict(list)
for f in sorted(glob.glob(r + "/*.jsonl")):
    ver, m, rd = f.split("/")[-1].split(".")[0].split("_")
    for line in open(f):
        o = json.loads(line)
        if "name" in o:
            bw[(o["name"], m, ver)].append(round(o.get("bwd_tflops", 0), 1)); fw[(o["name"], m, ver)].append(round(o.get("fwd_tflops", 0), 1))
for m in ("fast", "deterministic"):
    for n in sorted({k[0] for k in bw}):
        a, b = bw[(n, m, "base")], bw[(n, m, "fold")]
        fa, fb = fw[(n, m, "base")], fw[(n, m, "fold")]
        if a and b: print(f"{m:13s} {n:22s} bwd base {a} fold {b} x{statistics.median(b)/max(statistics.median(a),1e-9):.3f} | fwd base {fa} fold {fb} x{statistics.median(fb)/max(statistics.median(fa),1e-9):.3f}")
PY
save
