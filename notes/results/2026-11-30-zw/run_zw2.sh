#!/usr/bin/env bash
# (zw) call 2: the backward's new defaults beside 256-column tiles, old (zw1's binary, ../zw1) against
# new, in alternating order: the third Q stage in the fast mode (mla_stages.json), and the 128-column
# tiles for 64 or less beside 256 (192/64, 64/256, 256/40, 256/64; fast and deterministic); the peers
# on those; then the changed GPU tests and memcheck on the fast-mode test.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zw2}; r=/tmp/zw2r/r; mkdir -p $r $out
save() { (cd /tmp/zw2r && tar czf $out/zw2.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
NEWP=causal_192_64,causal_64_256,causal_256_40,noop_256_64
for rd in 1 2; do
  for v in old new; do
    [ $rd = 2 ] && v=$([ $v = old ] && echo new || echo old)
    bin=./flexjit; [ $v = old ] && bin=../zw1/flexjit
    FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 150 $bin bench --suite mla_stages.json --json $r/${v}_fast_$rd.jsonl > $r/${v}_fast_$rd.log 2>&1 || tail -3 $r/${v}_fast_$rd.log
    FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 100 $bin bench --suite mla_stages.json --only $NEWP --bwd-mode deterministic --json $r/${v}_det_$rd.jsonl > $r/${v}_det_$rd.log 2>&1 || tail -3 $r/${v}_det_$rd.log
  done
done
echo "bench $(( $(date +%s) - t0 )) s"
save
timeout 200 python3 peers.py --suite mla_stages.json --only $NEWP,mla_causal,causal_256_128 > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s"
python3 - $r <<'PY'
import json, sys, glob, collections, statistics
r = sys.argv[1]
v = collections.defaultdict(list); cfg = {}
for f in sorted(glob.glob(r + "/*_*_*.jsonl")):
    ver, m, rd = f.split("/")[-1][:-6].split("_")
    for line in open(f):
        o = json.loads(line)
        if "name" in o:
            v[(o["name"], m, ver)].append((o.get("fwd_tflops", 0), o.get("bwd_tflops", 0)))
            cfg[(o["name"], m, ver)] = (o.get("bwd_configs"), o.get("bwd_mode"))
peers = collections.defaultdict(dict)
for line in open(r + "/peers.jsonl"):
    if '"name"' in line:
        o = json.loads(line); peers[o["name"]][o["system"]] = (round(o.get("fwd_tflops") or 0), round(o.get("bwd_tflops") or 0))
for m in ("fast", "det"):
    for n in sorted({k[0] for k in v if k[1] == m}):
        a, b = v[(n, m, "old")], v[(n, m, "new")]
        if a and b:
            ra = statistics.median(x[1] for x in a); rb = statistics.median(x[1] for x in b)
            print(f"{m:4s} {n:20s} old bwd {' '.join(f'{x[1]:6.1f}' for x in a)}  new {' '.join(f'{x[1]:6.1f}' for x in b)}  x{rb/max(ra,1e-9):.3f}  fwd {b[0][0]:.0f}  {cfg[(n,m,'new')]} | {dict(peers.get(n, {}))}")
PY
save
t1=$(date +%s)
i=0
for f in BwdGpu.FastModeFallsBackOnlyWhereItMustAndSaysWhy BwdGpu.HeadDimsThatAreNoMultipleOf64 BwdGpu.HeadDimsAndHalfPrecision \
         BwdGpu.FastModeOnePerHeadDim SeqLensGpu.HeadDimsThatAreNoMultipleOf64 BufferGradGpu.RelativePositionTableCausalGqaOddLengths; do
  FLEXJIT_CACHE_DIR=/tmp/ft_$i timeout 300 ./gpu_test_attention --gtest_filter=$f > $r/test_$f.log 2>&1 &
  i=$((i+1))
done
FLEXJIT_RANDOM_PROBLEMS=40 FLEXJIT_CACHE_DIR=/tmp/ft_r timeout 300 ./gpu_test_attention --gtest_filter='RandomProblemsGpu.AnyHeadDimForwardAndBackward' > $r/test_any.log 2>&1 &
wait
echo "tests $(( $(date +%s) - t1 )) s"
for f in $r/test_*.log; do echo "$(basename $f): $(grep -E '^\[  (PASSED|FAILED)  \]|Failure|threw' $f | head -3 | tr '\n' ' ')"; done
grep -h -B2 -A6 'Failure' $r/test_*.log | head -60
grep -c '\[ problem  \]' $r/test_any.log
save
left=$(( 570 - ($(date +%s) - t0) ))
FLEXJIT_CACHE_DIR=/tmp/fc_ms timeout $left compute-sanitizer --tool memcheck --kernel-name kns=attention_bwd --error-exitcode 9 ./gpu_test_attention --gtest_filter=BwdGpu.FastModeFallsBackOnlyWhereItMustAndSaysWhy > $r/memcheck.log 2>&1; echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $r/memcheck.log | tr '\n' ' ')"
echo "total $(( $(date +%s) - t0 )) s"
save
