#!/usr/bin/env bash
# Every test: set up and build, run all tests (GPU tests skip with a reason when no GPU is present),
# install the Python package and run its tests,
# then rebuild with AddressSanitizer + UndefinedBehaviorSanitizer and run the CPU tests again.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
scripts/setup.sh build
(cd build && ctest --output-on-failure -j "$jobs" --timeout 900)
# The Python package, installed as the README says (bundling build/libflexjit.so) into a virtual
# environment over Debian's python3 (numpy and pytest from python3-numpy / python3-pytest), then
# its tests; the GPU ones skip with the reason without PyTorch or a CUDA device.
python=/usr/bin/python3
[ -x "$python" ] || python=python3
"$python" -m venv --system-site-packages build/python-venv
FLEXJIT_LIBRARY="$PWD/build/libflexjit.so" build/python-venv/bin/pip install --quiet --no-build-isolation --no-deps \
  --force-reinstall ./python
(cd build && FLEXJIT_CACHE_DIR="$PWD/test-cache-python" python-venv/bin/python -m pytest -q -rs ../python/tests)
FLEXJIT_BUILD_TYPE=Debug scripts/setup.sh build-asan -DFLEXJIT_SANITIZE=ON -DFLEXJIT_BUILD_EXAMPLES=OFF
(cd build-asan && ctest --output-on-failure -j "$jobs" --timeout 1800 -L cpu)
