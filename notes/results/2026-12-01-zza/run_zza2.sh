#!/usr/bin/env bash
# (zza2) Timing probe: ALiBi's int -> float conversion (I2F, on the quarter-rate conversion pipe
# beside MUFU.EX2) replaced by the magic-number trick (IADD + FADD; exact below 2^22) through a
# template dir (tmpl_fastint: flexjit_isub returns a type whose float conversion takes the trick).
# main's templates (tmpl_main) against it, alternating, three rounds.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zza2}; r=/tmp/zza2r/r; mkdir -p $r $out
save() { (cd /tmp/zza2r && tar czf $out/zza2.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
for rd in 1 2 3; do
  for v in old new; do
    [ $rd = 2 ] && v=$([ $v = old ] && echo new || echo old)
    if [ $v = old ]; then export FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_main; else export FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_fastint; fi
    FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 150 ./flexjit bench --suite al.json --json $r/${v}_$rd.jsonl > $r/${v}_$rd.log 2>&1 || tail -3 $r/${v}_$rd.log
  done
done
unset FLEXJIT_TEMPLATE_DIR
python3 - $r <<'PY'
import json, sys, glob, collections, statistics
r = sys.argv[1]
v = collections.defaultdict(list)
for f in sorted(glob.glob(r + "/*_?.jsonl")):
    ver = f.split("/")[-1].split("_")[0]
    for line in open(f):
        o = json.loads(line)
        if "name" in o:
            for k in ("fwd_tflops", "bwd_tflops", "fwd_gbps"):
                if k in o: v[(o["name"], k, ver)].append(o[k])
for (n, k) in sorted({(a, b) for a, b, _ in v}):
    a, b = v[(n, k, "old")], v[(n, k, "new")]
    if a and b and statistics.median(a) > 0: print(f"{n:32s} {k:10s} old {a} new {b} x{statistics.median(b)/statistics.median(a):.3f}")
PY
echo "total $(( $(date +%s) - t0 )) s"
save
