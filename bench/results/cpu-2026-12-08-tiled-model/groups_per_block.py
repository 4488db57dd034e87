import json, re, subprocess, statistics, sys
regs = json.load(open(sys.argv[1]))  # instantiation (type,K_MAX,V,MODE) -> registers
dt = {'reference': 'f32'}
nets = [("reference","column","f32"),("rqc-4x5-c14-amp","column","c64"),("rqc-5x6-c12-amp","planned","c64"),("qaoa-maxcut-n24-p4","column","c64"),
        ("qaoa-zz-n60-p4","row","c64"),("regular4-n70","row","f32"),("hyper-n90-r3-e3","planned","f32"),("lattice-10x10-d4","row","f32"),("peps-norm-5x5-D4","planned","f32")]
es = {'f32':4,'f64':8,'c64':8,'c128':16}
mode_of = {0:None,1:2,2:3,3:4}  # vec_kind -> MODE (scalar/reuse decided by reuse)
print("| network | layout | tiled steps | groups per resident block: median (min-max) | steps with at most 2 |")
print("|---|---|---:|---:|---:|")
for n,l,t in nets:
    f = "data/tensornetwork_permutation_optimized.json" if n=="reference" else f"bench/suites/families/{n}.json"
    out = subprocess.run([sys.argv[2], f, l, "1"], capture_output=True, text=True).stdout
    g=[]
    for line in out.splitlines():
        m = re.search(r"k (\d+) vec (\d+) kind (\d+) reuse (\d+) \| tile_big (\d+) tile_d (\d+) group (\d+) tiles (\d+) groups (\d+)", line)
        if not m: continue
        k,vec,kind,reuse,tb,td,grp,tiles,groups = map(int, m.groups())
        kmax = 1
        while kmax < k: kmax *= 2
        mode = mode_of[kind] if kind else (1 if reuse else 0)
        key = f"{t},{kmax},{vec},{mode}"
        r = regs.get(key)
        if r is None: continue
        r = (r + 7)//8*8
        by_regs = 65536 // (r*256)
        smem = 3*grp*tb*es[t] + 2048 + 1024
        by_smem = (228*1024) // smem
        per_sm = max(1, min(by_regs, by_smem, 8))
        resident = per_sm * 132
        g.append(groups / min(groups, resident) if groups else 0)
    if g:
        print(f"| {n} | {l} | {len(g)} | {statistics.median(g):.1f} ({min(g):.1f}-{max(g):.1f}) | {sum(1 for x in g if x <= 2)} |")
