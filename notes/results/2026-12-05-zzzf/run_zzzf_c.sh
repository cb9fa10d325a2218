#!/bin/bash
# (zzzf) call C (carry .gpu/zzzf; about 250 s): the binary that lands (BIN, default ./flexjit = the
# branch) beside FlexAttention (Triton) and SDPA's cuDNN and FA2 backends, on the issue's suite
# and the diagonal tables, forward + fast backward. (zzzd)'s run_zzzd_d.sh does the timing and the
# table (its 280 s limit for the peers may leave the last tables unpaired); this only gives it the
# merged suite and the binary in a folder of their own.
set -u
cd "$(dirname "$0")"
w=/tmp/zzzfc_w; rm -rf $w; mkdir -p $w
python3 - $w/suite.json <<'PY'
import json, sys
s = json.load(open("suite.json")); rows = s["problems"] if isinstance(s, dict) else s
json.dump({"problems": rows + json.load(open("diagonal_tables.json"))["problems"]}, open(sys.argv[1], "w"))
PY
cp run_zzzd_d.sh peers.py $w/ && cp "${BIN:-./flexjit}" $w/flexjit
OUT=${OUT:-/tmp/zzzfc} bash $w/run_zzzd_d.sh
