#!/usr/bin/env bash
# (zzzw) call C: the GPU tests of the landing binary (uniform-noop: main's C++, its templates
# embedded) and memcheck of the fast backward; beside them, the suite's kernels of call B's two
# arms compiled into the kernel caches call B reads (/tmp persists on the warm machine).
# Carry .gpu/zzzwc (with scripts/device_lib.sh and scripts/device_bwd_tests.sh); about 330 s.
set -u
cd "$(dirname "$0")"
source ./device_lib.sh
source ./device_bwd_tests.sh
out=${OUT:-/tmp/zzzw}; r=/tmp/zzzwcr/t; mkdir -p $out $r
device_start $r
device_unpack .
device_bwd_tests "" 240
cp -r tmain /tmp/
for a in old new; do
  tv=""; [ $a = old ] && tv=/tmp/tmain/templates
  (FLEXJIT_TEMPLATE_DIR=$tv FLEXJIT_CACHE_DIR=/tmp/fc_$a timeout 240 ./flexjit bench --suite suite_official.json > $r/warm_$a.txt 2>&1
   echo "warm $a rc=$? $(( $(date +%s) - device_t0 )) s") &
done
wait
device_failures
(cd /tmp/zzzwcr && tar czf $out/c_tests.tar.gz t)
echo "all $(( $(date +%s) - device_t0 )) s"
