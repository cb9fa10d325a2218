#!/bin/bash
# (zzze) prepared, not run (no device this session). Call A (carry .gpu/zzze, built by
# prepare.sh; about 300 s, no round starts after 420 s): the forward and the fast backward,
# main / B / B1, four rounds alternating (ab2.sh), on the diagonal tables (zzzd's forward ones,
# diagonal_tables_bwd.json) and two suite rows as controls (their SASS is identical on the CPU).
#   main: main's flexjit. B: branch bwd-score-diagonals (the forward's diagonal values, and the
#   dK/dV kernel's at head dim 64). B1: B + the dK/dV kernel's at head dim 128 with one dQ
#   buffer instead of two (branch bwd-score-diagonals-d128-one-dq-buffer).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzea}; r=/tmp/zzzear/r; mkdir -p $r $out
save() { (cd /tmp/zzzear && tar czf $out/zzzea.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
python3 - <<'PY'
import json
f = json.load(open("diagonal_tables.json")); b = json.load(open("diagonal_tables_bwd.json"))
s = json.load(open("suite.json")); rows = s["problems"] if isinstance(s, dict) else s
seen, probs = set(), []
for p in f["problems"] + b["problems"] + [p for p in rows if p["name"] in ("causal_d64", "causal_d128")]:
    if p["name"] not in seen: seen.add(p["name"]); probs.append(p)
json.dump({"problems": probs}, open("ab_tables.json", "w"))
PY
OUT=$out bash ab2.sh ze ab_tables.json bwd_ms 420 4 "" main:./flexjit_main: B:./flexjit: B1:./flexjit_b1: 2>&1 | grep -v "^ze "
cp /tmp/zer/r/ab.txt $r/ab_bwd.txt 2>/dev/null; cp /tmp/zer/r/*.jsonl /tmp/zer/r/*.log $r/ 2>/dev/null
python3 - $r <<'PY' | tee $r/ab_fwd.txt
import json, sys, glob, statistics as st
r = sys.argv[1]; t = {}
for a in ("main", "B", "B1"):
    for f in glob.glob(f"{r}/{a}_*.jsonl"):
        n = int(f.rsplit("_", 1)[1].split(".")[0])
        for l in open(f):
            if l.startswith("{") and "fwd_ms" in l:
                o = json.loads(l); t.setdefault((o["name"], a), []).append((n, o["fwd_ms"]))
for prob in sorted({k[0] for k in t}):
    b = [x for _, x in sorted(t.get((prob, "main"), []))]
    line = f"{prob:32s} fwd main " + " ".join(f"{x:.4f}" for x in b)
    for a in ("B", "B1"):
        v = [x for _, x in sorted(t.get((prob, a), []))]
        if b and v: line += f" | {a} " + " ".join(f"{x:.4f}" for x in v) + f" main/{a} {st.median(b)/st.median(v):.3f} ({sum(x > y for x, y in zip(b, v))}/{min(len(b), len(v))})"
    print(line)
PY
echo "done $(( $(date +%s) - t0 )) s"; save
