#!/usr/bin/env bash
# (zzzv) A/B of the fast backward, alternating rounds in one call: main (the gated binary flexjit_g, c129e7e, whose kernels are SASS-identical to main 3eca533), dq-v4
# (the binary's own templates), and dq-v4 with the statistics as pairs and all eight pairs of each
# row read ahead at d128 (fx_p8: XPAIRS=1 XAHEAD=8, experiment hooks). Carry .gpu/zzzv.
set -u
cd "$(dirname "$0")"
source ./device_lib.sh
device_unpack .
OUT=${OUT:-/tmp/zzzv} bash ab2.sh vab ab.json bwd_ms ${BUDGET:-330} ${ROUNDS:-3} "" main:./flexjit_g: v4:./flexjit_x: p8:./fx_p8: 2>&1 | grep -v "^vab "
