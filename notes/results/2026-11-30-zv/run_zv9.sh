#!/usr/bin/env bash
# (zv) call 9: the forward's 192/128 default A/B (old: zv4's binary, m128n64w8s2ws; new: this tree,
# m128n128w8s2ws) beside the peers (peers.py --no-bwd) in one call, two rounds of flexjit around them.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zv9}; r=/tmp/zv9r/r; mkdir -p $r $out
save() { (cd /tmp/zv9r && tar czf $out/zv9.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off PYTHONUNBUFFERED=1
t0=$(date +%s)
for b in old new; do bin=./flexjit; [ $b = old ] && bin=./old/flexjit
  FLEXJIT_CACHE_DIR=/tmp/fc_$b timeout 60 $bin bench --no-bwd --suite mla.json --json $r/${b}_1.jsonl > $r/${b}_1.log 2>&1; done
timeout 150 python3 peers.py --no-bwd --suite mla.json > $r/peers.jsonl 2> $r/peers.err || tail -2 $r/peers.err
for b in new old; do bin=./flexjit; [ $b = old ] && bin=./old/flexjit
  FLEXJIT_CACHE_DIR=/tmp/fc_$b timeout 60 $bin bench --no-bwd --suite mla.json --json $r/${b}_2.jsonl > $r/${b}_2.log 2>&1; done
python3 - $r <<'PY'
import json, sys
r = sys.argv[1]
rows = {}
for f in ("old_1", "old_2", "new_1", "new_2"):
    for line in open(f"{r}/{f}.jsonl"):
        o = json.loads(line)
        if "name" in o: rows.setdefault(o["name"], {}).setdefault(f[:3], []).append(o["fwd_tflops"])
for line in open(f"{r}/peers.jsonl"):
    o = json.loads(line)
    if "fwd_tflops" in o: rows.setdefault(o["name"], {})[o["system"]] = o["fwd_tflops"]
for n, d in rows.items():
    best = max([v for k, v in d.items() if k not in ("old", "new")] or [0])
    print(f"{n:20s} old {d.get('old')} new {d.get('new')} peers { {k: v for k, v in d.items() if k not in ('old', 'new')} } new/best {max(d.get('new', [0])) / best if best else 0:.2f}")
PY
echo "total $(( $(date +%s) - t0 )) s"
save
