"""NumPy (and torch CPU) operands on the CPU engine against numpy.einsum."""

import numpy as np
import pytest
from conftest import DTYPES, rand, tol

import tnrt

CASES = [
    ("ab,bc->ac", [(3, 4), (4, 5)]),
    ("ab,bc", [(3, 4), (4, 5)]),
    ("ba", [(3, 4)]),
    ("ii->", [(4, 4)]),
    ("ii->i", [(4, 4)]),
    ("ab->", [(3, 4)]),
    ("a,b->ab", [(3,), (5,)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ab,ab,ab->a", [(3, 4), (3, 4), (3, 4)]),
    ("abc,cd,de,ea->b", [(2, 3, 4), (4, 5), (5, 2), (2, 2)]),
    (",ab->ab", [(), (2, 3)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,jk", [(2, 2, 3, 4), (4, 5)]),
    ("i...,i...->...", [(3, 2, 2), (3, 2, 2)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),  # size-1 broadcast of an ellipsis dim
    ("ij...->ji...", [(2, 3, 4)]),
    ("Ab,bC->AC", [(2, 3), (3, 2)]),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("eq,shapes", CASES, ids=[c[0] for c in CASES])
def test_against_numpy(rng, eq, shapes, dtype):
    ops = [rand(rng, s, dtype) for s in shapes]
    want = np.einsum(eq, *ops)
    got = tnrt.einsum(eq, *ops)
    assert isinstance(got, np.ndarray)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=tol(dtype), atol=tol(dtype))


def test_interleaved(rng):
    a, b = rand(rng, (3, 4), np.float64), rand(rng, (4, 5), np.float64)
    np.testing.assert_allclose(tnrt.einsum(a, [0, 1], b, [1, 2], [0, 2]), a @ b)
    np.testing.assert_allclose(tnrt.einsum(a, [0, 1], b, [1, 2]), np.einsum(a, [0, 1], b, [1, 2]))
    c = rand(rng, (2, 3, 4), np.float64)
    np.testing.assert_allclose(tnrt.einsum(c, [Ellipsis, 1], b, [1, 2], [Ellipsis, 2]),
                               np.einsum(c, [Ellipsis, 1], b, [1, 2], [Ellipsis, 2]))


@pytest.mark.parametrize("optimize", ["auto", "greedy", "optimal", True, False, [(0, 1), (0, 1)],
                                      ["einsum_path", (1, 2), (0, 1)]])
def test_optimize_forms(rng, optimize):
    ops = [rand(rng, s, np.float64) for s in [(3, 4), (4, 5), (5, 6)]]
    np.testing.assert_allclose(tnrt.einsum("ab,bc,cd->ad", *ops, optimize=optimize), ops[0] @ ops[1] @ ops[2])


def test_optimize_hyper_on_a_ring(rng):
    # 12 matrices in a ring (a trace of their product): the hyper search's path gives numpy's value
    letters = "abcdefghijkl"
    eq = ",".join(letters[i] + letters[(i + 1) % 12] for i in range(12)) + "->"
    ops = [rand(rng, (3, 3), np.float64) for _ in range(12)]
    want = np.einsum(eq, *ops, optimize="greedy")
    for name in ("hyper", "random-greedy"):
        np.testing.assert_allclose(tnrt.einsum(eq, *ops, optimize=name), want, rtol=1e-12)
    with pytest.raises(ValueError):
        tnrt.einsum(eq, *ops, optimize="no-such-optimizer")


def test_optimize_numpy_einsum_path(rng):
    ops = [rand(rng, s, np.float64) for s in [(3, 4), (4, 5), (5, 6)]]
    path, _ = np.einsum_path("ab,bc,cd->ad", *ops, optimize="optimal")
    np.testing.assert_allclose(tnrt.einsum("ab,bc,cd->ad", *ops, optimize=path), ops[0] @ ops[1] @ ops[2])


def test_optimize_cotengra_tree(rng):
    ctg = pytest.importorskip("cotengra")
    ops = [rand(rng, s, np.float64) for s in [(3, 4), (4, 5), (5, 6)]]
    tree = ctg.einsum_tree("ab,bc,cd->ad", *[o.shape for o in ops])
    np.testing.assert_allclose(tnrt.einsum("ab,bc,cd->ad", *ops, optimize=tree), ops[0] @ ops[1] @ ops[2])
    opt = ctg.HyperOptimizer(max_repeats=4, methods=["greedy"], progbar=False)
    np.testing.assert_allclose(tnrt.einsum("ab,bc,cd->ad", *ops, optimize=opt), ops[0] @ ops[1] @ ops[2])


def test_strided_numpy_inputs_work(rng):
    # Decision: a NumPy operand of any strides (non-contiguous, Fortran, negative) works: the CPU
    # engine reads row-major host tensors, so it is copied once.
    a = rand(rng, (6, 8), np.float64)
    b = rand(rng, (8, 5), np.float64)
    for x in (a[::2, ::2], a.T, a[::-1], a[:, ::-3], np.asfortranarray(a)):
        y = rand(rng, (x.shape[1], 3), np.float64)
        np.testing.assert_allclose(tnrt.einsum("ab,bc->ac", x, y), x @ y)
    ro = b.copy()
    ro.flags.writeable = False
    np.testing.assert_allclose(tnrt.einsum("ab->ba", ro), b.T)


def test_out_and_lists(rng):
    a, b = rand(rng, (3, 4), np.float32), rand(rng, (4, 5), np.float32)
    out = np.empty((3, 5), np.float32)
    r = tnrt.einsum("ab,bc->ac", a, b, out=out)
    assert r is out
    np.testing.assert_allclose(out, a @ b, rtol=1e-5)
    np.testing.assert_allclose(tnrt.einsum("i,i->", [1.0, 2.0], [3.0, 4.0]), 11.0)


def test_torch_cpu_returns_torch(rng):
    torch = pytest.importorskip("torch")
    a, b = torch.rand(3, 4, dtype=torch.float64), torch.rand(4, 5, dtype=torch.float64)
    r = tnrt.einsum("ab,bc->ac", a, b)
    assert isinstance(r, torch.Tensor)
    torch.testing.assert_close(r, a @ b)


def test_network_lifecycle(rng):
    ops = [rand(rng, s, np.complex128) for s in [(3, 4), (4, 5), (5, 2)]]
    with tnrt.Network("ab,bc,cd->ad", *ops) as net:
        path, info = net.contract_path(optimize="greedy")
        assert len(path) == 2 and info["flops"] > 0
        net.compile()
        np.testing.assert_allclose(net.contract(), ops[0] @ ops[1] @ ops[2])
        new = [rand(rng, o.shape, np.complex128) for o in ops]
        net.reset_operands(*new)
        np.testing.assert_allclose(net.contract(), new[0] @ new[1] @ new[2])
        assert isinstance(net.stats, dict) and isinstance(net.memory, dict)
    with pytest.raises(tnrt.StateError):
        net.contract()


def test_network_interleaved_and_implicit_path(rng):
    a, b = rand(rng, (3, 4), np.float64), rand(rng, (4, 5), np.float64)
    net = tnrt.Network(a, [0, 1], b, [1, 2], [0, 2])
    np.testing.assert_allclose(net.contract(), a @ b)  # contract_path implied
    net.free()


def test_load_einsum_json_and_tree_json():
    import json
    import pathlib
    data = pathlib.Path(__file__).resolve().parents[1] / "data"
    spec = json.loads((data / "einsum_small.json").read_text())
    p = tnrt.load(data / "einsum_small.json", dtype="float64")
    rng = np.random.default_rng(0)
    ops = [rng.uniform(-1, 1, size=s) for s in p.input_shapes]
    np.testing.assert_allclose(tnrt.Network(p, *ops).contract(), np.einsum(spec["format_string"], *ops), rtol=1e-10)
    t = tnrt.load(data / "tree_small.json")
    assert t.dtype == "f32" and t.steps >= 1
    ops = [rng.uniform(-1, 1, size=s).astype(np.float32) for s in t.input_shapes]
    assert tnrt.Network(t, *ops).contract().shape == tuple(t.output_shape)


def test_threads_share_the_cpu_context(rng):
    import concurrent.futures as cf
    a, b = rand(rng, (40, 50), np.float64), rand(rng, (50, 30), np.float64)
    with cf.ThreadPoolExecutor(8) as pool:
        for r in pool.map(lambda _: tnrt.einsum("ab,bc->ac", a, b), range(32)):
            np.testing.assert_allclose(r, a @ b)


def test_einsum_searches_a_path_once_per_expression_shapes_and_optimizer(monkeypatch):
    """A repeated einsum reuses its searched path; new shapes or another optimizer search again."""
    from tnrt import _core
    _core._searched_path.cache_clear()
    calls = []
    real = _core._tnrt.linear_path

    def counting(eq, shapes, optimize, dtype):
        calls.append((eq, tuple(map(tuple, shapes)), optimize))
        return real(eq, shapes, optimize, dtype)

    monkeypatch.setattr(_core._tnrt, "linear_path", counting)
    a, b, c = (np.arange(n, dtype=np.float32).reshape(s) for n, s in ((6, (2, 3)), (12, (3, 4)), (15, (3, 5))))
    for _ in range(3):
        np.testing.assert_allclose(tnrt.einsum("ij,jk->ik", a, b), a @ b)
    assert len(calls) == 1
    np.testing.assert_allclose(tnrt.einsum("ij,jk->ik", a, c), a @ c)
    assert len(calls) == 2 and calls[1][1] == ((2, 3), (3, 5))
    np.testing.assert_allclose(tnrt.einsum("ij,jk->ik", a, b, optimize="greedy"), a @ b)
    assert len(calls) == 3 and calls[2][2] == "greedy"


def test_repeated_einsum_resolves_once(rng):
    """A repeated einsum with a named optimizer finds its normalized expression, path and problem in
    one cache lookup each (the host time of small calls), and still computes the right thing; an
    expression with an ellipsis is never taken from the plain-expression cache."""
    from tnrt import _core, _expr
    a, b = rand(rng, (3, 4), np.float64), rand(rng, (4, 5), np.float64)
    eq = "ij , jk"  # spaces and no output: normalized once
    first = tnrt.einsum(eq, a, b)
    before = _core._path_and_problem.cache_info().hits, _expr._plain.cache_info().hits
    second = tnrt.einsum(eq, a, b)
    after = _core._path_and_problem.cache_info().hits, _expr._plain.cache_info().hits
    assert after[0] == before[0] + 1 and after[1] >= before[1] + 1
    np.testing.assert_allclose(first, a @ b, rtol=1e-12)
    np.testing.assert_array_equal(first, second)
    c = rand(rng, (2, 3, 4), np.float64)
    np.testing.assert_allclose(tnrt.einsum("...ij,jk", c, b), np.einsum("...ij,jk", c, b), rtol=1e-12)
    assert _expr._plain("...ij,jk", 2) is None
