#!/usr/bin/env bash
# (zx4) GQA 8:1 and 16:1 backwards at 256-column tiles ran at half the 4:1 speed in zx3: the pairs'
# exchange (dq_pairs, GQA >= 8) against none (flexjit_nopairs: main with dq_pairs' threshold out of
# reach), fast mode, two rounds; then the peers on the same problems.
# Stage .gpu/zx4: flexjit, flexjit_nopairs (both with the working tree's templates embedded),
# peers.py, compare.py, pairs_past_io.json; carry .gpu/zx4; run `bash .gpu/zx4/run_zx4.sh`.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zx4}; r=/tmp/zx4r/r; mkdir -p $r $out
save() { (cd /tmp/zx4r && tar czf $out/zx4.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
for rd in 1 2; do
  for v in pairs nopairs; do
    [ $rd = 2 ] && v=$([ $v = pairs ] && echo nopairs || echo pairs)
    bin=./flexjit; [ $v = nopairs ] && bin=./flexjit_nopairs
    FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 120 $bin bench --suite pairs_past_io.json --json $r/${v}_fast_$rd.jsonl > $r/${v}_fast_$rd.log 2>&1 || tail -3 $r/${v}_fast_$rd.log
  done
done
python3 - $r <<'PY'
import json, sys, glob, collections, statistics
r = sys.argv[1]
v = collections.defaultdict(list)
for f in sorted(glob.glob(r + "/*_fast_?.jsonl")):
    ver = f.split("/")[-1].split("_")[0]
    for line in open(f):
        o = json.loads(line)
        if "name" in o: v[(o["name"], ver)].append(round(o.get("bwd_tflops", 0), 1))
for n in sorted({k[0] for k in v}):
    a, b = v[(n, "pairs")], v[(n, "nopairs")]
    if a and b: print(f"{n:22s} pairs {a} nopairs {b} x{statistics.median(b)/max(statistics.median(a),1e-9):.3f}")
PY
echo "A/B $(( $(date +%s) - t0 )) s"
save
left=$(( 400 - ($(date +%s) - t0) ))
timeout $left python3 peers.py --suite pairs_past_io.json > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
python3 compare.py $r/pairs_fast_1.jsonl $r/peers.jsonl
echo "all $(( $(date +%s) - t0 )) s"
save
