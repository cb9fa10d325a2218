#!/usr/bin/env bash
# Session (m) m2: the warp-specialised forward with the next work tile's Q in a second buffer.
# Old (HEAD aa2bb4e, flexjit_old) against new (flexjit) binaries, forward only, two interleaved
# rounds; then the forward GPU tests on the new one and compute-sanitizer on the many-tiles test.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/m2}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
fwd=noop_d128,causal_d128,causal_d64,gqa_causal_d128,long_causal_d128,causal_d256,sliding_window_d128,document_causal_d128,prefix_lm_d128,alibi_causal_d128,softcap_causal_d128,long_document_causal_d128,document_nested_causal_d128
for k in 1 2; do
  for v in old new; do
    bin=./flexjit; [ $v = old ] && bin=./flexjit_old
    timeout 90 $bin bench --suite suite.json --only "$fwd" --no-bwd --json $r/b_${v}_$k.jsonl > /dev/null 2>$r/err_$v.txt || { echo "$v failed"; tail -3 $r/err_$v.txt; }
  done
  echo "round $k $(( $(date +%s) - t0 )) s"
done
python3 - $r <<'PY' | tee $r/ab.txt
import json, sys, glob, os, collections
d = sys.argv[1]
res = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(d + "/b_*.jsonl")):
    v, k = os.path.basename(f)[2:-6].rsplit("_", 1)
    for j in map(json.loads, open(f)):
        if "name" in j: res[j["name"]][v].append(j.get("fwd_tflops", 0))
for n, m in res.items():
    o, w = sum(m["old"]) / max(len(m["old"]), 1), sum(m["new"]) / max(len(m["new"]), 1)
    print(f"{n:30} old " + "/".join(f"{x:.0f}" for x in m["old"]) + "  new " + "/".join(f"{x:.0f}" for x in m["new"]) + f"  x{w / max(o, 1):.3f}")
PY
timeout 200 ./gpu_test_attention --gtest_filter='FwdGpu.*:NegativeScaleGpu.*:Configs/NanGpu.*' > $r/t.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t.txt | tr '\n' ' ')"
grep -A6 Failure $r/t.txt | head -30
for tool in memcheck synccheck; do timeout 100 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedManyTilesPerCta:FwdGpu.WarpSpecializedOnePerHeadDim' > $r/san_$tool.log 2>&1; echo "$tool rc=$?: $(grep -E "ERROR SUMMARY" $r/san_$tool.log | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; done
timeout 100 compute-sanitizer --tool racecheck ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedOnePerHeadDim' > $r/san_racecheck.log 2>&1; echo "racecheck rc=$?: $(grep -E "RACECHECK SUMMARY|ERROR SUMMARY" $r/san_racecheck.log | tr '\n' ' ')"
grep -A1 "Error: Race" $r/san_racecheck.log | grep -v "^--" | sed "s/+0x[0-9a-f]*//" | sort | uniq -c | head
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
