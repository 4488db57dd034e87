"""cotengra and quimb through tnrt.

Two ways in, both working with the cotengra on PyPI (0.8):

* whole network (the one to use): ``TnrtContractor(tree)``, shaped like cotengra's
  ``CuQuantumContractor``: the first call builds a tnrt.Network from the tree's equation and path
  (and compiles it on a GPU), later calls only reset_operands and contract. cotengra accepts
  whole-network contractors only by name ("cuquantum"), so ``register()`` teaches
  ``cotengra.contract.make_contractor`` (which ``ContractionTree.get_contractor`` and quimb reach)
  the name "tnrt"; then ``tree.contract(arrays, implementation="tnrt")``,
  ``cotengra.array_contract(..., implementation="tnrt")`` and
  ``tn.contract(..., optimize=opt, implementation="tnrt")`` in quimb work.
* pairwise, needing no registration: ``implementation=IMPLEMENTATION``, cotengra's
  ``(einsum, tensordot)`` tuple form; each pairwise step is one tnrt call.
"""

from . import _core

#: cotengra's tuple form of `implementation=`: (einsum_fn, tensordot_fn).
IMPLEMENTATION = (_core.einsum, _core.tensordot)


class TnrtContractor:
    """Contracts a cotengra ContractionTree with tnrt, building the network once."""

    def __init__(self, tree, handle_slicing=False, compile=True, **kwargs):
        if kwargs.pop("strip_exponent", None):
            raise ValueError("strip_exponent=True is not supported with tnrt")
        kwargs.pop("check_zero", None)
        kwargs.pop("progbar", None)
        if tree.has_preprocessing():
            raise ValueError("cotengra trees with preprocessing are not supported with tnrt")
        # handle_slicing=True (as CuQuantumContractor's): called with the unsliced arrays, the tree's
        # sliced indices summed by tnrt's sliced program (each slice a replay of one compiled
        # program). False (the default, and what tree.contract uses: it loops over the slices
        # itself): called with one slice's arrays, on the sliced equation.
        self.slicing = list(tree.sliced_inds) if (handle_slicing and tree.sliced_inds) else None
        self.eq = tree.get_eq() if self.slicing else tree.get_eq_sliced()
        self.path = [tuple(p) for p in tree.get_path()] if tree.is_complete() else "auto"
        self.compile = compile
        self.network = None

    def setup(self, *arrays):
        self.network = _core.Network(self.eq, *arrays)
        self.network.contract_path(optimize=self.path, slicing=self.slicing)
        if self.compile and self.network._prep.is_cuda and not self.slicing:
            self.network.compile()

    def __call__(self, *arrays, check_zero=False, backend=None, progbar=False):
        if self.network is None:
            self.setup(*arrays)
        else:
            self.network.reset_operands(*arrays)
        return self.network.contract()

    def __del__(self):
        if getattr(self, "network", None) is not None:
            self.network.free()


def contraction_tree(eq, shapes, optimize="auto", dtype="float32"):
    """tnrt's path for `eq` over operands of `shapes` as a cotengra ``ContractionTree``, for
    cotengra's tools (slicing, plots, any backend) or to keep: ``json.dump(tree.get_path(), f)``
    writes what ``tnrt contract --path-file`` reads. `optimize` is what tnrt.einsum takes ("auto":
    tnrt's search scored by its cost model for `dtype`). An implicit output ("ab,bc") is NumPy's:
    the indices that occur once, sorted."""
    import cotengra as ctg

    shapes = [tuple(int(e) for e in s) for s in shapes]
    if "->" in eq:
        lhs, out = eq.replace(" ", "").split("->")
    else:
        lhs = eq.replace(" ", "")
        chars = lhs.replace(",", "")
        out = "".join(sorted(c for c in set(chars) if chars.count(c) == 1))
    inputs = lhs.split(",")
    if "." in lhs or "." in out:
        raise _core.UsageError("contraction_tree: '...' is not supported here; name the broadcast indices")
    if len(inputs) != len(shapes):
        raise _core.ShapeError(f"contraction_tree: {len(inputs)} operands in '{eq}' but {len(shapes)} shapes")
    size = {}
    for term, shape in zip(inputs, shapes):
        if len(term) != len(shape):
            raise _core.ShapeError(f"contraction_tree: operand '{term}' has {len(term)} indices but shape {shape}")
        for c, e in zip(term, shape):
            if size.setdefault(c, e) != e:
                raise _core.ShapeError(f"contraction_tree: index '{c}' has extents {size[c]} and {e}")
    path = _core.resolve_path(optimize, lhs + "->" + out, shapes, dtype)
    return ctg.ContractionTree.from_path([tuple(t) for t in inputs], tuple(out), size, path=[tuple(p) for p in path])


_registered = False


def register():
    """Makes implementation="tnrt" select TnrtContractor in cotengra (and so in quimb). Idempotent."""
    global _registered
    if _registered:
        return
    import importlib

    # importlib: the package's attribute `cotengra.contract` is the function, not the module.
    ctg_contract = importlib.import_module("cotengra.contract")
    ctg_core = importlib.import_module("cotengra.core")

    original = ctg_contract.make_contractor

    def make_contractor(tree, order=None, prefer_einsum=False, strip_exponent=False, check_zero=False,
                        implementation=None, autojit=False, progbar=False):
        if implementation is None:
            implementation = ctg_contract.get_default_implementation()
        if implementation == "tnrt":
            return TnrtContractor(tree, strip_exponent=strip_exponent, check_zero=check_zero, progbar=progbar)
        return original(tree, order=order, prefer_einsum=prefer_einsum, strip_exponent=strip_exponent,
                        check_zero=check_zero, implementation=implementation, autojit=autojit, progbar=progbar)

    make_contractor.__doc__ = original.__doc__
    ctg_contract.make_contractor = make_contractor
    ctg_core.make_contractor = make_contractor  # core imported it by name
    _registered = True
