#!/usr/bin/env bash
# Session (t) t5: the three FwdGpu tests t4's timeout cut off; then noop d64 (the default is the
# synchronous 'g' kernel) on the ws kernels now that they hold Q in registers at d64, three rounds.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/t5}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_CACHE_DIR=/tmp/fct5
timeout 150 ./gpu_test_attention --gtest_filter='FwdGpu.WideWarpSpecializedModsN176:FwdGpu.WideWarpSpecializedRejectsABlockMask:FwdGpu.WideWarpSpecializedOnePerShape' > $r/t_fwd.txt 2>&1; echo "rest of FwdGpu rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t_fwd.txt | tr '\n' ' ')"
C="m128n128w8s2g m128n128w8s2ws m128n128w8s3ws m192n128w12s2ws m128n176w8s2ws"
for round in 1 2 3; do
  for c in $C; do
    timeout 40 ./flexjit bench --suite suite64x.json --only noop_d64,causal_d64 --config $c --no-bwd --json $r/${c}_$round.jsonl > $r/${c}_$round.log 2>&1 || tail -2 $r/${c}_$round.log
  done
done
python3 - $r "$C" <<'PY' | tee $r/summary.txt
import json, sys
d = sys.argv[1]; C = sys.argv[2].split()
for c in C:
    vals = {}
    for i in (1, 2, 3):
        try:
            for l in open(f"{d}/{c}_{i}.jsonl"):
                j = json.loads(l)
                if "name" in j: vals.setdefault(j["name"], []).append(j.get("fwd_tflops") or 0)
        except FileNotFoundError: pass
    print(f"{c:18} " + "  ".join(f"{n} " + "/".join(f"{v:.0f}" for v in x) for n, x in vals.items()))
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
