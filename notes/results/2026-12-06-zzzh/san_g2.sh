#!/bin/bash
# compute-sanitizer memcheck on g2's forward: diagonal values (per-head relative table) beside a
# document mask's column values, odd length, d128 and d64, checked against the CPU reference.
set -u
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
python3 - <<'PY'
import numpy as np
rng = np.random.default_rng(7)
for d in (64, 128):
    for n in ("q", "k", "v"): np.save(f"/tmp/s{n}{d}.npy", rng.standard_normal((2, 3, 333, d)).astype(np.float32))
np.save("/tmp/srelh.npy", rng.standard_normal((3, 1024)).astype(np.float32))
np.save("/tmp/sdoc.npy", np.repeat(np.arange(5), [70, 1, 130, 99, 33]).astype(np.int32))
PY
for d in 64 128; do
FLEXJIT_CACHE_DIR=/tmp/fcs_$d timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --kernel-name kns=attention_ \
  ./flexjit_g2 run --q /tmp/sq$d.npy --k /tmp/sk$d.npy --v /tmp/sv$d.npy --buffer relh=/tmp/srelh.npy --buffer doc=/tmp/sdoc.npy \
  --score "score + relh[h][kv_idx - q_idx + 400]" --mask "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx" --check --out /tmp/sso$d > ${OUT:-/tmp}/san_g2_d$d.txt 2>&1
echo "san g2 d$d rc=$? $(grep -h 'ERROR SUMMARY\|relative error\|out of bounds\|error' ${OUT:-/tmp}/san_g2_d$d.txt | tr '\n' ' ')"
done
