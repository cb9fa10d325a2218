import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
h = rows[1]; data = rows[2:]
iS = h.index("Warp Stall Sampling (All Samples)"); src = h.index("Source")
cols = [c for c in h if c.startswith("stall_") and "Not Issued" not in c]
tot = sum(int(r[iS]) for r in data if r[iS].isdigit())
print("total samples", tot)
agg = {c: sum(int(r[h.index(c)]) for r in data if r[h.index(c)].isdigit()) for c in cols}
print(sorted(((v, c) for c, v in agg.items()), reverse=True)[:10])
top = sorted(((int(r[iS]), i) for i, r in enumerate(data) if r[iS].isdigit()), reverse=True)[:int(sys.argv[2])]
for v, i in top:
    r = data[i]
    why = sorted(((int(r[h.index(c)]), c[6:]) for c in cols if r[h.index(c)].isdigit() and int(r[h.index(c)]) > 0), reverse=True)[:3]
    print(f"{i:5d} {v:6d} {100*v/tot:5.1f}% {r[src].strip()[:60]:60s} {why}")
