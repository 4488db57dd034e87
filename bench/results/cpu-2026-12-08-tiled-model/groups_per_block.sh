# From the repo root, after divisions.sh (it builds /tmp/div_old from main): for the tiled steps of nine
# memory-bound networks, how many tile groups each resident block of the kernel runs. Residency comes from
# each instantiation's registers (cuobjdump -res-usage of main's tiled.cu.o; CUOBJDUMP names the tool,
# which the cuda-cuobjdump wheel or a CUDA toolkit provides), 256 threads a block, 64K registers and
# 228 KiB of shared memory a multiprocessor, 132 multiprocessors (an H100 or H200).
set -e
D=bench/results/cpu-2026-12-08-tiled-model
CUOBJDUMP=${CUOBJDUMP:-cuobjdump}
$CUOBJDUMP -res-usage build/CMakeFiles/tnrt_cuda.dir/src/cuda/tiled.cu.o 2>&1 | grep -A1 "Function" | paste - - | sed 's/.*tiled_kernel//' | python3 -c "
import sys, re, json
d = {}
names = {'f': 'f32', 'd': 'f64', 'NS0_14device_complexIfEE': 'c64', 'NS0_14device_complexIdEE': 'c128'}
for l in sys.stdin:
    m = re.match(r'I(.*?)Li(\d+)ELi(\d+)ELi(\d+)EEEvNS_12tiled_recordE:.*REG:(\d+)', l.strip())
    if m:
        t, k, v, mode, reg = m.groups()
        d[f'{names.get(t, t)},{k},{v},{mode}'] = int(reg)
json.dump(d, open('/tmp/tiled_regs.json', 'w'))
"
python3 $D/groups_per_block.py /tmp/tiled_regs.json /tmp/div_old > $D/groups-per-block.md
