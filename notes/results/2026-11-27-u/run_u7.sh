#!/usr/bin/env bash
# Session (u) u7: is BwdGpu.DeterministicModeSumsDqInOrder's "softcap f16 bshd" failure main's?
# The test three times on main's templates (tmpl_base) and three times on the new ones, alternating.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/u7}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
one() {  # name templates-dir-or-empty
  if [ -n "$2" ]; then export FLEXJIT_TEMPLATE_DIR=$2; else unset FLEXJIT_TEMPLATE_DIR; fi
  export FLEXJIT_CACHE_DIR=/tmp/fcu7_$1
  timeout 100 ./gpu_test_attention --gtest_filter=BwdGpu.DeterministicModeSumsDqInOrder > $r/$1_$3.txt 2>&1
  echo "$1 #$3 rc=$? $(( $(date +%s) - t0 )) s: $(grep -E '^(softcap|noop|gqa|document|sliding|prefix|per-head|causal)[^:]*:' $r/$1_$3.txt | cut -d: -f1-2 | sort | uniq -c | tr '\n' ';')"
}
for i in 1 2 3; do
  if [ $i = 2 ]; then one new "" $i; one base $PWD/tmpl_base $i; else one base $PWD/tmpl_base $i; one new "" $i; fi
done
cd $out && tar czf r.tar.gz r && rm -rf r
