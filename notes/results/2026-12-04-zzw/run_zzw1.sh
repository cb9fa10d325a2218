#!/bin/bash
# (zzw) 1: the fast / deterministic backward's launch groups under document masks: 128 (main), 1024, 4096 CTAs.
cd "$(dirname "$0")"
bash ab2.sh zzw1 docs_mix.json bwd_ms 330 3 "" \
  main:./flexjit: g1024:./flexjit:$PWD/tv_g1024 g4096:./flexjit:$PWD/tv_g4096 \
  det:./flexjit::--bwd-mode=deterministic det1024:./flexjit:$PWD/tv_g1024:--bwd-mode=deterministic 2>&1 | grep -v "^zzw1 "
