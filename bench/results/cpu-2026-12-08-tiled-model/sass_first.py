"""The SASS instructions before each kernel's first LDGSTS (cp.async), and the MUFU.RCP (integer
divisions) among them: cuobjdump -sass output, per kernel whose name contains ARGV[2], and the medians.

    python3 sass_first.py SASS.txt [NAME_PART]
"""
import re,sys
s=open(sys.argv[1]).read()
funcs=re.split(r'\n\s*Function : ', s)[1:]
rows=[]
for f in funcs:
    name=f.split('\n',1)[0].strip()
    ins=re.findall(r'/\*([0-9a-f]{4,})\*/\s+([^;]*);', f)
    first=None; divs=0
    for i,(addr,txt) in enumerate(ins):
        if 'LDGSTS' in txt:
            first=i;break
    pre=ins[:first] if first is not None else ins
    mufu=sum(1 for a,t in pre if 'MUFU.RCP' in t)
    rows.append((name,len(ins),first,mufu))
want=sys.argv[2] if len(sys.argv)>2 else ''
for name,n,first,mufu in rows:
    if want in name: print(first, mufu, n, name[:160])
vals=[r[2] for r in rows if r[2] is not None]
print("kernels",len(rows),"instr before first LDGSTS: median", sorted(vals)[len(vals)//2], "min",min(vals),"max",max(vals),
      "; MUFU.RCP (divisions) before it: median", sorted(r[3] for r in rows)[len(rows)//2])
