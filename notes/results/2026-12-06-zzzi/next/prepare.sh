#!/usr/bin/env bash
# (zzzi) Builds .gpu/zzzj for run_zzzi_next.sh: main's flexjit and gpu_test_attention (stripped),
# the tables and scripts. From the repository root of a clean checkout of main with build/ set up.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
here=notes/results/2026-12-06-zzzi; d=.gpu/zzzj
rm -rf $d && mkdir -p $d
ninja -C build > /dev/null
strip -o $d/flexjit build/flexjit; strip -o $d/gta build/tests/gpu_test_attention
cp $here/next/run_zzzi_next.sh $here/next/d64_tables.json ../shared/bench/suite.json $d/
cp notes/results/2026-12-04-zzv/ab2.sh $d/
ls $d
