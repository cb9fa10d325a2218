#!/bin/bash
# Next session (prepared in (zzt), not run): how much of the forward's stretch after the P V wait
# the row sums cost. Arm `nosum` is TIMING ONLY (fwd_timing_only_no_row_sums.patch leaves the 64
# FADDs per tile out; its outputs are wrong): if it is not clearly faster than main, moving the sums
# (a ones column appended to V, or the idle stretch before the wait; notes/perf.md "(zzt)" Next)
# cannot pay either.
# Setup here: mkdir -p .gpu/next && strip -o .gpu/next/flexjit build/flexjit && cp ab.sh
#   run_next_row_sum_bound.sh ../../../../shared/bench/suite.json .gpu/next/ (paths from this
#   folder; ab.sh is this folder's) && cp -r templates .gpu/next/tv_nosum &&
#   (cd .gpu/next/tv_nosum && patch -p0 flexjit_softmax.cuh < ../../notes/results/2026-12-04-zzt/fwd_timing_only_no_row_sums.patch)
cd "$(dirname "$0")"
bash ab.sh rowsum suite.json fwd_ms 200 6 "--no-bwd --only noop_d128,causal_d128,gqa_causal_d128,softcap_causal_d128,noop_d64,causal_d64" \
  main:./flexjit: nosum:./flexjit:$PWD/tv_nosum
