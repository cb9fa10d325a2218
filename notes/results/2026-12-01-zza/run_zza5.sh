#!/usr/bin/env bash
# (zza5) Timing probes of the affine pass's guards (templates on the landed binary): main's
# templates, the landed ones, no finite check (nofinite), no per-score fallback (nofallback).
# Three rounds, the order rotated.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zza5}; r=/tmp/zza5r/r; mkdir -p $r $out
save() { (cd /tmp/zza5r && tar czf $out/zza5.tar.gz r); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
vs=(main new nofinite nofallback)
for rd in 0 1 2; do
  for k in 0 1 2 3; do
    v=${vs[$(( (k + rd) % 4 ))]}
    FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_$v FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 120 ./flexjit bench --suite al5.json --no-bwd --json $r/${v}_$rd.jsonl > $r/${v}_$rd.log 2>&1 || tail -3 $r/${v}_$rd.log
  done
done
python3 - $r <<'PY'
import json, sys, glob, collections, statistics
r = sys.argv[1]
v = collections.defaultdict(list)
for f in sorted(glob.glob(r + "/*_?.jsonl")):
    ver = f.split("/")[-1].split("_")[0]
    for line in open(f):
        o = json.loads(line)
        if "name" in o: v[(o["name"], ver)].append(o["fwd_tflops"])
for n in sorted({a for a, _ in v}):
    m = statistics.median(v[(n, "main")])
    print(f"{n:22s} " + " | ".join(f"{x} {v[(n, x)]} x{statistics.median(v[(n, x)]) / m:.3f}" for x in ("main", "new", "nofinite", "nofallback")))
PY
echo "total $(( $(date +%s) - t0 )) s"
save
