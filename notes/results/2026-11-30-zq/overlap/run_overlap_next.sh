#!/usr/bin/env bash
# For the next session, prepared in (zq), not run: do the tensor cores and the MUFU run at once?
# (zq6: the d64 forward's tensor pipe 49 % + MUFU 51 % = 100 % of the elapsed cycles.)
# Here: nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -o .gpu/<s>/overlap \
#   notes/results/2026-11-30-zq/overlap/overlap.cu ; copy this script beside it. About 10 s.
# Reading it: "T+M / (max of parts)" near 1.0 means the two pipes overlap fully (then the d64
# forward's serialisation is our schedule's, and a schedule that keeps one warpgroup in its
# exponentials while the other's GEMMs run can gain up to 2x on that row); near 2.0 (equal parts)
# means they cannot run at once on this GPU (then only fewer MUFU per score, e.g. exponentials on
# the FMA pipe, moves the d64 forward).
set -u
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
./overlap 4000
./overlap 4000 4000
./overlap 4000 16000
