import csv, sys
rows = list(csv.reader(open(sys.argv[1], errors="replace")))
# find header row
hi = next(i for i, r in enumerate(rows) if any("Source" == c for c in r))
h = rows[hi]; data = rows[hi + 1:]
def col(name):
    for i, c in enumerate(h):
        if c == name: return i
    return None
src = col("Source"); tot = next((i for i, c in enumerate(h) if c.startswith("Warp Stall Sampling (All")), None)
ex = next((i for i, c in enumerate(h) if c.startswith("Instructions Executed")), None)
stall_cols = [i for i, c in enumerate(h) if c.startswith("stall_") or c.startswith("smsp__pcsamp")]
def num(x):
    try: return float(x.replace(",", ""))
    except Exception: return 0.0
total = sum(num(r[tot]) for r in data if len(r) > tot)
print(f"{int(total)} stall samples; columns: {len(h)}")
agg = {}
for r in data:
    for i in stall_cols:
        if len(r) > i: agg[h[i]] = agg.get(h[i], 0) + num(r[i])
for k, v in sorted(agg.items(), key=lambda kv: -kv[1])[:12]:
    print(f"  {100*v/max(total,1):5.1f}% {k}")
for r in sorted((r for r in data if len(r) > tot), key=lambda r: -num(r[tot]))[:30]:
    reasons = sorted(((num(r[i]), h[i]) for i in stall_cols if len(r) > i and num(r[i]) > 0), reverse=True)[:2]
    rs = " ".join(f"{n}:{int(v)}" for v, n in reasons)
    print(f"{100*num(r[tot])/max(total,1):5.1f}% exec {r[ex] if ex is not None else '?':>9} {r[src][:70]:70} {rs}")
