#!/usr/bin/env bash
# (zzzc) Builds .gpu/zzzc for run_zzzc.sh: this checkout's flexjit (arm SD: score column values
# with log2(e) distributed) and GPU tests, beside flexjit_SC (the merge 1260611: score column
# values without the distribution), built from a worktree at that commit.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
export PATH=/usr/local/cuda/bin:$PATH
d=.gpu/zzzc; here=notes/results/2026-12-05-zzzc
test -f build/build.ninja || { echo "no build/: run scripts/setup.sh first" >&2; exit 2; }
rm -rf $d; mkdir -p $d
ninja -C build > /dev/null
strip -o $d/flexjit build/flexjit
strip -o $d/gta build/tests/gpu_test_attention
if [ -x .gpu/zzzb/flexjit_SC ]; then cp .gpu/zzzb/flexjit_SC $d/flexjit_SC
else
  wt=$(mktemp -d); git worktree add -q "$wt" 1260611
  cmake -S "$wt" -B "$wt/build" -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null && ninja -C "$wt/build" flexjit > /dev/null
  strip -o $d/flexjit_SC "$wt/build/flexjit"; git worktree remove --force "$wt"
fi
cp notes/results/2026-12-04-zzv/ab2.sh ../shared/bench/peers.py ../shared/bench/suite.json \
   notes/results/2026-12-05-zzza/bias_tables.json $here/run_zzzc.sh $d/
du -sh $d
