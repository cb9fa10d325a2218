#!/bin/bash
# Next session (prepared in (zzu), not run): the forward's loop head waits for K(t) and V(t-1)
# with one mbarrier try_wait after the other, and each round trip showed about 35-50 sampled
# cycles of long-scoreboard stall per iteration (ncu, zzu1). fwd_paired_full_waits.patch issues
# both try_waits before testing either (SASS: two back-to-back SYNCS.PHASECHK.TRANS64.TRYWAIT and
# a PLOP3), falling back to the two loops when either is not done. fwd_v_wait_in_window.patch
# instead waits for V(t-1) inside the window, after S(t) is issued (FA3's order; SASS: the V
# try_wait follows S's eight HGMMAs), so its round trip runs under S's tensor time.
# Setup here: mkdir -p .gpu/next && strip -o .gpu/next/flexjit build/flexjit && cp
#   ../2026-12-04-zzt/ab.sh run_next_paired_waits.sh ../../../../shared/bench/suite.json .gpu/next/
#   (paths from this folder) && cp -r templates .gpu/next/tv_pair &&
#   (cd .gpu/next/tv_pair && patch -p0 < ../../notes/results/2026-12-04-zzu/fwd_paired_full_waits.patch) &&
#   cp -r templates .gpu/next/tv_vlate &&
#   (cd .gpu/next/tv_vlate && patch -p0 < ../../notes/results/2026-12-04-zzu/fwd_v_wait_in_window.patch)
cd "$(dirname "$0")"
bash ab.sh pair suite.json fwd_ms 240 6 "--no-bwd --only noop_d128,causal_d128,gqa_causal_d128,softcap_causal_d128,noop_d64,causal_d64,alibi_causal_d128,document_causal_d128" \
  main:./flexjit: pair:./flexjit:$PWD/tv_pair vlate:./flexjit:$PWD/tv_vlate
