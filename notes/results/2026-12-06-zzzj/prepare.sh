#!/usr/bin/env bash
# (zzzj) Builds .gpu/zzzk: the branch's flexjit and gpu_test_attention, main's flexjit (from
# .gpu/zzzj, built by ../2026-12-06-zzzi/next/prepare.sh on main), the suites and scripts.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
here=notes/results/2026-12-06-zzzj; d=.gpu/zzzk
rm -rf $d && mkdir -p $d
ninja -C build > /dev/null
strip -o $d/flexjit build/flexjit; strip -o $d/gta build/tests/gpu_test_attention
cp .gpu/zzzj/flexjit $d/flexjit_main
cp $here/run_zzzj_*.sh $here/table_ab.json ../shared/bench/suite.json $d/
cp notes/results/2026-12-04-zzv/ab2.sh $d/
ls $d
