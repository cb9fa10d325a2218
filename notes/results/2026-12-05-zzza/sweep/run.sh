#!/bin/bash
# (zzza) Usage: run.sh SEED N > out.tsv. Draws N score_mod / mask_mod pairs (gen.py) and compiles each
# through `flexjit emit --format cubin` for the forward at sm_90a d128 and sm_80 d64, the fast dK/dV kernel at d64 and at d128 GQA 2:1;
# one line per kernel: pair, family, exit code, spill-store bytes, the first lines of any error.
# FLEXJIT_BIN: the flexjit to run (default build/flexjit; a copy keeps a rebuild from racing the sweep).
export PATH=/usr/local/cuda/bin:$PATH
here=$(cd "$(dirname "$0")" && pwd)
cd "$(git -C "$here" rev-parse --show-toplevel)"
w=${TMPDIR:-/tmp}/flexjit_sweep; mkdir -p $w
B=(--buffer doc:i32:? start:i32:? flags:u8:? bias:f32:?x? table:bf16:? slope:f32:? --param cap:float window:int)
python3 $here/gen.py $1 $2 > $w/exprs_$1.tsv
i=0
while IFS=$'\t' read -r s m; do
  i=$((i+1))
  for fam in "fwd --head-dim 128" "bwd_dkdv --fast-dq --head-dim 64" "fwd --head-dim 64 --arch sm_80" "bwd_dkdv --fast-dq --head-dim 128 --gqa 2"; do
    out=$(FLEXJIT_CACHE=off timeout 300 ${FLEXJIT_BIN:-./build/flexjit} emit --family $fam "${B[@]}" --score "$s" --mask "$m" --format cubin -o $w/k_$1.cubin 2>&1); rc=$?
    sp=$(echo "$out" | grep -o "[0-9]* bytes spill stores" | head -1 | cut -d' ' -f1)
    printf '%s\t%s\trc=%s\tsp=%s\t%s\t%s\t%s\n' "$i" "$fam" "$rc" "${sp:-?}" "$(echo "$out" | grep -v '^ptxas\|^wrote\|registers,' | head -3 | tr '\n\t' '  ' | cut -c1-300)" "$s" "$m"
  done
done < $w/exprs_$1.tsv
