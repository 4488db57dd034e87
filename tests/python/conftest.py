"""Shared helpers for the Python tests. The package comes from `pip install .` or from the build
tree (scripts/test.sh puts build/python on PYTHONPATH)."""

import numpy as np
import pytest

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def rand(rng, shape, dtype):
    a = rng.uniform(-1, 1, size=shape)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.uniform(-1, 1, size=shape)
    return a.astype(dtype)


def tol(dtype):
    return 1e-4 if dtype in (np.float32, np.complex64) else 1e-10


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
