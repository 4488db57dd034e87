"""1100 2x2 einsums from Python on the CPU engine (100, then 1000), for strace to count the opens of
/sys/devices/system/cpu/online: see README.md."""
import numpy as np

import tnrt

a = np.ones((2, 2), np.float32)
for _ in range(1100):
    tnrt.einsum("ij,jk->ik", a, a)
