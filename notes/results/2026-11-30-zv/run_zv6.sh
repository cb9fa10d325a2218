#!/usr/bin/env bash
# (zv) call 6: the forward's default at 192/128 (MLA): old/flexjit (m128n64w8s2ws) against ./flexjit
# (m128n128w8s2ws), forward only, three rounds in alternating order.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zv6}; r=/tmp/zv6r/r; mkdir -p $r $out
save() { (cd /tmp/zv6r && tar czf $out/zv6.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
for rd in 1 2 3; do
  for b in old new; do
    [ $(( rd % 2 )) = 0 ] && b=$([ $b = old ] && echo new || echo old)
    bin=./flexjit; [ $b = old ] && bin=./old/flexjit
    FLEXJIT_CACHE_DIR=/tmp/fc_$b timeout 90 $bin bench --no-bwd --suite mla.json --json $r/${b}_$rd.jsonl > $r/${b}_$rd.log 2>&1 || tail -2 $r/${b}_$rd.log
  done
  echo "round $rd $(( $(date +%s) - t0 )) s"
done
python3 - $r <<'PY'
import json, sys, statistics
r = sys.argv[1]
rows = {}
for b in ("old", "new"):
    for rd in (1, 2, 3):
        for line in open(f"{r}/{b}_{rd}.jsonl"):
            o = json.loads(line)
            if "name" in o:
                rows.setdefault(o["name"], {}).setdefault(b, []).append(o["fwd_tflops"])
                rows[o["name"]][b + "_cfg"] = o.get("fwd_config")
for n, d in rows.items():
    print(f"{n:22s} old {d['old']} ({d['old_cfg']})  new {d['new']} ({d['new_cfg']})  ratio of medians {statistics.median(d['new']) / statistics.median(d['old']):.3f}")
PY
save
