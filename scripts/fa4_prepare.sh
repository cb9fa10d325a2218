#!/usr/bin/env bash
# Prepares FA4 and FlexAttention's FLASH backend for the GPU machine (../shared/bench/fa4/README.md)
# in two ignored folders, .fa4a and .fa4b, that each fit one device call's 64 MiB carry beside this
# repository's tracked files. The shared prepare.sh puts 57 MB in .fa4a, which with this repository
# (8.5 MB tracked in session (ze)) was refused; two of its wheels travel in .fa4b instead, whose
# install.sh installs the wheels of both folders.
#   scripts/fa4_prepare.sh [SHARED_BENCH_DIR]   (default: ../shared/bench)
set -euo pipefail
cd "$(dirname "$0")/.."
bench=${1:-../shared/bench}
test -f "$bench/fa4/prepare.sh" || { echo "no $bench/fa4/prepare.sh: pass the shared bench folder" >&2; exit 2; }
exclude=.git/info/exclude
mkdir -p .git/info
for d in /.fa4a/ /.fa4b/; do grep -qxF "$d" "$exclude" 2>/dev/null || echo "$d" >> "$exclude"; done
rm -rf .fa4a .fa4b
bash "$bench/fa4/prepare.sh" .
mv .fa4a/apache_tvm_ffi-*.whl .fa4a/nvidia_cutlass_dsl_libs_base-*.whl .fa4b/
tracked=$(git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1)
for d in .fa4a .fa4b; do
  size=$(du -sb "$d" | cut -f1)
  echo "$d: $(( size / 1048576 )) MiB, with the tracked files $(( (size + tracked) / 1048576 )) MiB of the 64 MiB carry"
done
echo "then, in ONE tool batch: a run carrying .fa4a that copies it to /tmp/fa4a, and a run carrying .fa4b (and your"
echo "build) that runs 'bash .fa4b/install.sh' and peers.py --flash with"
echo "PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages"
