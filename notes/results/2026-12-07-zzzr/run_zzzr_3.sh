#!/usr/bin/env bash
# (zzzr) call: GQA with the fast mode's first stores (branch gqa-first): tests, memcheck, A/B against main; ncu stall tables of the GQA / causal dK/dV kernels.
set -u
cd "$(dirname "$0")"
source ./device_lib.sh
out=${OUT:-/tmp/z3}; r=/tmp/z3r/r; mkdir -p $out
save() { (cd /tmp/z3r && tar czf $out/z3.tar.gz r); }
device_start $r
device_unpack .
device_tests g1 ./gta_gf 'BwdGpu.Gqa*:BwdGpu.FullyMaskedRowsGiveZeroGradients' 150
device_tests g2 ./gta_gf 'RandomProblemsGpu.*' 150
device_sanitize memcheck ./gta_gf 'BwdGpu.Gqa8To1AndBshd' 150
wait
device_failures
save
OUT=$r bash ab2.sh gab gqa.json bwd_ms 150 3 "" main:./flexjit:: gf:./flexjit_gf:: 2>&1 | grep -v "^gab "
for p in gqa_causal_d128 causal_d128; do ncu --import ../../notes/results/2026-12-07-zzzr/ncu_$p.ncu-rep --page details --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats > $r/ncu_$p.txt 2>&1; done
echo "all $(( $(date +%s) - device_t0 )) s"
save
