#!/bin/bash
# (zzza) Spill-store bytes (ptxas, sm_90a) of the forward and the fast dK/dV kernel at d128 and
# d64 for each mod of user_mods.tsv (name, score_mod, mask_mod); output as user_mods_spills.txt.
# FLEXJIT_BIN: the flexjit to run (default build/flexjit).
export PATH=/usr/local/cuda/bin:$PATH
here=$(cd "$(dirname "$0")" && pwd)
cd "$(git -C "$here" rev-parse --show-toplevel)"
B=(--buffer slope:f32:? rel:f32:? relh:f32:?x? tb:f32:?x? lens:i32:? doc:i32:? start:i32:? plen:i32:? temp:f32:? qb:f32:?x? kb:f32:?x?)
while IFS=$'\t' read -r n s m; do
  line=$(printf '%-20s' $n)
  for fam in "fwd --head-dim 128" "fwd --head-dim 64" "bwd_dkdv --fast-dq --head-dim 128" "bwd_dkdv --fast-dq --head-dim 64"; do
    out=$(FLEXJIT_CACHE=off timeout 300 ${FLEXJIT_BIN:-./build/flexjit} emit --family $fam "${B[@]}" --score "$s" --mask "$m" --format cubin -o ${TMPDIR:-/tmp}/user_mods_k.cubin 2>&1); rc=$?
    sp=$(echo "$out" | grep -o "[0-9]* bytes spill stores" | head -1 | cut -d' ' -f1)
    line="$line | ${fam%% *}${fam##* } rc=$rc sp=${sp:-?}"
    [ $rc -ne 0 ] && line="$line ($(echo "$out" | head -2 | tr '\n' ' ' | cut -c1-150))"
  done
  echo "$line"
done < $here/user_mods.tsv
