#!/usr/bin/env bash
# Session (z) z12: z11's build again (DQ_PIECE_IN_STAGE) against HEAD's binary: four interleaved
# benchmark rounds on four d256 problems, and ncu of noop d256's dK/dV kernel (head / new / new /
# head) with the SM clock read back, to see why noop lost 4 % in z11's benchmark while causal's
# kernel was 14 % shorter under ncu.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/z12}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
for round in 1 2 3 4; do
  vs="head new"; [ $((round % 2)) = 0 ] && vs="new head"
  for v in $vs; do
    bin=./flexjit; [ $v = head ] && bin=./flexjit_head
    FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 60 $bin bench --suite suite256.json --only noop_d256,causal_d256,softcap_causal_d256,gqa_causal_d256 --json $r/${v}_$round.jsonl > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
  done
done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, statistics
d = sys.argv[1]
def load(f):
    out = {}
    for l in open(f):
        try: j = json.loads(l)
        except Exception: continue
        if "name" in j: out[j["name"]] = j["bwd_tflops"]
    return out
for n in ["noop_d256", "causal_d256", "softcap_causal_d256", "gqa_causal_d256"]:
    a = [load(f"{d}/head_{i}.jsonl").get(n, 0) for i in range(1, 5)]
    b = [load(f"{d}/new_{i}.jsonl").get(n, 0) for i in range(1, 5)]
    print(f"{n:20} head {'/'.join(f'{x:.0f}' for x in a)}  new {'/'.join(f'{x:.0f}' for x in b)}  median ratio {statistics.median(b) / statistics.median(a):.3f}")
PY
for p in noop_d256; do
  for v in head new new2 head2; do
    bin=./flexjit; case $v in head*) bin=./flexjit_head;; esac
    FLEXJIT_CACHE_DIR=/tmp/fc_${v%2} timeout 60 ncu --kernel-name regex:'bwd_dkdv$' --launch-skip 1 --launch-count 1 --section SpeedOfLight $bin bench --suite suite256.json --only $p > $r/ncu_${p}_$v.log 2>&1
    echo "$p $v $(grep -E '^ +Duration|SM Frequency|Tensor \(All\)' $r/ncu_${p}_$v.log | awk '{print $1, $(NF-1), $NF}' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
  done
done
cd $out && tar czf z12.tar.gz r && rm -rf r
