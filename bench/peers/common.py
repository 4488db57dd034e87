"""What every peer of the benchmark shares: the problem (tree JSON, einsum JSON or an expression) as
a list of pairwise steps, the inputs (constant fill or tnrt's seeded random fill, bit for bit), the
bytes each step reads and writes, a NumPy reference engine, the verification rule and the report
object that tnrt's `--json` also writes.

Python 3.11+ standard library and NumPy only. Run directly it is the NumPy peer (CPU), which the
harness also uses to compute reference values for random fills:

    python3 bench/peers/common.py data/tensornetwork_permutation_optimized.json --dtype f64 \
        --fill random --seed 7 --runs 1 --warmups 0
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass, field

# The reference network's element: 220 labels of extent 2 and 550 tensors, so with every element c
# the value is 2**220 * c**550, exactly 1 for c = 2**-0.4 = 0.5**0.4 = 0.7578582832551990.
REFERENCE_FILL = 0.5 ** 0.4

DTYPES = ("f32", "f64", "c64", "c128")
NUMPY_DTYPE = {"f32": "float32", "f64": "float64", "c64": "complex64", "c128": "complex128"}
DTYPE_ALIASES = {"float32": "f32", "float64": "f64", "complex64": "c64", "complex128": "c128",
                 "single": "f32", "double": "f64"}


def canonical_dtype(text: str) -> str:
    t = DTYPE_ALIASES.get(text.lower(), text.lower())
    if t not in DTYPES:
        raise ValueError(f"unknown dtype {text!r} (one of {', '.join(DTYPES)})")
    return t


def dtype_bytes(dtype: str) -> int:
    return {"f32": 4, "f64": 8, "c64": 8, "c128": 16}[canonical_dtype(dtype)]


# --------------------------------------------------------------------------------------------------
# The problem: operands with dense integer labels, an extent per label, and pairwise steps.
# Operand ids: 0..n_inputs-1 are the inputs, n_inputs+i is the result of step i (tnrt's convention).
# --------------------------------------------------------------------------------------------------
@dataclass
class Step:
    lhs: int
    rhs: int  # -1: unary step (sum over the labels not in `out`)
    out: list[int]


@dataclass
class Problem:
    inputs: list[list[int]]
    output: list[int]
    extents: list[int]
    steps: list[Step]
    label_names: list[str] = field(default_factory=list)
    source: str = ""

    @property
    def n_inputs(self) -> int:
        return len(self.inputs)

    def result_id(self) -> int:
        return self.n_inputs + len(self.steps) - 1 if self.steps else 0

    def operand_labels(self) -> list[list[int]]:
        labels = [list(x) for x in self.inputs]
        for s in self.steps:
            labels.append(list(s.out))
        return labels

    def shape(self, labels: list[int]) -> tuple[int, ...]:
        return tuple(self.extents[l] for l in labels)

    def validate(self) -> None:
        labels = self.operand_labels()
        used = [0] * len(labels)
        for i, s in enumerate(self.steps):
            me = self.n_inputs + i
            for op in (s.lhs, s.rhs):
                if op < 0 and op is s.rhs:
                    continue
                if not 0 <= op < me:
                    raise ValueError(f"step {i}: operand {op} is not defined before the step")
                used[op] += 1
            have = set(labels[s.lhs]) | (set(labels[s.rhs]) if s.rhs >= 0 else set())
            if len(set(s.out)) != len(s.out) or not set(s.out) <= have:
                raise ValueError(f"step {i}: output labels {s.out} are not drawn from its operands")
        rid = self.result_id()
        for op, n in enumerate(used):
            if n != (0 if op == rid else 1):
                raise ValueError(f"operand {op} is consumed {n} times")
        if labels[rid] != self.output:
            raise ValueError(f"result labels {labels[rid]} differ from the output {self.output}")

    def step_bytes(self, dtype: str) -> list[int]:
        """Bytes each step reads (its operands) and writes (its result), in order."""
        eb = dtype_bytes(dtype)
        labels = self.operand_labels()
        size = [math.prod(self.shape(l)) for l in labels]
        out = []
        for i, s in enumerate(self.steps):
            b = size[s.lhs] + (size[s.rhs] if s.rhs >= 0 else 0) + size[self.n_inputs + i]
            out.append(b * eb)
        return out

    def total_bytes(self, dtype: str) -> int:
        return sum(self.step_bytes(dtype))

    def summary(self, dtype: str) -> dict:
        labels = self.operand_labels()
        inter = [math.prod(self.shape(l)) for l in labels[self.n_inputs:]] or [0]
        return {
            "source": self.source,
            "inputs": self.n_inputs,
            "labels": len(self.extents),
            "steps": len(self.steps),
            "max_labels_per_step": max((len(set(labels[s.lhs]) | (set(labels[s.rhs]) if s.rhs >= 0 else set())))
                                       for s in self.steps) if self.steps else 0,
            "largest_intermediate_elements": max(inter),
            "bytes_read_written": self.total_bytes(dtype),
        }


class _Labeler:
    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.names: list[str] = []

    def __call__(self, raw) -> int:
        key = str(raw)
        if key not in self.ids:
            self.ids[key] = len(self.names)
            self.names.append(key)
        return self.ids[key]


def load_tree_json(doc: dict, source: str = "", bond_dim: int = 2,
                   label_sizes: dict[str, int] | None = None) -> Problem:
    """TensorNetworkBenchmarks tree JSON. Post-order over the tree; each internal node is one step
    whose output is the node's iy; the operands' labels are those of the children as computed
    (leaf: the input's labels; internal node: its iy). More than two args fold left to right."""
    lab = _Labeler()
    inputs = [[lab(x) for x in ix] for ix in doc["inputs"]]
    steps: list[Step] = []
    labels: list[list[int]] = [list(x) for x in inputs]
    n_in = len(inputs)
    seen_leaf = set()

    def add(lhs: int, rhs: int, out: list[int]) -> int:
        steps.append(Step(lhs, rhs, out))
        labels.append(out)
        return n_in + len(steps) - 1

    # iterative post-order (the reference tree is 39 deep; others may be deeper than Python's stack)
    stack: list[tuple[dict, list[int] | None]] = [(doc["tree"], None)]
    results: list[int] = []
    while stack:
        node, done = stack.pop()
        if node.get("isleaf"):
            idx = int(node["tensorindex"]) - 1
            if not 0 <= idx < n_in or idx in seen_leaf:
                raise ValueError(f"{source}: leaf tensorindex {idx + 1} out of range or used twice")
            seen_leaf.add(idx)
            results.append(idx)
            continue
        args = node.get("args", [])
        if done is None:
            stack.append((node, []))
            for a in reversed(args):
                stack.append((a, None))
            continue
        kids = results[len(results) - len(args):]
        del results[len(results) - len(args):]
        iy = [lab(x) for x in node["eins"]["iy"]]
        if len(kids) == 1:
            results.append(add(kids[0], -1, iy))
            continue
        acc = kids[0]
        for k, nxt in enumerate(kids[1:], start=1):
            if k == len(kids) - 1:
                out = iy
            else:  # keep what the remaining args or the node's output still need
                need = set(iy)
                for later in kids[k + 1:]:
                    need |= set(labels[later])
                out = []
                for l in labels[acc] + labels[nxt]:
                    if l in need and l not in out:
                        out.append(l)
            acc = add(acc, nxt, out)
        results.append(acc)
    if len(results) != 1:
        raise ValueError(f"{source}: tree did not reduce to one operand")
    raw_out = doc.get("output")
    output = labels[results[0]] if raw_out is None else [lab(x) for x in raw_out]
    if not steps and inputs[0] != output:
        steps.append(Step(0, -1, output))
    sizes = label_sizes or {}
    extents = [int(sizes.get(name, bond_dim)) for name in lab.names]
    p = Problem(inputs, output, extents, steps, lab.names, source)
    p.validate()
    return p


def parse_expression(expression: str, shapes: list[list[int]]) -> tuple[list[list[int]], list[int], list[int], list[str]]:
    """'ab,bc->ac' with one shape per operand; implicit output = labels occurring once, sorted."""
    expr = expression.replace(" ", "")
    if "->" in expr:
        lhs, rhs = expr.split("->", 1)
    else:
        lhs, rhs = expr, None
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"{len(terms)} operands in {expression!r} but {len(shapes)} shapes")
    lab = _Labeler()
    inputs = [[lab(c) for c in t] for t in terms]
    if rhs is None:
        counts: dict[str, int] = {}
        for t in terms:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        rhs = "".join(sorted(c for c, n in counts.items() if n == 1))
    output = [lab(c) for c in rhs]
    extents = [0] * len(lab.names)
    for ix, shp in zip(inputs, shapes):
        if len(ix) != len(shp):
            raise ValueError(f"operand labels {ix} do not match shape {shp}")
        for l, e in zip(ix, shp):
            if extents[l] not in (0, e):
                raise ValueError(f"label {lab.names[l]!r} has extents {extents[l]} and {e}")
            extents[l] = int(e)
    return inputs, output, extents, lab.names


