#!/usr/bin/env bash
# (zzy) Builds .gpu/zzy, the folder run_zzy_a.sh and run_zzy_b.sh run in, from the repository:
# main's build (flexjit), the branch lazy-every-warpgroup-count's GPU tests (gta), the template
# arms, the suites and the scripts. Run from the repository root on a clean main; it checks the
# branch out to build it and returns to main. Then: scripts/fa4_prepare.sh if .fa4a / .fa4b are
# missing, and the three device calls (README.md here).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
test -z "$(git status --porcelain --untracked-files=no)" || { echo "commit or stash first" >&2; exit 2; }
export PATH=/usr/local/cuda/bin:$PATH
d=.gpu/zzy; here=notes/results/2026-12-05-zzy
test -f build/build.ninja || { echo "no build/: run scripts/setup.sh first" >&2; exit 2; }
# The branch where this checkout lacks it: its commits landed on main as f557e9d..dc7e829 in
# (zzz), on notes-only commits over d83566b, so dc7e829 holds the branch's code.
if ! git rev-parse -q --verify lazy-every-warpgroup-count > /dev/null; then
  git branch lazy-every-warpgroup-count dc7e829
fi
rm -rf $d; mkdir -p $d/tvW $d/tvW2 $d/tv_pre $d/tvS
git checkout -q lazy-every-warpgroup-count
ninja -C build > /dev/null
strip -o $d/gta build/tests/gpu_test_attention
git checkout -q main
ninja -C build > /dev/null
strip -o $d/flexjit build/flexjit
git archive lazy-every-warpgroup-count templates | tar x -C $d/tvW
git archive lazy-every-warpgroup-count templates | tar x -C $d/tvW2
sed -i 's/(CONSUMER_WARPGROUPS != 3 || !HAS_MASK);/(CONSUMER_WARPGROUPS != 3 || !TILE_BOUNDS_WALK);/' $d/tvW2/templates/attention_fwd_ws.cu.j2
grep -q '!TILE_BOUNDS_WALK);' $d/tvW2/templates/attention_fwd_ws.cu.j2
git archive 16cf7fd templates | tar x -C $d/tv_pre
git archive main templates | tar x -C $d/tvS
(cd $d/tvS && patch -s -p1 < ../../../notes/results/2026-12-04-zzx/arm_S_lazy_synchronous_forward.patch)
cp notes/results/2026-12-04-zzv/ab2.sh ../shared/bench/peers.py ../shared/bench/suite.json \
   notes/results/2026-12-04-zzx/d256.json notes/results/2026-12-04-zzx/wide_and_short.json \
   $here/d64_masks.json $here/run_zzy_a.sh $here/run_zzy_b.sh $d/
du -sh $d
