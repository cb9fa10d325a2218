import csv,sys
rows=list(csv.reader(open(sys.argv[1])))
h=rows[1]; data=rows[2:]
ix={n:i for i,n in enumerate(h)}
def f(r,n):
    try: return float(r[ix[n]].replace(',',''))
    except: return 0.0
tot=sum(f(r,"Warp Stall Sampling (All Samples)") for r in data)
print("total samples",tot)
stalls=[n for n in h if n.startswith("stall_") and "Not Issued" not in n]
agg={s:sum(f(r,s) for r in data) for s in stalls}
for s,v in sorted(agg.items(),key=lambda x:-x[1])[:10]: print(f"{s:25s} {v:10.0f} {v/tot*100:5.1f}%")
print("top instructions:")
top=sorted(data,key=lambda r:-f(r,"Warp Stall Sampling (All Samples)"))[:int(sys.argv[2]) if len(sys.argv)>2 else 25]
for r in top:
    s=sorted(((f(r,x),x) for x in stalls),reverse=True)[:3]
    print(f'{r[0]:>6} {f(r,"Warp Stall Sampling (All Samples)")/tot*100:5.2f}% {r[1][:60]:60s} '+" ".join(f"{x[1][6:]}={x[0]:.0f}" for x in s))
