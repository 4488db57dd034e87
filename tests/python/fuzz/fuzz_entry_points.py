"""Fuzzes tnrt's Python entry points (einsum, Network) with atheris: random expressions (ellipsis,
implicit output, interleaved form, junk characters), shapes, dtypes and strides. Every call must
either return what numpy.einsum returns or raise a tnrt.TnrtError; anything else is a bug.

    python3 tests/python/fuzz/fuzz_entry_points.py -max_total_time=20     (scripts/test.sh runs this)
"""

import sys

import atheris

with atheris.instrument_imports():
    import numpy as np

    import tnrt

LETTERS = "abcdeA"
DTYPES = [np.float32, np.float64, np.complex64, np.complex128, np.int32]


def build_term(fdp, ellipsis_ok):
    n = fdp.ConsumeIntInRange(0, 4)
    t = "".join(LETTERS[fdp.ConsumeIntInRange(0, len(LETTERS) - 1)] for _ in range(n))
    if ellipsis_ok and fdp.ConsumeIntInRange(0, 4) == 0:
        pos = fdp.ConsumeIntInRange(0, len(t))
        t = t[:pos] + "..." + t[pos:]
    if fdp.ConsumeIntInRange(0, 40) == 0:
        t += fdp.PickValueInList([".", "-", ">", " ", "1", "é", "->"])
    return t


def strided(fdp, a):
    kind = fdp.ConsumeIntInRange(0, 4)
    if kind == 1 and a.ndim:
        return a.T
    if kind == 2 and a.ndim:
        return a[::-1]
    if kind == 3 and a.ndim and a.shape[0] > 1:
        big = np.concatenate([a, a], axis=0)
        return big[::2]
    return a


def TestOneInput(data):
    fdp = atheris.FuzzedDataProvider(data)
    nops = fdp.ConsumeIntInRange(1, 4)
    ellipsis_ok = fdp.ConsumeBool()
    terms = [build_term(fdp, ellipsis_ok) for _ in range(nops)]
    explicit = fdp.ConsumeBool()
    eq = ",".join(terms) + ("->" + build_term(fdp, ellipsis_ok) if explicit else "")
    extents = {c: fdp.ConsumeIntInRange(1, 3) for c in LETTERS}
    dtype = DTYPES[fdp.ConsumeIntInRange(0, len(DTYPES) - 1)]
    mixed = fdp.ConsumeIntInRange(0, 20) == 0
    ell_dims = [fdp.ConsumeIntInRange(1, 2) for _ in range(fdp.ConsumeIntInRange(0, 2))]
    ops = []
    for i, t in enumerate(terms):
        parts = t.split("...")
        shape = [extents[c] for c in parts[0] if c in extents]
        for part in parts[1:]:
            shape += ell_dims + [extents[c] for c in part if c in extents]
        if fdp.ConsumeIntInRange(0, 30) == 0:
            shape.append(2)  # a wrong rank now and then
        d = np.float64 if (mixed and i == 1) else dtype
        a = (np.arange(int(np.prod(shape)) if shape else 1, dtype=np.float64).reshape(shape) % 7 - 3).astype(d)
        ops.append(strided(fdp, a))
    try:
        want = np.einsum(eq, *ops)
    except Exception:  # noqa: BLE001 - numpy refuses: tnrt must refuse too (or agree)
        want = None
    try:
        if fdp.ConsumeBool():
            got = tnrt.einsum(eq, *ops, optimize=fdp.PickValueInList(["auto", "greedy", False]))
        else:
            with tnrt.Network(eq, *ops) as net:
                got = net.contract()
    except tnrt.TnrtError:
        return
    if want is None:
        if not eq.isascii():
            return  # tnrt takes any Unicode letter as a label; numpy only ASCII ones
        # tnrt accepting what numpy refuses is reported, to be looked at.
        raise AssertionError(f"tnrt accepted {eq!r} with shapes {[o.shape for o in ops]} that numpy refuses")
    if np.issubdtype(np.asarray(want).dtype, np.integer):
        raise AssertionError(f"tnrt accepted integer operands for {eq!r}")
    tol = 1e-3 if np.asarray(want).dtype in (np.float32, np.complex64) else 1e-9
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, float(np.max(np.abs(want))) if np.size(want) else 1.0))


if __name__ == "__main__":
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