def parse_shapes(text: str) -> list[list[int]]:
    """'2x3,3x4' -> [[2,3],[3,4]]; '' or '-' for a scalar operand."""
    return [[] if s in ("", "-") else [int(e) for e in s.split("x")] for s in text.split(",")]


def steps_from_linear_path(inputs: list[list[int]], output: list[int], path: list[list[int]]) -> list[Step]:
    """opt_einsum's linear path -> steps, with tnrt's rule: intermediates keep the labels a remaining
    operand or the output still needs, in first-appearance order; the last step yields the output."""
    n_in = len(inputs)
    labels = [list(x) for x in inputs]
    live = list(range(n_in))
    steps: list[Step] = []
    for k, pair in enumerate(path):
        if len(pair) == 1:
            i, = pair
            a, b = live[i], -1
            rest = [x for p, x in enumerate(live) if p != i]
        else:
            i, j = pair
            if i == j or not (0 <= i < len(live) and 0 <= j < len(live)):
                raise ValueError(f"path entry {pair} invalid for {len(live)} operands")
            a, b = live[i], live[j]
            rest = [x for p, x in enumerate(live) if p not in (i, j)]
        if not rest:
            out = list(output)
        else:
            need = set(output)
            for r in rest:
                need |= set(labels[r])
            out = []
            for l in labels[a] + (labels[b] if b >= 0 else []):
                if l in need and l not in out:
                    out.append(l)
        steps.append(Step(a, b, out))
        labels.append(out)
        live = rest + [n_in + len(steps) - 1]
    if len(live) != 1:
        raise ValueError(f"path leaves {len(live)} operands")
    if labels[live[0]] != list(output):
        steps.append(Step(live[0], -1, list(output)))
    return steps


