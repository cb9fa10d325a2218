#!/usr/bin/env bash
set -u
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
B=../next_zo/flexjit_ranker
t0=$(date +%s)
FLEXJIT_TEMPLATE_DIR=$PWD/tpl_dbg2 FLEXJIT_CACHE_DIR=/tmp/fcd timeout 120 $B bench --suite ../next_zo/suite.json --only noop_d128 --bwd-mode deterministic 2>&1 | grep -v '^{' | sort | uniq -c | sort -rn | head -45
echo "noop128 rc=${PIPESTATUS[0]} $(( $(date +%s) - t0 )) s"
FLEXJIT_TEMPLATE_DIR=$PWD/tpl_dbg2 FLEXJIT_CACHE_DIR=/tmp/fcd timeout 120 $B bench --suite ../next_zo/suite64x.json --only causal_d64 --bwd-mode deterministic 2>&1 | grep -v '^{' | sort | uniq -c | sort -rn | head -45
echo "causal64 rc=${PIPESTATUS[0]} $(( $(date +%s) - t0 )) s"
FLEXJIT_CACHE_DIR=/tmp/fct true
echo "test rc=${PIPESTATUS[0]} $(( $(date +%s) - t0 )) s"
