#!/usr/bin/env bash
# (zzzg) Builds .gpu/zzzf for run_zzzg_3.sh (and run_zzzf_c.sh): (zzzf)'s prepare.sh (main's
# flexjit, branch bwd-score-diagonals-zzzf's flexjit and gta), then branch g =
# fwd-diagonals-with-mask-columns (patches_g/ on bwd-score-diagonals-zzzf: the forward's diagonal
# values beside a mask's column values) as flexjit_g, and branch g2 = fwd-diagonals-staged-under-s
# (patches_g2/ on g: the values staged between S's issue and its wait) as flexjit_g2 and gta_g2.
# From the repository root of a clean checkout with build/ set up (scripts/setup.sh); returns to
# the branch it found. About 25 minutes on two cores.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
here=notes/results/2026-12-06-zzzg; d=.gpu/zzzf; br=fwd-diagonals-with-mask-columns
bash notes/results/2026-12-05-zzzf/prepare.sh
back=$(git rev-parse --abbrev-ref HEAD)
# Branch $1 from the patches in folder $2, on branch $3, where it does not exist yet.
branch_from_patches() {
  git rev-parse -q --verify "$1" > /dev/null && return 0
  local tmp; tmp=$(mktemp -d); cp "$2"/*.patch "$tmp"/
  git checkout -q -b "$1" "$3"
  git am -q "$tmp"/*.patch
  git checkout -q "$back"; rm -rf "$tmp"
}
br2=fwd-diagonals-staged-under-s
branch_from_patches $br $here/patches_g bwd-score-diagonals-zzzf
branch_from_patches $br2 $here/patches_g2 $br
git checkout -q $br && ninja -C build > /dev/null
strip -o $d/flexjit_g build/flexjit
git checkout -q $br2 && ninja -C build > /dev/null
strip -o $d/flexjit_g2 build/flexjit; strip -o $d/gta_g2 build/tests/gpu_test_attention
git checkout -q "$back"
cp $here/run_zzzg_3.sh $here/run_zzzg_ncu.sh $here/document_diagonal_tables.json \
   notes/results/2026-12-05-zzze/diagonal_tables_bwd.json $d/
du -sh $d
