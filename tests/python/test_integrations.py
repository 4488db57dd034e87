"""opt_einsum's backend="tnrt", cotengra's implementation= (tuple and registered "tnrt"), quimb."""

import numpy as np
import pytest
from conftest import rand

import tnrt
import tnrt.cotengra


def test_opt_einsum_backend(rng):
    oe = pytest.importorskip("opt_einsum")
    ops = [rand(rng, s, np.float64) for s in [(3, 4), (4, 5, 2), (5, 6), (2, 6, 3)]]
    eq = "ab,bcd,ce,dea->"
    want = np.einsum(eq, *ops)
    for backend in ("tnrt", "tnrt.opt_einsum_backend"):
        np.testing.assert_allclose(oe.contract(eq, *ops, backend=backend), want, rtol=1e-10)
    expr = oe.contract_expression("ab,bc->ca", (3, 4), (4, 5))
    np.testing.assert_allclose(expr(ops[0], rand(rng, (4, 5), np.float64), backend="tnrt").shape, (5, 3))


def test_tensordot_and_transpose(rng):
    a, b = rand(rng, (3, 4, 5), np.float64), rand(rng, (5, 4, 2), np.float64)
    np.testing.assert_allclose(tnrt.tensordot(a, b, axes=([1, 2], [1, 0])), np.tensordot(a, b, axes=([1, 2], [1, 0])))
    np.testing.assert_allclose(tnrt.tensordot(a, rand(rng, (5, 2), np.float64), axes=1).shape, (3, 4, 2))
    np.testing.assert_allclose(tnrt.transpose(a, (2, 0, 1)), a.transpose(2, 0, 1))


def _network(rng, ctg):
    inputs, output, _, sizes = ctg.utils.rand_equation(8, 3, n_out=2, seed=7)
    arrays = [rand(rng, tuple(sizes[c] for c in t), np.complex128) for t in inputs]
    return inputs, output, sizes, arrays


def test_cotengra_tuple_and_registered(rng):
    ctg = pytest.importorskip("cotengra")
    inputs, output, sizes, arrays = _network(rng, ctg)
    want = ctg.array_contract(arrays, inputs, output)
    got = ctg.array_contract(arrays, inputs, output, implementation=tnrt.cotengra.IMPLEMENTATION)
    np.testing.assert_allclose(got, want, rtol=1e-10)
    tnrt.register_cotengra()
    got = ctg.array_contract(arrays, inputs, output, implementation="tnrt")
    np.testing.assert_allclose(got, want, rtol=1e-10)
    tree = ctg.array_contract_tree(inputs, output, sizes, optimize="greedy")
    c = tnrt.cotengra.TnrtContractor(tree)
    np.testing.assert_allclose(c(*arrays), want, rtol=1e-10)
    arrays2 = [a * 2 for a in arrays]
    np.testing.assert_allclose(c(*arrays2), want * 2 ** len(arrays), rtol=1e-10)  # reset_operands path
    np.testing.assert_allclose(tree.contract(arrays, implementation="tnrt"), want, rtol=1e-10)


def test_quimb_contract(rng):
    qtn = pytest.importorskip("quimb.tensor")
    pytest.importorskip("cotengra")
    tnrt.register_cotengra()
    tn = qtn.TN_rand_reg(10, 3, D=2, seed=3, dtype="complex128")
    want = tn.contract(..., optimize="greedy")
    got = tn.contract(..., optimize="greedy", implementation="tnrt")
    np.testing.assert_allclose(got, want, rtol=1e-9)


def test_cotengra_sliced_tree(rng):
    """A cotengra tree with sliced indices: TnrtContractor(handle_slicing=True) sums the slices with
    tnrt's sliced program; tree.contract(implementation="tnrt") loops over them in cotengra."""
    ctg = pytest.importorskip("cotengra")
    inputs, output, sizes, arrays = _network(rng, ctg)
    want = ctg.array_contract(arrays, inputs, output)
    tree = ctg.array_contract_tree(inputs, output, sizes, optimize="greedy")
    summed = sorted(ix for ix in sizes if ix not in output and sizes[ix] > 1)[:1]
    kept = sorted(ix for ix in output if sizes[ix] > 1)[:1]
    for ixs in (summed, kept, summed + kept):
        if not ixs:
            continue
        t = tree.copy()
        for ix in ixs:
            t.remove_ind_(ix)
        assert set(t.sliced_inds) == set(ixs)
        c = tnrt.cotengra.TnrtContractor(t, handle_slicing=True)
        np.testing.assert_allclose(c(*arrays), want, rtol=1e-10)
        assert c.network.stats["slicing"]["slices"] == t.multiplicity
        tnrt.register_cotengra()
        np.testing.assert_allclose(t.contract(arrays, implementation="tnrt"), want, rtol=1e-10)


