#!/usr/bin/env bash
# (zt) call 6: the Python package's per-sequence lengths (flexjit.attention q_lens / kv_lens) on
# the GPU: python/tests/test_gpu_lens.py with PyTorch, against the float64 reference.
# Stage in .gpu/<s>/: libflexjit.so (strip -o), python/ (the package and its tests), this script.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zt6}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_LIBRARY=$PWD/libflexjit.so FLEXJIT_CACHE_DIR=/tmp/fpy
t0=$(date +%s)
python3 -c "import pytest" 2>/dev/null || python3 -m pip install -q --no-index --find-links $PWD/wheels pytest > $out/pip.txt 2>&1
cd python
if python3 -c "import pytest" 2>/dev/null; then
  PYTHONPATH=$PWD timeout 240 python3 -m pytest -q -rs tests/test_gpu_lens.py 2>&1 | tail -25
else
  PYTHONPATH=$PWD timeout 240 python3 - <<'PY'
import itertools, traceback, sys
sys.path.insert(0, "tests")
import test_gpu_lens as t
failed = 0
for d, m in itertools.product([64, 128, 256], [None, t.CAUSAL]):
    try:
        t.test_ragged_forward_and_backward_match_the_reference(d, m); print("PASSED", d, m)
    except Exception:
        failed += 1; print("FAILED", d, m); traceback.print_exc()
print(f"{failed} failed")
PY
fi
echo "total $(( $(date +%s) - t0 )) s"
