#!/usr/bin/env bash
# (zzzd) Builds .gpu/zzzd3 for run_zzzd_e.sh: flexjit_main = main's flexjit, flexjit and gta = the
# branch score-diagonal-values's, the tables, the suite and ab2.sh. From the repository root on a
# clean checkout with build/ set up (scripts/setup.sh); returns to the branch it found.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
test -z "$(git status --porcelain --untracked-files=no)" || { echo "commit or stash first" >&2; exit 2; }
export PATH=/usr/local/cuda/bin:$PATH
here=notes/results/2026-12-05-zzzd; d=.gpu/zzzd3
back=$(git rev-parse --abbrev-ref HEAD)
# The branch where this checkout lacks it: its commits are patches_D/ (on main at 2b72b26).
if ! git rev-parse -q --verify score-diagonal-values > /dev/null; then
  tmp=$(mktemp -d); cp $here/patches_D/*.patch "$tmp"/
  git checkout -q -b score-diagonal-values 2b72b26
  git am -q "$tmp"/*.patch
  git checkout -q "$back"; rm -rf "$tmp"
fi
rm -rf $d; mkdir -p $d
git checkout -q main && ninja -C build > /dev/null && strip -o $d/flexjit_main build/flexjit
git checkout -q score-diagonal-values && ninja -C build > /dev/null
strip -o $d/flexjit build/flexjit; strip -o $d/gta build/tests/gpu_test_attention
git checkout -q "$back"
cp notes/results/2026-12-04-zzv/ab2.sh ../shared/bench/suite.json $here/diagonal_tables.json $here/run_zzzd_e.sh $d/
du -sh $d
