#!/usr/bin/env bash
# (zzzb) Builds .gpu/zzzb for run_zzzb_sc.sh: main's flexjit, the branch score-column-values'
# flexjit (flexjit_SC) and GPU tests (gta_SC), the bias tables, the suite, peers.py and ab2.sh.
# Run from the repository root on a clean checkout; it recreates the branch from patches_SC/ (on
# main at BASE below) where the checkout lacks it, checks it out to build, and returns.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
test -z "$(git status --porcelain --untracked-files=no)" || { echo "commit or stash first" >&2; exit 2; }
export PATH=/usr/local/cuda/bin:$PATH
d=.gpu/zzzb; here=notes/results/2026-12-05-zzzb
test -f build/build.ninja || { echo "no build/: run scripts/setup.sh first" >&2; exit 2; }
back=$(git rev-parse --abbrev-ref HEAD)
if ! git rev-parse -q --verify score-column-values > /dev/null; then
  # (The patches are copied out first: the base commit predates them.)
  tmp=$(mktemp -d); cp $here/patches_SC/* "$tmp"/
  git checkout -q -b score-column-values "$(cat "$tmp"/BASE)"
  git am -q "$tmp"/*.patch
  git checkout -q "$back"; rm -rf "$tmp"
fi
rm -rf $d; mkdir -p $d
git checkout -q score-column-values
ninja -C build > /dev/null
strip -o $d/flexjit_SC build/flexjit
strip -o $d/gta_SC build/tests/gpu_test_attention
git checkout -q main
ninja -C build > /dev/null
strip -o $d/flexjit build/flexjit
git checkout -q "$back"
ninja -C build > /dev/null
cp notes/results/2026-12-04-zzv/ab2.sh ../shared/bench/peers.py ../shared/bench/suite.json \
   notes/results/2026-12-05-zzza/bias_tables.json $here/run_zzzb_sc.sh $d/
du -sh $d
