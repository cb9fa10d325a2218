#!/bin/bash
# zzv6: the deterministic backward of score tables beside a documents mask, 64-bit reads (the rule
# before (zzu): flexjit_old) against 32-bit (main), alternating rounds; (zzu3) timed the fast mode only.
cd "$(dirname "$0")"
bash ab2.sh det mix_det.json bwd_ms 170 4 "--bwd-mode deterministic" old:./flexjit_old: main:./flexjit: 2>&1 | grep -v "^det "
