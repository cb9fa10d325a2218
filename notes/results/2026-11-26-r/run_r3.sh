#!/usr/bin/env bash
# Session (r) r3: A/B of the forward, 47c817e (prev) against the producer that publishes the next
# work tile right after this one's last load (new; the cross-tile S(0) of r1/r2 dropped), two
# interleaved rounds, forward only; the walk tests first, then the forward GPU tests and
# compute-sanitizer racecheck, synccheck and memcheck on one ws forward per head dim.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/r3}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_CACHE_DIR=/tmp/fc_t
timeout 60 ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedEmptyAndOneKeyTileWalks:FwdGpu.WarpSpecializedManyTilesPerCta' > $r/t0.txt 2>&1; echo "walk tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t0.txt | tr '\n' ' ')"
grep -B2 -A8 Failure $r/t0.txt | head -30
V="prev new"
for round in 1 2; do
  for v in $V; do
    bin=./flexjit; [ $v = prev ] && bin=./flexjit_prev
    export FLEXJIT_CACHE_DIR=/tmp/fc_$v
    f=$r/${v}_$round.jsonl
    timeout 150 $bin bench --suite suite.json --only noop_d128,causal_d128,noop_d64,causal_d64,causal_d256,sliding_window_d128,document_causal_d128,document_nested_causal_d128,prefix_lm_d128,alibi_causal_d128,softcap_causal_d128,gqa_causal_d128,long_causal_d128,long_document_causal_d128,long_sliding_window_d128 --no-bwd --json $f.a > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    timeout 90 $bin bench --suite suite256x.json --no-bwd --json $f.b >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    timeout 90 $bin bench --suite suite64x.json --only gqa_causal_d64,sliding_window_d64,document_causal_d64,alibi_causal_d64,softcap_causal_d64,prefix_lm_d64 --no-bwd --json $f.c >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
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
for tool in racecheck synccheck memcheck; do
  left=$(( 470 - ($(date +%s) - t0) )); [ $left -gt 15 ] || { echo "$tool skipped: out of time"; continue; }
  timeout $(( left > 60 ? 60 : left )) compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedOnePerHeadDim' > $r/san_$tool.txt 2>&1; echo "$tool rc=$? $(( $(date +%s) - t0 )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$tool.txt | tr '\n' ' ')"
done
left=$(( 580 - ($(date +%s) - t0) ))
timeout $(( left > 200 ? 200 : (left > 10 ? left - 5 : 5) )) ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecialized*:FwdGpu.SuiteMods:Configs/NanGpu.Forward*:FwdGpu.WideWarpSpecializedOnePerShape:FwdGpu.WideWarpSpecializedModsN176:FwdGpu.WideWarpSpecializedModsM192:-FwdGpu.WarpSpecializedEmptyAndOneKeyTileWalks:FwdGpu.WarpSpecializedManyTilesPerCta' > $r/t.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t.txt | tr '\n' ' ')"
grep -B2 -A8 Failure $r/t.txt | head -40
grep -E "^\[ +(OK|FAILED) " $r/t.txt | awk "{print \$1,\$2,\$4}" | tr "\n" " "; echo
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
