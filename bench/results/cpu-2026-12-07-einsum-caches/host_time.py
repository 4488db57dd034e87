"""A 2x2 einsum's host time on the CPU engine, and its preparation alone (best of 5 x 20000 calls)."""
import timeit

import numpy as np

import tnrt
from tnrt import _core

a = np.ones((2, 2), np.float32)
b = np.ones((2, 2), np.float32)
eq = "ij,jk->ik"
n = 20000


def best_us(f):
    return min(timeit.repeat(f, number=n, repeat=5)) / n * 1e6


print("einsum %.1f us" % best_us(lambda: tnrt.einsum(eq, a, b)))
print("_Prepared %.1f us" % best_us(lambda: _core._Prepared(eq, (a, b))))
print("_Prepared + build %.1f us" % best_us(lambda: _core._Prepared(eq, (a, b)).build("auto")))
