#!/usr/bin/env bash
# Session (zb) zb5: where a dK/dV CTA's time goes, from globaltimer stamps (measurement-only
# template variant `ts`: consumer thread 0 stamps entry, K/V landed, tile 0's Q landed, the top of
# tiles 1 and n-1, the loop's end, the drain and the epilogue's end, written over dV's first row).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zb5}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_zb5
t0=$(date +%s)
mk() { python3 - "$@" <<'PY'
import sys, numpy as np
B, H, S, D, d = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
import os; os.makedirs(d, exist_ok=True)
rng = np.random.default_rng(1)
for n in ("q", "k", "v", "do"): np.save(f"{d}/{n}.npy", rng.standard_normal((B, H, S, D), dtype=np.float32))
PY
}
mk 4 16 4096 128 /tmp/in4k; mk 16 16 1024 128 /tmp/in1k; echo "inputs $(( $(date +%s) - t0 )) s"
./flexjit_base bench --suite suite.json --only noop_d128 > /dev/null 2>&1  # warm the GPU
for c in "noop4k /tmp/in4k" "causal4k /tmp/in4k q_idx>=kv_idx" "noop1k /tmp/in1k"; do
  set -- $c
  name=$1; in=$2; mask=${3:-}
  margs=(); [ -n "$mask" ] && margs=(--mask "$mask")
  FLEXJIT_TEMPLATE_DIR=$PWD/ts timeout 120 ./flexjit run --q $in/q.npy --k $in/k.npy --v $in/v.npy --do $in/do.npy "${margs[@]}" --out /tmp/o_$name > $r/run_$name.log 2>&1 || tail -3 $r/run_$name.log
  echo "== $name $(( $(date +%s) - t0 )) s"; python3 ts_decode.py /tmp/o_$name/dv.npy | tee $r/ts_$name.txt
done
cd $out && tar czf zb5.tar.gz r && rm -rf r
