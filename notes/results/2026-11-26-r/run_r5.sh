#!/usr/bin/env bash
# Session (r) r5: the landing build (the tile slot read by lane 0 and handed to its warp with a
# shuffle; the cross-tile S(0) of r1-r4 not kept). compute-sanitizer racecheck, synccheck and
# memcheck on one ws forward per head dim, racecheck on the ordered backward's test (whose
# forward is the persistent ws kernel); a short A/B against 47c817e (prev), two interleaved
# rounds; then every forward GPU test.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/r5}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_CACHE_DIR=/tmp/fc_t
for tool in racecheck synccheck memcheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedOnePerHeadDim' > $r/san_$tool.txt 2>&1; echo "fwd $tool rc=$? $(( $(date +%s) - t0 )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$tool.txt | tr '\n' ' ')"
done
timeout 90 compute-sanitizer --tool racecheck ./gpu_test_attention --gtest_filter='BwdGpu.OrderedModeOnePerHeadDim' > $r/san_bwd_racecheck.txt 2>&1; echo "ordered bwd racecheck rc=$? $(( $(date +%s) - t0 )) s: $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED' $r/san_bwd_racecheck.txt | tr '\n' ' ')"
grep -E "Race reported|Potential" $r/san_bwd_racecheck.txt | sed 's/flexjit_[a-z_]*+0x[0-9a-f]*//g' | sort | uniq -c | head -8
V="prev new"
for round in 1 2; do
  for v in $V; do
    bin=./flexjit; [ $v = prev ] && bin=./flexjit_prev
    export FLEXJIT_CACHE_DIR=/tmp/fc_$v
    f=$r/${v}_$round.jsonl
    timeout 100 $bin bench --suite suite.json --only noop_d128,causal_d128,sliding_window_d128,document_causal_d128,prefix_lm_d128,gqa_causal_d128 --no-bwd --json $f.a > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    timeout 60 $bin bench --suite suite256x.json --only causal_d256 --no-bwd --json $f.b >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    timeout 60 $bin bench --suite suite64x.json --only causal_d64 --no-bwd --json $f.c >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    cat $f.a $f.b $f.c > $f
  done
  echo "round $round $(( $(date +%s) - t0 )) s"
done
python3 - $r "$V" <<'PY' | tee $r/summary.txt
import json, sys
d = sys.argv[1]; V = sys.argv[2].split()
def load(f):
    out = {}
    try:
        for l in open(f):
            try: j = json.loads(l)
            except Exception: continue
            if "name" in j: out[j["name"]] = j
    except FileNotFoundError: pass
    return out
runs = {v: [load(f"{d}/{v}_{i}.jsonl") for i in (1, 2)] for v in V}
for n in runs["prev"][0]:
    a = [x.get(n, {}).get("fwd_tflops") or 0 for x in runs["prev"]]; b = [x.get(n, {}).get("fwd_tflops") or 0 for x in runs["new"]]
    print(f"{n:30} prev {a[0]:5.0f}/{a[1]:<5.0f} new {b[0]:5.0f}/{b[1]:<5.0f} x {sum(b)/max(sum(a),1):.3f}  {runs['new'][0].get(n,{}).get('fwd_config','')}")
PY
export FLEXJIT_CACHE_DIR=/tmp/fc_t
left=$(( 585 - ($(date +%s) - t0) ))
timeout $(( left > 10 ? left : 5 )) ./gpu_test_attention --gtest_filter='FwdGpu.*:Configs/NanGpu.Forward*:NegativeScaleGpu.*' > $r/t.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t.txt | tr '\n' ' ')"
grep -B2 -A8 Failure $r/t.txt | head -40
echo "passed: $(grep -cE '^\[ +OK ' $r/t.txt); failed: $(grep -E '^\[ +FAILED ' $r/t.txt | awk '{print $4}' | tr '\n' ' '); last started: $(grep -E '^\[ RUN' $r/t.txt | tail -1)"
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