def load_einsum(expression: str, shapes: list[list[int]], path: list[list[int]] | None, source: str) -> Problem:
    inputs, output, extents, names = parse_expression(expression, shapes)
    if path is None:
        try:
            import opt_einsum  # noqa: PLC0415
            dummy = [tuple(extents[l] for l in ix) for ix in inputs]
            path, _ = opt_einsum.contract_path(expression, *dummy, shapes=True, optimize="greedy")
            path = [list(p) for p in path]
        except Exception:  # opt_einsum absent or refused: left to right
            path = [[0, 1]] * (len(inputs) - 1) if len(inputs) > 1 else []
    steps = steps_from_linear_path(inputs, output, path)
    p = Problem(inputs, output, extents, steps, names, source)
    p.validate()
    return p


def load_problem(file: str | None = None, expression: str | None = None, shapes: str | None = None,
                 bond_dim: int = 2, path_name: str = "") -> Problem:
    if expression:
        return load_einsum(expression, parse_shapes(shapes or ""), None, "expression")
    with open(file, encoding="utf-8") as f:
        doc = json.load(f)
    if "tree" in doc:
        return load_tree_json(doc, file, bond_dim=bond_dim)
    if "format_string" in doc:
        path = doc.get("path")
        paths = doc.get("paths") or {}
        if path_name:
            path = paths[path_name]["path"]
        elif path is None:
            for name in ("opt_size", "opt_flops"):
                if name in paths:
                    path = paths[name]["path"]
                    break
        return load_einsum(doc["format_string"], doc["shapes"], path, file)
    raise ValueError(f"{file}: neither a tree JSON ('tree') nor an einsum JSON ('format_string')")


