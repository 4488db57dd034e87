# The SASS size of each chain_kernel instantiation in a compiled chain.cu object:
#   cuobjdump -sass chain.cu.o > k.sass && python3 code_size.py k.sass
# (cuobjdump from the nvidia-cuda-cuobjdump wheel; objects compiled with the build's nvcc flags for
# sm_90: e08b2a0's chain.cu and d676561's)
import re, statistics, sys

cur, n = None, {}
for line in open(sys.argv[1]):
    m = re.search(r"Function : (\S+)", line)
    if m:
        cur = m.group(1)
        n[cur] = 0
        continue
    if cur and re.match(r"\s+/\*[0-9a-f]+\*/\s+[A-Z@]", line):
        n[cur] += 1
def label(k):  # element type and K_MAX of chain_kernel<T, K_MAX, V, P>
    m = re.search(r"chain_kernelI(NS0_14device_complexI([fd])EE|([fd]))Li(\d+)", k)
    t = {"f": "c64", "d": "c128"}[m.group(2)] if m.group(2) else {"f": "f32", "d": "f64"}[m.group(3)]
    return f"{t} K_MAX {m.group(4)}"
vals = sorted((v, label(k)) for k, v in n.items() if "chain_kernel" in k)
print(f"{len(vals)} kernels; instructions min {vals[0][0]}, median {statistics.median(v for v, _ in vals):.0f}, "
      f"max {vals[-1][0]} ({vals[-1][0] * 16 / 1024:.0f} KiB at 16 bytes an instruction)")
for v, k in vals:
    print(f"  {k}: {v}")
