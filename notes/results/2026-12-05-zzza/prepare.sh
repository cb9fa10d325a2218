#!/usr/bin/env bash
# (zzza) Builds .gpu/zzza, the folder run_zzza_a.sh and run_zzza_b.sh run in: main's build
# (flexjit, stripped), the branch bwd-late-dq-fence's GPU tests (gta: its embedded templates are
# the FM arm), the template arms, the suite, peers.py, ab2.sh and the scripts. Run from the
# repository root on a clean checkout that has the branch; it checks the branch out to build it
# and returns to the branch it found. Then scripts/fa4_prepare.sh if .fa4a / .fa4b are missing,
# and the three device calls (README.md here).
# Arms (templates for FLEXJIT_TEMPLATE_DIR; main = the embedded templates of main's flexjit):
#   F  = main's templates with the branch's attention_bwd_dkdv_ws.cu.j2: a staged dQ share handed
#        to the writer at the warpgroup's next dSᵀ store, after that store's proxy fence
#        (DQ_LATE_HAND_OVER), in the tile (d128) and by the deferred turns (d64);
#   M  = main's templates with the branch's flexjit_wgmma_ops.cuh (store_a_fragments by stmatrix);
#   FM = the branch (both).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
test -z "$(git status --porcelain --untracked-files=no)" || { echo "commit or stash first" >&2; exit 2; }
export PATH=/usr/local/cuda/bin:$PATH
d=.gpu/zzza; here=notes/results/2026-12-05-zzza
test -f build/build.ninja || { echo "no build/: run scripts/setup.sh first" >&2; exit 2; }
# The branches where this checkout lacks them: their commits are patches/ (on main at b45f761)
# and patches_S/ (on main at 61aaacd) here.
back0=$(git rev-parse --abbrev-ref HEAD)
if ! git rev-parse -q --verify bwd-late-dq-fence > /dev/null; then
  tmp=$(mktemp -d); cp $here/patches/*.patch "$tmp"/  # (the base commit predates the patches)
  git checkout -q -b bwd-late-dq-fence b45f761
  git am -q "$tmp"/*.patch
  git checkout -q "$back0"; rm -rf "$tmp"
fi
if ! git rev-parse -q --verify score-reads-select-address > /dev/null; then
  tmp=$(mktemp -d); cp $here/patches_S/*.patch "$tmp"/  # (the base commit predates the patches)
  git checkout -q -b score-reads-select-address 61aaacd
  git am -q "$tmp"/*.patch
  git checkout -q "$back0"; rm -rf "$tmp"
fi
back=$(git rev-parse --abbrev-ref HEAD)
rm -rf $d; mkdir -p $d/tv_F $d/tv_M $d/tv_FM
git checkout -q bwd-late-dq-fence
ninja -C build > /dev/null
strip -o $d/gta build/tests/gpu_test_attention
# S (call 5): the branch score-reads-select-address, its flexjit and its GPU tests.
git checkout -q score-reads-select-address
ninja -C build > /dev/null
strip -o $d/flexjit_S build/flexjit
strip -o $d/gta_S build/tests/gpu_test_attention
git checkout -q main
ninja -C build > /dev/null
strip -o $d/flexjit build/flexjit
git checkout -q "$back"
git archive main templates | tar x -C $d/tv_F
git show bwd-late-dq-fence:templates/attention_bwd_dkdv_ws.cu.j2 > $d/tv_F/templates/attention_bwd_dkdv_ws.cu.j2
git archive main templates | tar x -C $d/tv_M
git show bwd-late-dq-fence:templates/flexjit_wgmma_ops.cuh > $d/tv_M/templates/flexjit_wgmma_ops.cuh
git archive bwd-late-dq-fence templates | tar x -C $d/tv_FM
# NO: main's forward without the overlap where the mods read buffers (a measurement arm for the
# per-key biases, not a candidate).
mkdir -p $d/tv_NO && git archive main templates | tar x -C $d/tv_NO
(cd $d/tv_NO && patch -s -p1 < ../../../$here/arm_NO_fwd_no_overlap_beside_buffer_reads.patch)
# The arms differ from main's templates in their own file and nowhere else.
mkdir -p /tmp/zzza_main && rm -rf /tmp/zzza_main/templates && git archive main templates | tar x -C /tmp/zzza_main
for arm in F:attention_bwd_dkdv_ws.cu.j2 M:flexjit_wgmma_ops.cuh; do
  changed=$( (diff -rq /tmp/zzza_main/templates $d/tv_${arm%%:*}/templates || true) | awk '{print $2}' | xargs -n1 basename)
  test "$changed" = "${arm#*:}" || { echo "arm ${arm%%:*} changes: $changed" >&2; exit 2; }
done
test "$( (diff -rq /tmp/zzza_main/templates $d/tv_FM/templates || true) | wc -l)" -eq 2
test "$( (diff -rq /tmp/zzza_main/templates $d/tv_NO/templates || true) | wc -l)" -eq 1
cp notes/results/2026-12-04-zzv/ab2.sh ../shared/bench/peers.py ../shared/bench/suite.json \
   $here/bias_tables.json $here/run_zzza_a.sh $here/run_zzza_b.sh $here/run_zzza_c.sh $here/run_zzza_d.sh $d/
du -sh $d