def file_sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# --------------------------------------------------------------------------------------------------
# Inputs: the same values tnrt's fill_constant / fill_random write (src/core/tensor.cpp).
# --------------------------------------------------------------------------------------------------
_M = (1 << 64) - 1


def _mix_int(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & _M
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M
    return x ^ (x >> 31)


def _mix_array(x):
    import numpy as np
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def random_values(count: int, seed: int, stream: int, lo: float, hi: float, complex_: bool):
    """float64 (or complex128) array: tnrt::fill_random's values for element 0..count-1."""
    import numpy as np
    key = np.uint64(_mix_int((seed & _M) ^ _mix_int((stream + 0x632BE59BD9B4E019) & _M)))
    c = np.arange(count, dtype=np.uint64) * np.uint64(2)

    def unit(bits):
        return (bits >> np.uint64(11)).astype(np.float64) * (2.0 ** -53)

    re = lo + (hi - lo) * unit(_mix_array(key ^ c))
    if not complex_:
        return re
    im = lo + (hi - lo) * unit(_mix_array(key ^ (c + np.uint64(1))))
    return re + 1j * im


@dataclass
class Fill:
    kind: str = "constant"  # "constant" | "random"
    value: float = REFERENCE_FILL
    seed: int = 0
    lo: float = 0.0
    hi: float = 1.0
    stream_base: int = 0  # input i uses stream stream_base + i

    def describe(self) -> str:
        if self.kind == "constant":
            return f"constant {self.value!r}"
        return f"random seed {self.seed} U[{self.lo}, {self.hi}) stream {self.stream_base}+i"


def make_inputs(problem: Problem, dtype: str, fill: Fill):
    """NumPy arrays, C order, in the problem's dtype (converted from float64 as tnrt does)."""
    import numpy as np
    nd = np.dtype(NUMPY_DTYPE[canonical_dtype(dtype)])
    out = []
    for i, labels in enumerate(problem.inputs):
        shape = problem.shape(labels)
        n = math.prod(shape)
        if fill.kind == "constant":
            a = np.full(shape, fill.value, dtype=nd)
        elif fill.kind == "random":
            a = random_values(n, fill.seed, fill.stream_base + i, fill.lo, fill.hi,
                              nd.kind == "c").astype(nd).reshape(shape)
        else:
            raise ValueError(f"unknown fill {fill.kind!r}")
        out.append(a)
    return out


# --------------------------------------------------------------------------------------------------
# Per-step local labels: einsum sublists (torch, NumPy, CuPy) accept labels 0..51 only, so each
# step's labels are renumbered 0..k-1. The reference has at most ~30 labels in one step.
# --------------------------------------------------------------------------------------------------
def local_sublists(problem: Problem) -> list[tuple[list[int], list[int] | None, list[int]]]:
    labels = problem.operand_labels()
    plan = []
    for i, s in enumerate(problem.steps):
        loc: dict[int, int] = {}
        for l in labels[s.lhs] + (labels[s.rhs] if s.rhs >= 0 else []):
            loc.setdefault(l, len(loc))
        if len(loc) > 52:
            raise ValueError(f"step {i} has {len(loc)} distinct labels; einsum sublists allow 52")
        a = [loc[l] for l in labels[s.lhs]]
        b = [loc[l] for l in labels[s.rhs]] if s.rhs >= 0 else None
        plan.append((a, b, [loc[l] for l in s.out]))
    return plan


def schedule(problem: Problem) -> list[tuple[int, int, int, list[int], list[int] | None, list[int]]]:
    """(lhs id, rhs id, result id, lhs sublist, rhs sublist, out sublist) per step, plus for each
    operand the step after which it is dead is implicit: every operand is consumed exactly once."""
    return [(s.lhs, s.rhs, problem.n_inputs + i, a, b, o)
            for i, (s, (a, b, o)) in enumerate(zip(problem.steps, local_sublists(problem)))]


def fuse_modes(la: list[int], lb: list[int] | None, lo: list[int], ext: dict[int, int]):
    """Merges runs of labels that sit next to each other, in the same order, in every operand of the
    step that holds them (and play the same part: batch, free or contracted) into one label of the
    product extent: a view for row-major operands, the same contraction with fewer modes.
    Returns (la', lb', lo', shape_a, shape_b, shape_o) with labels renumbered 0..k-1."""
    seqs = [la, lo] + ([lb] if lb is not None else [])
    sig = {l: tuple(l in s for s in seqs) for s in seqs for l in s}
    nxt = []
    for s in seqs:
        nxt.append({s[i]: (s[i + 1] if i + 1 < len(s) else None) for i in range(len(s))})
    if any(len(set(s)) != len(s) for s in seqs):  # repeated labels (diagonals): leave alone
        return None

    def linked(x, y) -> bool:
        return sig[x] == sig[y] and all(n.get(x, y) == y for n in nxt if x in n)

    merged_into: dict[int, int] = {}
    for s in seqs:
        for i in range(1, len(s)):
            x, y = s[i - 1], s[i]
            if y not in merged_into and linked(x, y):
                merged_into[y] = merged_into.get(x, x)
    heads: dict[int, int] = {}
    size: dict[int, int] = {}
    for s in seqs:
        for l in s:
            h = merged_into.get(l, l)
            if h not in heads:
                heads[h] = len(heads)
    for l in sig:
        h = merged_into.get(l, l)
        size[h] = size.get(h, 1) * ext[l]

    def fused(s):
        return [heads[l] for l in s if l not in merged_into]

    def shape(s):
        return tuple(size[l] for l in s if l not in merged_into)

    return (fused(la), fused(lb) if lb is not None else None, fused(lo),
            shape(la), shape(lb) if lb is not None else None, shape(lo))


def run_tree(problem: Problem, inputs: list, einsum2, einsum1=None, keep_inputs: bool = True):
    """Runs the steps with `einsum2(a, la, b, lb, lo)` / `einsum1(a, la, lo)`; frees each operand
    once consumed (inputs stay alive when keep_inputs, as they are reused across runs)."""
    ops: list = list(inputs) + [None] * len(problem.steps)
    n_in = problem.n_inputs
    for lhs, rhs, me, a, b, o in schedule(problem):
        if rhs >= 0:
            ops[me] = einsum2(ops[lhs], a, ops[rhs], b, o)
        else:
            ops[me] = (einsum1 or (lambda x, la, lo: einsum2(x, la, None, None, lo)))(ops[lhs], a, o)
        for op in (lhs, rhs):
            if op >= n_in or (op >= 0 and not keep_inputs):
                ops[op] = None
    return ops[problem.result_id()]


# --------------------------------------------------------------------------------------------------
# NumPy reference engine: transpose-reshape-matmul (BLAS) per step; einsum for diagonals.
# --------------------------------------------------------------------------------------------------
def numpy_pair(a, la: list[int], b, lb: list[int] | None, lo: list[int]):
    import numpy as np
    if b is None:
        return np.einsum(a, la, lo)
    if len(set(la)) != len(la) or len(set(lb)) != len(lb):
        return np.einsum(a, la, b, lb, lo)
    sa, sb, so = set(la), set(lb), set(lo)
    # labels only in one operand and not in the output: sum them away first
    only_a = [l for l in la if l not in sb and l not in so]
    if only_a:
        keep = [l for l in la if l not in only_a]
        a = a.sum(axis=tuple(la.index(l) for l in only_a))
        la = keep
    only_b = [l for l in lb if l not in sa and l not in so]
    if only_b:
        keep = [l for l in lb if l not in only_b]
        b = b.sum(axis=tuple(lb.index(l) for l in only_b))
        lb = keep
    sa, sb = set(la), set(lb)
    batch = [l for l in lo if l in sa and l in sb]
    left = [l for l in lo if l in sa and l not in sb]
    right = [l for l in lo if l in sb and l not in sa]
    con = [l for l in la if l in sb and l not in so]
    ext = {l: n for l, n in zip(la, a.shape)} | {l: n for l, n in zip(lb, b.shape)}
    nB = math.prod(ext[l] for l in batch)
    nL = math.prod(ext[l] for l in left)
    nR = math.prod(ext[l] for l in right)
    nC = math.prod(ext[l] for l in con)
    A = np.ascontiguousarray(a.transpose([la.index(l) for l in batch + left + con])).reshape(nB, nL, nC)
    Bm = np.ascontiguousarray(b.transpose([lb.index(l) for l in batch + con + right])).reshape(nB, nC, nR)
    if nB == 1:
        C = (A[0] @ Bm[0])[None]
    elif nL * nR * nC <= 64:  # many tiny products: one vectorised multiply-add over the batch
        C = np.einsum("bij,bjk->bik", A, Bm)
    else:
        C = np.matmul(A, Bm)
    order = batch + left + right
    C = C.reshape([ext[l] for l in order]).transpose([order.index(l) for l in lo])
    return C if C.flags.c_contiguous else C.copy()  # (ascontiguousarray makes a 0-d array 1-d)


def numpy_contract(problem: Problem, inputs: list):
    return run_tree(problem, inputs, numpy_pair)


# --------------------------------------------------------------------------------------------------
# Results, verification and the report object.
# --------------------------------------------------------------------------------------------------
def tolerance(ref: float) -> float:
    """|x - ref| <= 1e-5 + 1e-4 * max(|ref|, 1): the reference system's rule."""
    return 1e-5 + 1e-4 * max(abs(ref), 1.0)


def describe_result(arr) -> dict:
    """{"scalar": [re, im]} for a scalar; {"shape", "norm", "sum": [re, im]} otherwise."""
    import numpy as np
    a = np.asarray(arr)
    if a.ndim == 0:
        v = complex(a.reshape(()).item())
        return {"scalar": [v.real, v.imag]}
    a64 = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    s = complex(a64.sum())
    return {"shape": list(a.shape), "norm": float(np.linalg.norm(a64.ravel())), "sum": [s.real, s.imag]}


def as_complex(pair) -> complex:
    if isinstance(pair, (int, float)):
        return complex(pair, 0.0)
    if isinstance(pair, dict) and "re" in pair:  # tnrt writes complex scalars as {"re", "im"}
        return complex(float(pair["re"]), float(pair.get("im", 0.0)))
    if isinstance(pair, (list, tuple)):
        return complex(float(pair[0]), float(pair[1]) if len(pair) > 1 else 0.0)
    raise ValueError(f"not a scalar: {pair!r}")


def verify(result: dict | None, reference: dict | float | None) -> dict:
    """Compares a result object with a reference (a number, a [re, im] pair, or a result object).
    Returns {"verified": bool|None, "abs_err", "tolerance", "reference"}."""
    if result is None or reference is None:
        return {"verified": None, "reason": "no result" if result is None else "no reference"}
    if isinstance(reference, (int, float, list, tuple)):
        r = as_complex(reference)
        reference = {"scalar": [r.real, r.imag]}
    try:
        if "scalar" in result and "scalar" in reference:
            x, r = as_complex(result["scalar"]), as_complex(reference["scalar"])
            err, tol = abs(x - r), tolerance(abs(r))
            return {"verified": bool(err <= tol), "abs_err": err, "tolerance": tol, "reference": [r.real, r.imag]}
        if "norm" in result and "norm" in reference:
            if list(result.get("shape", [])) != list(reference.get("shape", [])):
                return {"verified": False, "reason": f"shape {result.get('shape')} != {reference.get('shape')}"}
            checks = [(float(result["norm"]), float(reference["norm"]))]
            if "sum" in result and "sum" in reference:
                checks.append((as_complex(result["sum"]), as_complex(reference["sum"])))
            errs = [(abs(x - r), tolerance(abs(r))) for x, r in checks]
            return {"verified": all(e <= t for e, t in errs), "abs_err": max(e for e, _ in errs),
                    "tolerance": min(t for _, t in errs), "reference": reference}
    except (TypeError, ValueError, KeyError) as exc:
        return {"verified": False, "reason": f"cannot compare: {exc}"}
    return {"verified": None, "reason": "result and reference are of different kinds"}


def timing_stats(times_ms: list[float]) -> dict:
    if not times_ms:
        return {"times_ms": [], "median_ms": None, "min_ms": None, "max_ms": None}
    return {"times_ms": times_ms, "median_ms": statistics.median(times_ms),
            "min_ms": min(times_ms), "max_ms": max(times_ms)}


def add_peer_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("file", nargs="?", help="tree JSON or einsum JSON")
    ap.add_argument("--expr", help="einsum expression instead of a file, e.g. 'ab,bc->ac'")
    ap.add_argument("--shapes", help="shapes for --expr, e.g. 2x3,3x4")
    ap.add_argument("--bond-dim", type=int, default=2, help="extent of every tree-JSON label (2)")
    ap.add_argument("--dtype", default="f32", help="f32 | f64 | c64 | c128")
    ap.add_argument("--fill", default="constant", choices=["constant", "random"])
    ap.add_argument("--value", type=float, default=REFERENCE_FILL, help="constant fill (0.5**0.4)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lo", type=float, help="random: low end (default 0.9 * --value, tnrt's convention)")
    ap.add_argument("--hi", type=float, help="random: high end (default 1.1 * --value)")
    ap.add_argument("--stream-base", type=int, default=0, help="input i uses random stream base+i")
    ap.add_argument("--reference", help="value to verify against: a number, 're,im', or a JSON "
                    "result object / file; default: exact 1 for the reference network's constant fill")
    ap.add_argument("--warmups", type=int, default=3)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--device", default="cuda", help="cuda | cuda:N | cpu")
    ap.add_argument("--json", dest="json_out", help="write the report here instead of stdout")
    ap.add_argument("--label", help="problem name to report (default: the file)")
    ap.add_argument("--kernels", metavar="FILE.csv", help="after the timed runs, run once more under "
                    "torch.profiler and write every GPU kernel, memcpy and memset of that call (order, "
                    "name, microseconds) here; needs torch")


def profile_kernels(call, sync, path: str) -> None:
    """One more call of `call` under torch.profiler (CUDA activity: every kernel, memcpy and memset the
    process launches, cuTensorNet's and cuBLAS's included); writes them in launch order to `path` as
    CSV (index, name, us) and prints a one-line summary."""
    import csv
    from torch.profiler import ProfilerActivity, profile
    sync()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        call()
        sync()
    rows = []
    for e in prof.events():
        if str(getattr(e, "device_type", "")).endswith("CUDA"):
            us = getattr(e, "device_time", None)
            if us is None:
                us = getattr(e, "cuda_time", 0.0)
            rows.append((e.time_range.start, e.name, float(us)))
    rows.sort()
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["index", "name", "us"])
        for i, (_, name, us) in enumerate(rows):
            w.writerow([i, name, "%.2f" % us])
    print("kernels: %d, %.1f us in all -> %s" % (len(rows), sum(r[2] for r in rows), path), file=sys.stderr)