def test_network_slicing_and_memory_limit(rng):
    ops = [rand(rng, s, np.float64) for s in [(8, 16), (16, 16), (16, 16), (16, 8)]]
    want = np.einsum("ab,bc,cd,de->ae", *ops)
    with tnrt.Network("ab,bc,cd,de->ae", *ops) as net:
        _, info = net.contract_path(optimize=[(0, 1), (0, 1), (0, 1)], slicing=["c", "a"])
        assert info["slicing"]["slices"] == 16 * 8 and info["slicing"]["labels"] == ["c", "a"]
        np.testing.assert_allclose(net.contract(), want, rtol=1e-12)
    with tnrt.Network("ab,bc,cd,de->ae", *ops) as net:
        _, info = net.contract_path(memory_limit=3000)
        assert info["slicing"]["slices"] > 1 and info["slicing"]["predicted_bytes"] <= 3000
        np.testing.assert_allclose(net.contract(), want, rtol=1e-12)
    with tnrt.Network("ab,bc,cd,de->ae", *ops) as net:
        with pytest.raises(tnrt.ShapeError, match="no index 'z'"):
            net.contract_path(slicing=["z"])
    with tnrt.Network("ab,bc,cd,de->ae", *ops) as net:
        with pytest.raises(MemoryError):
            net.contract_path(memory_limit=64)


def test_cotengra_contraction_tree_round_trip(rng):
    """tnrt's path out as a cotengra ContractionTree and back in: the same path, cotengra's cost
    matching tnrt's, the tree's contraction equal to numpy's, and the path file the CLI reads."""
    ctg = pytest.importorskip("cotengra")
    import json

    eq = "ab,bc,cd,de->ae"
    shapes = [(4, 50), (50, 60), (60, 70), (70, 5)]
    tree = tnrt.cotengra.contraction_tree(eq, shapes, dtype="float64")  # the model's bytes are the dtype's
    assert isinstance(tree, ctg.ContractionTree)
    arrays = [rand(rng, s, "float64") for s in shapes]
    net = tnrt.Network(eq, *arrays)
    path, info = net.contract_path()  # "auto": the same search
    assert [tuple(p) for p in tree.get_path()] == [tuple(p) for p in path]
    assert tree.contraction_cost() == pytest.approx(info["flops"], rel=1e-9)  # both count multiply-adds
    assert info["model_ms"] > 0
    # the tree's path back into tnrt gives the same result as numpy
    got = tnrt.einsum(eq, *arrays, optimize=tree)
    np.testing.assert_allclose(got, np.einsum(eq, *arrays), rtol=1e-12)
    np.testing.assert_allclose(tree.contract(arrays), np.einsum(eq, *arrays), rtol=1e-12)
    # implicit output; the tree's path, json-dumped as `tnrt contract --path-file` reads it, is a
    # plain list that tnrt takes back as `optimize=` with the same result
    t2 = tnrt.cotengra.contraction_tree("ab,bc,cd,de", shapes, optimize="greedy")
    assert "".join(t2.output) == "ae"
    dumped = json.loads(json.dumps([list(p) for p in t2.get_path()]))
    np.testing.assert_allclose(tnrt.einsum("ab,bc,cd,de", *arrays, optimize=dumped), np.einsum(eq, *arrays), rtol=1e-12)
    with pytest.raises(tnrt.ShapeError):
        tnrt.cotengra.contraction_tree(eq, shapes[:3])
    with pytest.raises(tnrt.ShapeError):
        tnrt.cotengra.contraction_tree(eq, [(4, 50), (51, 60), (60, 70), (70, 5)])
