#!/usr/bin/env bash
# (zy3) Half-slab slices, the dQ piece of 32 columns in registers of its own (no C7511): tests and
# memcheck, then the A/B against main on mla_stages.json (fast two rounds, deterministic one), and
# the new build's fast mode at two stages on the masked MLA problems.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zy3}; r=/tmp/zy3r/r; mkdir -p $r $out
save() { (cd /tmp/zy3r && tar czf $out/zy3.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $r/gpu.txt
t0=$(date +%s)
i=0
for f in BwdGpu.HalfSlabSlicesAtHeadDimsAbove128 BwdGpu.TilesWithAWholeSlabPastTheHeadDim BwdGpu.HeadDimsThatAreNoMultipleOf64 \
         BwdGpu.HeadDimsAndHalfPrecision BwdGpu.DeterministicModeSumsDqInOrder SeqLensGpu.HeadDimsThatAreNoMultipleOf64; do
  FLEXJIT_CACHE_DIR=/tmp/ft_$i timeout 240 ./gpu_test_attention --gtest_filter=$f > $r/test_$f.log 2>&1 &
  i=$((i+1))
done
FLEXJIT_RANDOM_PROBLEMS=12 FLEXJIT_CACHE_DIR=/tmp/ft_r timeout 240 ./gpu_test_attention --gtest_filter='RandomProblemsGpu.AnyHeadDimForwardAndBackward' > $r/test_any.log 2>&1 &
(FLEXJIT_CACHE_DIR=/tmp/ft_m timeout 280 compute-sanitizer --tool memcheck --kernel-name kns=attention_bwd_dkdv --error-exitcode 9 ./gpu_test_attention --gtest_filter=BwdGpu.HalfSlabSlicesAtHeadDimsAbove128 > $r/memcheck.log 2>&1; echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $r/memcheck.log | tr '\n' ' ')" > $r/memcheck.txt) &
wait
cat $r/memcheck.txt
for f in $r/test_*.log; do echo "$(basename $f): $(grep -E '^\[  (PASSED|FAILED)  \]|Failure|threw|rror' $f | head -6 | tr '\n' ' ')"; done
echo "tests $(( $(date +%s) - t0 )) s"
save
export FLEXJIT_AUTOTUNE=off
for rd in 1 2; do
  for v in old new; do
    [ $rd = 2 ] && v=$([ $v = old ] && echo new || echo old)
    if [ $v = old ]; then run=./flexjit_main; else run=./flexjit; fi
    for m in fast deterministic; do
      [ $rd = 2 ] && [ $m = deterministic ] && continue
      FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 100 $run bench --suite mla_stages.json --bwd-mode $m --json $r/${v}_${m}_$rd.jsonl > $r/${v}_${m}_$rd.log 2>&1 || tail -3 $r/${v}_${m}_$rd.log
    done
  done
done
FLEXJIT_CACHE_DIR=/tmp/fc_new timeout 100 ./flexjit bench --suite mla_stages.json --only mla_causal,mla_alibi_causal,mla_gqa_causal,mla_sliding_window,mla_documents,causal_160_128,causal_d136_dv72 --dkdv-config m64n64w8s2ws --json $r/news2_fast_1.jsonl > $r/news2_fast_1.log 2>&1 || tail -3 $r/news2_fast_1.log
python3 - $r <<'PY'
import json, sys, glob, collections, statistics
r = sys.argv[1]
v = collections.defaultdict(list); cfg = {}
for f in sorted(glob.glob(r + "/*_*_?.jsonl")):
    ver, m, rd = f.split("/")[-1][:-6].split("_")
    for line in open(f):
        o = json.loads(line)
        if "name" in o: v[(o["name"], m, ver)].append(round(o.get("bwd_tflops", 0), 1)); cfg[(o["name"], m, ver)] = o.get("bwd_configs")
for m in ("fast", "deterministic"):
    for n in sorted({k[0] for k in v}):
        a, b, c = v[(n, m, "old")], v[(n, m, "new")], v[(n, m, "news2")]
        if a and b: print(f"{m:13s} {n:22s} old {a} new {b} x{statistics.median(b)/max(statistics.median(a),1e-9):.3f} {cfg[(n,m,'new')]}" + (f" | s2 {c} x{statistics.median(c)/statistics.median(a):.3f}" if c else ""))
PY
echo "all $(( $(date +%s) - t0 )) s"
save