def problem_from_args(args) -> Problem:
    return load_problem(args.file, args.expr, args.shapes, bond_dim=args.bond_dim)


def fill_from_args(args) -> Fill:
    lo = args.value * 0.9 if args.lo is None else args.lo
    hi = args.value * 1.1 if args.hi is None else args.hi
    return Fill(args.fill, args.value, args.seed, lo, hi, args.stream_base)


def reference_from_args(args, problem: Problem):
    text = args.reference
    if text is None:
        # the reference network's constant fill has the exact value 1 (c^550 * 2^220)
        if (args.fill == "constant" and abs(args.value - REFERENCE_FILL) < 1e-15 and problem.output == []
                and len(problem.inputs) == 550 and len(problem.extents) == 220 and set(problem.extents) == {2}):
            return 1.0
        return None
    if os.path.exists(text):
        with open(text, encoding="utf-8") as f:
            doc = json.load(f)
        return doc.get("result", doc) if isinstance(doc, dict) else doc
    if text.lstrip().startswith("{"):
        return json.loads(text)
    if "," in text:
        re_, im = text.split(",", 1)
        return [float(re_), float(im)]
    return float(text)


def base_report(tool: str, args, problem: Problem) -> dict:
    return {
        "tool": tool,
        "problem": args.label or (args.file if args.file else f"{args.expr} {args.shapes}"),
        "dtype": canonical_dtype(args.dtype),
        "fill": fill_from_args(args).describe(),
        "device": args.device,
        "warmups": args.warmups,
        "runs": args.runs,
        "bytes_read_written": problem.total_bytes(args.dtype),
        "steps": len(problem.steps),
        "versions": {"python": platform.python_version()},
        "host": platform.node(),
    }


