#!/bin/bash
b=$1; n=$2; d=$3; dv=$4; c=$5; shift 5
f=/tmp/sweep/p$RANDOM$RANDOM
FLEXJIT_CACHE=off $b emit --family bwd_dkdv --fast-dq --head-dim $d --head-dim-v $dv --config $c "$@" --format ptx -o $f.ptx > /dev/null 2>&1
r=$(/usr/local/cuda/bin/ptxas -arch=sm_90a -v $f.ptx -o $f.o 2>&1)
tag=$( [ "$b" = /tmp/wt0/build/flexjit ] && echo OLD || echo NEW )
echo "$n $d/$dv $c $tag: $(echo "$r" | grep -oE '[0-9]+ bytes spill stores' | head -1) $(echo "$r" | grep -oE 'C75[0-9]+' | sort -u | tr '\n' ' ')"
rm -f $f.ptx $f.o
