#!/usr/bin/env bash
set -u
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
B=../next_zo/flexjit_ranker
t0=$(date +%s)
for v in v1 v2 v3 v4; do
  FLEXJIT_TEMPLATE_DIR=$PWD/tpl_$v FLEXJIT_CACHE_DIR=/tmp/fc4_$v timeout 30 $B bench --suite ../next_zo/suite.json --only noop_d128 --bwd-mode deterministic 2>&1 | grep -v '^{' | grep -v '^problem' | grep -v '^$' | sort | uniq -c | sort -rn | head -30
  echo "$v rc=${PIPESTATUS[0]} $(( $(date +%s) - t0 )) s"
done
