#!/usr/bin/env bash
# Every test: set up and build, run all tests (GPU tests skip with a reason when no GPU is present),
# then rebuild with AddressSanitizer + UndefinedBehaviorSanitizer and run the CPU tests again.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
scripts/setup.sh build
(cd build && ctest --output-on-failure -j "$jobs" --timeout 900)
FLEXJIT_BUILD_TYPE=Debug scripts/setup.sh build-asan -DFLEXJIT_SANITIZE=ON -DFLEXJIT_BUILD_EXAMPLES=OFF
(cd build-asan && ctest --output-on-failure -j "$jobs" --timeout 1800 -L cpu)
