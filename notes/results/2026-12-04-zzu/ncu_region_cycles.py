import csv,sys
rows=list(csv.reader(open(sys.argv[1])))
h=rows[1]; data=rows[2:]
ix={n:i for i,n in enumerate(h)}
def f(r,n):
    try: return float(r[ix[n]].replace(',',''))
    except: return 0.0
base=int(data[0][0],16)
loop=[r for r in data if f(r,"Instructions Executed")==507904]
sel=sum(f(r,"stall_selected") for r in loop)/len(loop)
print("avg selected per loop instr",sel)
for a,b in [(0x2880,0x2b90),(0x2b90,0x35a0),(0x35a0,0x3630),(0x3630,0x3640),(0x3640,0x3a50),(0x3a50,0x3d90),(0x3d90,0x49e0),(0x2880,0x49e0)]:
    s=[r for r in data if a<=int(r[0],16)-base<b]
    print(hex(a),hex(b),len(s),"instrs  est cycles",round(sum(f(r,"Warp Stall Sampling (All Samples)") for r in s)/sel))
