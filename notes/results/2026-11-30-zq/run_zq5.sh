#!/usr/bin/env bash
# (zq) call 5: grad_check.py (FA4 and the FLASH backend's gradients), FA4 installed from .fa4b
# when the machine lost /tmp/site.
set -u
cd "$(dirname "$0")"
t0=$(date +%s)
if [ ! -d /tmp/site/flash_attn ]; then (cd ../.. && timeout 150 bash .fa4b/install.sh) 2>&1 | tail -1; fi
echo "ready $(( $(date +%s) - t0 )) s"
PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages timeout 300 python3 grad_check.py 2> ${OUT:-/tmp}/grad_check.err | tee ${OUT:-/tmp}/grad_check.jsonl
tail -3 ${OUT:-/tmp}/grad_check.err | cut -c1-300
echo "$(( $(date +%s) - t0 )) s"