def emit(report: dict, json_out: str | None) -> None:
    text = json.dumps(report, indent=1, default=_json_default)
    if json_out:
        tmp = json_out + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text + "\n")
        os.replace(tmp, json_out)
    else:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


def finish_ok(report: dict, args, problem: Problem, result: dict) -> int:
    """A peer's last step after a run: the result (describe_result's object) verified against the
    reference given on the command line, the report written, exit status 0."""
    report["result"] = result
    v = verify(result, reference_from_args(args, problem))
    report["verified"] = v.pop("verified")
    report["verification"] = v
    report["status"] = "ok"
    emit(report, args.json_out)
    return 0


def _json_default(o):
    try:
        import numpy as np
        if isinstance(o, np.generic):
            return o.item()
    except ImportError:
        pass
    if isinstance(o, complex):
        return [o.real, o.imag]
    return str(o)


def progress(msg: str) -> None:
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


# --------------------------------------------------------------------------------------------------
# The NumPy peer (CPU); also how the harness computes a reference value for a random fill.
# --------------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_peer_arguments(ap)
    ap.add_argument("--summary", action="store_true", help="print the problem's sizes and exit")
    ap.add_argument("--compute-dtype", help="build the inputs in --dtype, then contract in this dtype "
                    "(f64/c128: a reference value for --dtype's inputs)")
    ap.set_defaults(device="cpu", warmups=0, runs=1)
    args = ap.parse_args(argv)
    problem = problem_from_args(args)
    if args.summary:
        emit(problem.summary(args.dtype), args.json_out)
        return 0
    import numpy as np
    report = base_report("numpy", args, problem)
    report["device"] = "cpu"  # whatever the harness passes: NumPy runs on the host
    report["mode"] = "eager"
    report["versions"]["numpy"] = np.__version__
    try:
        inputs = make_inputs(problem, args.dtype, fill_from_args(args))
        if args.compute_dtype:
            cd = np.dtype(NUMPY_DTYPE[canonical_dtype(args.compute_dtype)])
            inputs = [a.astype(cd) for a in inputs]
            report["compute_dtype"] = canonical_dtype(args.compute_dtype)
        times = []
        result = None
        for i in range(args.warmups + args.runs):
            t0 = time.perf_counter()
            result = numpy_contract(problem, inputs)
            dt = (time.perf_counter() - t0) * 1e3
            if i >= args.warmups:
                times.append(dt)
        report.update(timing_stats(times))
        report["result"] = describe_result(result)
        v = verify(report["result"], reference_from_args(args, problem))
        report["verified"] = v.pop("verified")
        report["verification"] = v
        report["status"] = "ok"
        report["counters"] = {}
    except Exception as exc:  # reported, not raised: the harness reads the object
        report.update({"status": "failed", "error": f"{type(exc).__name__}: {exc}", "verified": None})
        emit(report, args.json_out)
        return 1
    emit(report, args.json_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
