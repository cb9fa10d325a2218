#!/usr/bin/env bash
# (zzzf) Builds .gpu/zzzf for run_zzzf_next.sh: flexjit_main = main's flexjit; flexjit and gta =
# branch bwd-score-diagonals-zzzf (patches/ on 32332ca: zzze's B and B1, the forward's diagonal
# window fix for tiles wholly past the keys' end, the README, the ragged-lengths test). From the
# repository root of a clean checkout with build/ set up (scripts/setup.sh); returns to the branch
# it found. About 12 minutes on two cores.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
test -z "$(git status --porcelain --untracked-files=no)" || { echo "commit or stash first" >&2; exit 2; }
export PATH=/usr/local/cuda/bin:$PATH
here=notes/results/2026-12-05-zzzf; d=.gpu/zzzf; br=bwd-score-diagonals-zzzf
back=$(git rev-parse --abbrev-ref HEAD)
if ! git rev-parse -q --verify $br > /dev/null; then
  tmp=$(mktemp -d); cp $here/patches/*.patch "$tmp"/
  git checkout -q -b $br 32332ca
  git am -q "$tmp"/*.patch
  git checkout -q "$back"; rm -rf "$tmp"
fi
rm -rf $d; mkdir -p $d
cp $here/run_zzzf_next.sh $here/run_zzzf_c.sh notes/results/2026-12-05-zzzd/run_zzzd_d.sh notes/results/2026-12-04-zzv/ab2.sh ../shared/bench/suite.json \
   ../shared/bench/peers.py notes/results/2026-12-05-zzzd/diagonal_tables.json $d/
git checkout -q main && ninja -C build flexjit > /dev/null && strip -o $d/flexjit_main build/flexjit
git checkout -q $br && ninja -C build > /dev/null
strip -o $d/flexjit build/flexjit; strip -o $d/gta build/tests/gpu_test_attention
git checkout -q "$back"
du -sh $d
