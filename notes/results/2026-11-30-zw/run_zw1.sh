#!/usr/bin/env bash
# (zw) call 1: the backward's dK/dV stages on 256-column tiles beside V up to 128 (m64n64w8s2ws, the
# default, against s3), three rounds in alternating order, fast and deterministic; then the new
# RandomProblemsGpu.AnyHeadDimForwardAndBackward with many draws.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zw1}; r=/tmp/zw1r/r; mkdir -p $r $out
save() { (cd /tmp/zw1r && tar czf $out/zw1.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_b
for rd in 1 2 3; do
  for c in s2 s3; do
    [ $rd = 2 ] && c=$([ $c = s2 ] && echo s3 || echo s2)
    for m in fast deterministic; do
      timeout 120 ./flexjit bench --suite mla_stages.json --bwd-mode $m --dkdv-config m64n64w8${c}ws \
        --json $r/${c}_${m}_$rd.jsonl > $r/${c}_${m}_$rd.log 2>&1 || tail -3 $r/${c}_${m}_$rd.log
    done
  done
done
echo "bench $(( $(date +%s) - t0 )) s"
python3 - $r <<'PY'
import json, sys, glob, collections, statistics
r = sys.argv[1]
v = collections.defaultdict(list)
for f in sorted(glob.glob(r + "/*.jsonl")):
    c, m, rd = f.split("/")[-1][:-6].split("_")
    for line in open(f):
        o = json.loads(line)
        if "name" in o:
            v[(o["name"], m, c)].append(o.get("bwd_tflops", 0))
names = sorted({k[0] for k in v})
for m in ("fast", "deterministic"):
    for n in names:
        a, b = v[(n, m, "s2")], v[(n, m, "s3")]
        if a and b:
            print(f"{m:13s} {n:22s} s2 {' '.join(f'{x:6.1f}' for x in a)}  s3 {' '.join(f'{x:6.1f}' for x in b)}  ratio {statistics.median(b)/max(statistics.median(a),1e-9):.3f}")
PY
save
t1=$(date +%s)
FLEXJIT_RANDOM_PROBLEMS=${N:-24} FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 400 ./gpu_test_attention \
  --gtest_filter='RandomProblemsGpu.AnyHeadDimForwardAndBackward' > $r/test_any.log 2>&1
echo "test rc $? $(( $(date +%s) - t1 )) s"
grep -E '^\[  (PASSED|FAILED)  \]|Failure|threw|seed' $r/test_any.log | head -20
grep -c '\[ problem  \]' $r/test_any.log
save
