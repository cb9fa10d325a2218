#!/usr/bin/env bash
# (zzzh) Rebuilds .gpu/zzzh for run_zzzh_next.sh where it is missing: main's flexjit and
# gpu_test_attention (stripped), arm RA128's templates (branch fwd-diagonals-read-ahead-d128, one
# line off main's) as tmpl_ra, the scripts and tables. From the repository root of a clean checkout
# of main with build/ set up (scripts/setup.sh); a few minutes on two cores.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
here=notes/results/2026-12-06-zzzh; d=.gpu/zzzh; z=notes/results/2026-12-05-zzzf
rm -rf $d && mkdir -p $d
ninja -C build > /dev/null
strip -o $d/flexjit_main build/flexjit; strip -o $d/gta_main build/tests/gpu_test_attention
tmp=$(mktemp -d); git archive fwd-diagonals-read-ahead-d128 templates | tar x -C "$tmp"; mv "$tmp/templates" $d/tmpl_ra; rm -rf "$tmp"
cp $here/next/run_zzzh_next.sh $here/next/ra128_tables.json $d/
sed 's/flexjit_g2/flexjit_main/g' $here/ncu_diag.sh > $d/ncu_diag.sh
cp notes/results/2026-12-04-zzv/ab2.sh ../shared/bench/suite.json ../shared/bench/peers.py \
   notes/results/2026-12-05-zzzd/diagonal_tables.json notes/results/2026-12-06-zzzg/document_diagonal_tables.json $d/
ls $d
