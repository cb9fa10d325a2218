#!/usr/bin/env bash
# (zzzr) call: GQA first stores (gqa-first) against main over masks whose walks data cuts (documents), 8:1 sliding window and 4:1 ALiBi.
set -u
cd "$(dirname "$0")"
source ./device_lib.sh
out=${OUT:-/tmp/z4}; r=/tmp/z4r/r; mkdir -p $out
device_start $r
device_unpack .
OUT=$r bash ab2.sh hab gqa2.json bwd_ms 200 3 "" main:./flexjit:: gf:./flexjit_gf:: 2>&1 | grep -v "^hab "
grep -h "failed" $r/*.log | head
echo "all $(( $(date +%s) - device_t0 )) s"
(cd /tmp/z4r && tar czf $out/z4.tar.gz r)
