#!/usr/bin/env bash
# (zzx) next, prepared and not run: the lazy rescale in the synchronous forward (attention_fwd.cu.j2:
# the wgmma 'g' twin on sm_90a, the mma.sync path of sm_80-sm_89), arm_S_lazy_synchronous_forward.patch.
# There every tile takes it (the first one's test fails on the -inf max, so it runs eagerly) and
# the rescale stays inside (no overlap to hide it in). ptxas, CPU: fewer spills than main (sm_90a
# m128n128w8s2g d64 32 -> 16 bytes, m128n64w4s2 d128 52 -> 8; sm_80 m128n32w4s2 d128 8 -> 0).
# Folder beside it: flexjit and gta (stripped builds of main), ab2.sh (../2026-12-04-zzv),
# ../../../bench/suite.json as suite.json, tvS/templates (main's templates with the patch).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/ns}; r=/tmp/nsr/r; mkdir -p $r $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
only=noop_d128,causal_d128,noop_d64,causal_d64,document_causal_d128,alibi_causal_d128,softcap_causal_d128
bash ab2.sh ns1 suite.json fwd_ms 150 3 "--no-bwd --config m128n128w8s2g --only $only" main:./flexjit: S:./flexjit:$PWD/tvS/templates 2>&1 | grep -v "^ns1 "
bash ab2.sh ns2 suite.json fwd_ms 150 3 "--no-bwd --config m128n64w4s2 --only $only" main:./flexjit: S:./flexjit:$PWD/tvS/templates 2>&1 | grep -v "^ns2 "
echo "ab $(( $(date +%s) - t0 )) s"
FLEXJIT_TEMPLATE_DIR=$PWD/tvS/templates FLEXJIT_CACHE_DIR=/tmp/fct_s timeout 240 ./gta \
  --gtest_filter='FwdGpu.SuiteMods:FwdGpu.ScoresThatPassTheRunningMaxLater:FwdGpu.EveryBlockConfigShape:FwdGpu.HopperWgmmaPath:FwdGpu.FullyMaskedRowsGiveZeroAndMinusInfinity:Configs/NanGpu.*' > $r/tests_s.txt 2>&1
echo "tests rc=$?"; grep -hE "^\[  (PASSED|FAILED) |FAILED  \]|Failure" $r/tests_s.txt
(cd /tmp/nsr && tar czf $out/ns.tar.gz r)
echo "done $(( $(date +%s) - t0 )) s"
