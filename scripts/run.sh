#!/usr/bin/env bash
# The main job: set up and build, then compile, run and check the built-in kernel and a causal +
# ALiBi attention (on the GPU when there is one; otherwise emit the kernels and run the float64
# CPU reference, saying that no GPU was found).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
build/flexjit selftest --out build/selftest
