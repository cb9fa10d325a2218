#!/usr/bin/env bash
# Issue 13: the ws dK/dV kernel with mask_mod verdicts computed a tile ahead (keep bits; new)
# (new) against the previous commit (old): BwdGpu tests and memcheck of the ws kernel, then an A/B, two rounds.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/b10}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
for i in $(seq 0 15); do
  GTEST_TOTAL_SHARDS=16 GTEST_SHARD_INDEX=$i timeout 300 ./gpu_test_attention --gtest_filter='BwdGpu.*' > /tmp/t.$i.log 2>&1 &
done
wait
cat /tmp/t.*.log > $r/tests.txt
echo "tests $(( $(date +%s) - t0 )) s: $(grep -c '^\[       OK' $r/tests.txt) ok, $(grep -c '^\[  FAILED  \]' $r/tests.txt) failed lines"
grep -B3 -A6 "Failure" $r/tests.txt | head -20
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 5 ./gpu_test_attention --gtest_filter=BwdGpu.WarpSpecializedFastDkdv > $r/memcheck.txt 2>&1; echo "memcheck rc=$?: $(grep -E 'ERROR SUMMARY' $r/memcheck.txt)"
train=document_causal_d128,document_nested_causal_d128,long_document_causal_d128,causal_d128,sliding_window_d128,softcap_causal_d128,alibi_causal_d128,gqa_causal_d128,causal_d64,noop_d128
for k in 1 2; do
  timeout 100 ./flexjit_old bench --suite suite.json --only "$train" --json $r/old_$k.jsonl > $r/b.log 2>&1 || { echo "old failed"; tail -3 $r/b.log; }
  timeout 100 ./flexjit bench --suite suite.json --only "$train" --json $r/new_$k.jsonl > $r/b.log 2>&1 || { echo "new failed"; tail -3 $r/b.log; }
  echo "round $k $(( $(date +%s) - t0 )) s"
done
python3 - $r <<'PY' | tee $r/ab.txt
import json, sys, glob, os, collections
d = sys.argv[1]
res = collections.defaultdict(lambda: collections.defaultdict(list))
cs = []
for f in sorted(glob.glob(d + "/*_[12].jsonl")):
    c = os.path.basename(f)[:-8]
    if c not in cs: cs.append(c)
    for j in map(json.loads, open(f)):
        if "name" in j: res[j["name"]][c].append(j.get("bwd_tflops", 0))
print(f"{'problem (bwd TF/s)':28} " + " ".join(f"{c[:13]:>13}" for c in cs))
for n, m in res.items():
    print(f"{n:28} " + " ".join(f"{'/'.join(f'{x:.0f}' for x in m[c]) if c in m else '-':>13}" for c in cs))
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
