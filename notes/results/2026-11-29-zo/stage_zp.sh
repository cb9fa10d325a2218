#!/usr/bin/env bash
# Stages .gpu/next_zp from the repository (run in its root, after a build of main in build/):
# binaries, the suites, and each variant's templates from its commit.
set -eu
S=.gpu/next_zp; mkdir -p $S
strip -o $S/flexjit_main build/flexjit; strip -o $S/gpu_test_attention build/tests/gpu_test_attention
cp ../shared/bench/peers.py ../shared/bench/compare.py $S/ 2>/dev/null || true
for rev in 79d2628 zo-syncwait f7e9557 zn-ranker zo-ranker-syncwait; do
  d=$S/tpl_$(echo $rev | tr -d '-'); rm -rf $d; mkdir -p $d; git archive $rev templates | tar x -C $d --strip-components=1
done
# The ranker binary: a build of zn-ranker's host code (kOrderedNameBytes differs from main's), e.g.
#   git worktree add /tmp/rk zn-ranker && scripts/setup.sh /tmp/rk/build ... && ninja -C /tmp/rk/build flexjit gpu_test_attention
# then strip -o $S/flexjit_ranker and $S/gpu_test_attention_ranker. (zo staged them from (zn)'s build.)
