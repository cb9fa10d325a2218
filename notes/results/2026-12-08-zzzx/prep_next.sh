#!/usr/bin/env bash
# (zzzx, for the next session) Builds the carried folder .gpu/zzzx for run_next.sh from a Release
# build of main (build/flexjit, build/tests/gpu_test_attention) and the arms' template patches.
#   scripts/setup.sh build -DCMAKE_BUILD_TYPE=Release   (or: cmake --build build --target flexjit gpu_test_attention)
#   bash notes/results/2026-12-08-zzzx/prep_next.sh
# Arms (template-only, one binary): main (tmain), dv (dv_after_ds.patch of (zzzw): dV += Pᵀ dO issued
# once dSᵀ is staged), fa4 (fa4_order.patch: that and all of dK after dQ, FA4's sm90 order), late
# (late_masks.patch: the dQ share's late hand-over with masks too), row (stats_row.patch: the
# statistics read from one per-thread address with constant offsets), and lr (late and row together,
# for run_next_combo.sh).
set -euo pipefail
cd "$(dirname "$0")/../../.."
here=notes/results/2026-12-08-zzzx
g=.gpu/zzzx
rm -rf $g && mkdir -p $g
for b in flexjit:build/flexjit gta:build/tests/gpu_test_attention; do
  strip -o $g/${b%%:*} ${b#*:} && xz -T2 $g/${b%%:*}
done
for arm in tmain tdv tfa4 tlate trow tlr; do mkdir -p $g/$arm && git archive HEAD templates | tar x -C $g/$arm; done
patch -s -p1 -d $g/tdv < notes/results/2026-12-08-zzzw/dv_after_ds.patch
patch -s -p1 -d $g/tfa4 < $here/fa4_order.patch
patch -s -p1 -d $g/tlate < $here/late_masks.patch
patch -s -p1 -d $g/trow < $here/stats_row.patch
patch -s -p1 -d $g/tlr < $here/late_masks.patch
patch -s -p1 -d $g/tlr < $here/stats_row.patch
cp scripts/device_lib.sh notes/results/2026-12-04-zzv/ab2.sh $here/run_next.sh $here/run_next_det.sh $here/run_next_arm.sh $here/run_next_combo.sh scripts/device_bwd_tests.sh \
   $here/ab_x.json $here/ab_x_det.json $here/diag_walk.json $g/
du -sh $g
