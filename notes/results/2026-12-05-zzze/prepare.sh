#!/usr/bin/env bash
# (zzze) Builds .gpu/zzze for run_zzze_a.sh and run_zzze_b.sh: flexjit_main = main's flexjit,
# flexjit and gta = branch bwd-score-diagonals's (B), flexjit_b1 = branch
# bwd-score-diagonals-d128-one-dq-buffer's (B1), the tables, the suite and ab2.sh. From the
# repository root on a clean checkout with build/ set up (scripts/setup.sh); returns to the
# branch it found. About 12 minutes on two cores.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
test -z "$(git status --porcelain --untracked-files=no)" || { echo "commit or stash first" >&2; exit 2; }
export PATH=/usr/local/cuda/bin:$PATH
here=notes/results/2026-12-05-zzze; d=.gpu/zzze
back=$(git rev-parse --abbrev-ref HEAD)
# The branches where this checkout lacks them: patches_B/ apply on 32332ca, main before these
# notes (the forward's diagonal values, four commits of (zzzd), and the backward's); patch_B1/ on B.
if ! git rev-parse -q --verify bwd-score-diagonals > /dev/null; then
  tmp=$(mktemp -d); cp $here/patches_B/*.patch "$tmp"/
  git checkout -q -b bwd-score-diagonals 32332ca
  git am -q "$tmp"/*.patch
  git checkout -q "$back"; rm -rf "$tmp"
fi
if ! git rev-parse -q --verify bwd-score-diagonals-d128-one-dq-buffer > /dev/null; then
  tmp=$(mktemp -d); cp $here/patch_B1/*.patch "$tmp"/
  git checkout -q -b bwd-score-diagonals-d128-one-dq-buffer bwd-score-diagonals
  git am -q "$tmp"/*.patch
  git checkout -q "$back"; rm -rf "$tmp"
fi
rm -rf $d; mkdir -p $d
git checkout -q main && ninja -C build flexjit > /dev/null && strip -o $d/flexjit_main build/flexjit
git checkout -q bwd-score-diagonals-d128-one-dq-buffer && ninja -C build flexjit > /dev/null && strip -o $d/flexjit_b1 build/flexjit
git checkout -q bwd-score-diagonals && ninja -C build > /dev/null
strip -o $d/flexjit build/flexjit; strip -o $d/gta build/tests/gpu_test_attention
git checkout -q "$back"
cp notes/results/2026-12-04-zzv/ab2.sh ../shared/bench/suite.json notes/results/2026-12-05-zzzd/diagonal_tables.json \
   $here/diagonal_tables_bwd.json $here/run_zzze_a.sh $here/run_zzze_b.sh $d/
du -sh $d
