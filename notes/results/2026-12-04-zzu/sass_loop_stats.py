import re,sys,collections
lines=[l for l in open(sys.argv[1])]
ins=[]
for l in lines:
    m=re.match(r'\s*/\*([0-9a-f]+)\*/\s+(.*?);',l)
    if m: ins.append((int(m.group(1),16),m.group(2).strip()))
# find the BAR.ARV followed by DEPBAR 0x1 (loop's S wait)
for i,(a,t) in enumerate(ins):
    if 'DEPBAR.LE gsb0, 0x1' in t: k=i;break
# next DEPBAR 0x0 after k (could be jumped)
for j in range(k+1,len(ins)):
    if 'DEPBAR.LE gsb0, 0x0' in ins[j][1]: w=j;break
# back edge: first BRA after w whose target < ins[w][0]
for e in range(w+1,len(ins)):
    m=re.search(r'BRA (0x[0-9a-f]+)',ins[e][1])
    if m and int(m.group(1),16)<ins[k][0]: break
body=ins[w+1:e+1]
c=collections.Counter(t.split()[0] if not t.startswith('@') else t.split()[1] for _,t in body)
print(sys.argv[1], hex(ins[k][0]), hex(ins[w][0]), hex(ins[e][0]), len(body), sorted(c.items(),key=lambda x:-x[1])[:12])
