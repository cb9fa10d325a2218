#!/usr/bin/env bash
# (zzzd) How the bundles were built (from the repository root, build/ set up by scripts/setup.sh).
# .gpu/zzzd (calls 1-3): flexjit = main at dc35af3 (stripped); gta = the GPU tests of bwd-fm at
# 22260d1 (its templates embedded = FMu); tv_F / tv_M / tv_FM = main's templates with the
# branch's attention_bwd_dkdv_ws.cu.j2 as of 8b6f07f (F), its flexjit_wgmma_ops.cuh (M), both (FM);
# tv_FMu = bwd-fm's templates at 22260d1. .gpu/zzzd2 (call 4): flexjit of 22260d1 (= merge 30a8123).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
export PATH=/usr/local/cuda/bin:$PATH
here=notes/results/2026-12-05-zzzd; d=.gpu/zzzd; d2=.gpu/zzzd2
back=$(git rev-parse --abbrev-ref HEAD)
rm -rf $d $d2; mkdir -p $d/tv_F $d/tv_M $d/tv_FM $d/tv_FMu $d2
git checkout -q 22260d1 && ninja -C build > /dev/null
strip -o $d/gta build/tests/gpu_test_attention; strip -o $d2/flexjit build/flexjit
git checkout -q dc35af3 && ninja -C build > /dev/null && strip -o $d/flexjit build/flexjit
git checkout -q "$back"
git archive dc35af3 templates | tar x -C $d/tv_F
git show 8b6f07f:templates/attention_bwd_dkdv_ws.cu.j2 > $d/tv_F/templates/attention_bwd_dkdv_ws.cu.j2
git archive dc35af3 templates | tar x -C $d/tv_M
git show 8b6f07f:templates/flexjit_wgmma_ops.cuh > $d/tv_M/templates/flexjit_wgmma_ops.cuh
git archive 8b6f07f templates | tar x -C $d/tv_FM
git archive 22260d1 templates | tar x -C $d/tv_FMu
cp notes/results/2026-12-04-zzv/ab2.sh ../shared/bench/peers.py ../shared/bench/suite.json $here/run_zzzd_[abc].sh $d/
cp ../shared/bench/peers.py ../shared/bench/suite.json $here/run_zzzd_d.sh $d2/
