#!/bin/bash
# (zzze) Usage: run_diagonal.sh SEED N > out.tsv. Draws N score_mod / mask_mod pairs
# (gen_diagonal.py) and compiles each through `flexjit emit --format cubin` for the forward at
# sm_90a d128 and d64 and the dK/dV kernels at d64 (fast, ordered) and d128 GQA 2:1 (fast); one
# line per kernel: pair, family, exit code, spill-store bytes, whether it stages diagonal values
# (SCORE_DIAGONAL_VALUES in the rendered source), the first lines of any error.
# FLEXJIT_BIN: the flexjit to run (default build/flexjit).
export PATH=/usr/local/cuda/bin:$PATH
here=$(cd "$(dirname "$0")" && pwd)
w=${TMPDIR:-/tmp}/flexjit_dsweep_$1; mkdir -p $w
B=(--buffer doc:i32:? tab:f32:?x? ftab:bf16:? itab:i32:? flags:u8:? bias:f32:?x? slope:f32:? --param cap:float window:int)
python3 $here/gen_diagonal.py $1 $2 > $w/exprs.tsv
i=0
while IFS=$'\t' read -r s m; do
  i=$((i+1))
  for fam in "fwd --head-dim 128" "fwd --head-dim 64" "bwd_dkdv --fast-dq --head-dim 64" "bwd_dkdv --ordered-dq --head-dim 64" "bwd_dkdv --fast-dq --head-dim 128 --gqa 2"; do
    bin=${FLEXJIT_BIN:-./build/flexjit}
    out=$(FLEXJIT_CACHE=off timeout 300 $bin emit --family $fam "${B[@]}" --score "$s" ${m:+--mask "$m"} --format cubin -o $w/k.cubin 2>&1); rc=$?
    staged=$(FLEXJIT_CACHE=off $bin emit --family $fam "${B[@]}" --score "$s" ${m:+--mask "$m"} --format cu 2>/dev/null | grep -o "constexpr int SCORE_DIAGONAL_VALUES = [0-9]*" | grep -o "[0-9]*$")
    sp=$(echo "$out" | grep -o "[0-9]* bytes spill stores" | head -1 | cut -d' ' -f1)
    printf '%s\t%s\trc=%s\tsp=%s\tdiag=%s\t%s\t%s\t%s\n' "$i" "$fam" "$rc" "${sp:-?}" "${staged:-?}" "$(echo "$out" | grep -v '^ptxas\|^wrote\|registers,' | head -3 | tr '\n\t' '  ' | cut -c1-300)" "$s" "$m"
  done
done < $w/exprs.tsv
