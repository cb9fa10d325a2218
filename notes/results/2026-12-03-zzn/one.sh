#!/bin/bash
# one.sh BIN NAME D DV CONFIG [mod args...]
b=$1; n=$2; d=$3; dv=$4; c=$5; shift 5
r=$(FLEXJIT_CACHE=off $b emit --family bwd_dkdv --fast-dq --head-dim $d --head-dim-v $dv --config $c "$@" --format cubin -o /tmp/sweep/$RANDOM.cubin 2>&1)
echo "$(basename $(dirname $(dirname $b))) $n $d/$dv $c: $(echo "$r" | grep -oE '[0-9]+ bytes spill stores' | head -1) $(echo "$r" | grep -oE 'C75[0-9]+' | sort -u | tr '\n' ' ') $(echo "$r" | grep -m1 -i 'error' | cut -c1-100)"
