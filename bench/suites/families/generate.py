"""Generates the "families" benchmark suite: tensor networks of eight families (random quantum
circuits, QAOA max-cut, bond-2 random-regular graphs and hypergraphs, 2D lattices and PEPS norms,
MPS overlaps, matrix chains, batched language-model einsums and MPO sandwiches), each written as
tnrt's einsum JSON with a seeded cotengra contraction path, plus the suite file
bench/suites/families.json and the table in bench/suites/families/README.md.

    python3 bench/suites/families/generate.py            # rewrites every file (a few minutes)
    python3 bench/suites/families/generate.py --only mps # only networks whose name contains 'mps'
                                                         # (the suite and README keep the others
                                                         # from their existing files)
    python3 bench/suites/families/generate.py --check    # rewrite, then run the NumPy peer on the
                                                         # random-fill entries and print their times

Everything is seeded: with the same package versions (quimb 1.16.0, cotengra 0.8.3, networkx 3.6.1,
numpy 2.4.x, opt_einsum 3.4.0, einsum_benchmark 0.1.8) rerunning it reproduces the files byte for
byte. The script re-executes itself with PYTHONHASHSEED=0, since quimb and cotengra iterate over
sets of index names. Needs einsum_benchmark (pip install --user einsum_benchmark==0.1.8; its
package imports pooch) for the einsum_benchmark generators; no network access, no GPU.

Conventions (also in the README):
  flops: a pairwise step costs prod(extents of every label of both operands) multiply-adds, counted
    as 2 flops for real dtypes and 8 for complex ones; a unary step (a sum or permutation) costs one
    flop per input element (2 for complex). Steps are those tnrt runs: opt_einsum's linear path with
    the rule of bench/peers/common.py (an intermediate keeps the labels still needed elsewhere).
  fill: with every input element equal to c, every output element is c**N * prod(extents of the
    summed labels); c = prod(summed extents)**(-1/N) makes it exactly 1. An intermediate of k
    inputs is c**k * prod(extents summed inside its subtree); every one must have |log2| < 100.
Progress goes to stderr.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
SUITE = os.path.join(os.path.dirname(HERE), "families.json")
README = os.path.join(HERE, "README.md")
sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))

import common  # noqa: E402  (bench/peers/common.py: the loader and step rule every peer uses)

# caps of issue 14 (hard) and the moderate targets most networks aim for
MAX_LOG2_INTERMEDIATE = 29
MIN_LOG2_FLOPS = 28
MAX_FILL_LOG2 = 100
MAX_FILL_ROUNDING = 1e-5  # |(float32(c)/c)**N - 1|: the f32-rounded constant still gives 1 within this

COMPLEX = ("c64", "c128")


def progress(msg: str) -> None:
    sys.stderr.write(f"generate: {msg}\n")
    sys.stderr.flush()


# --------------------------------------------------------------------------------------------------
# Builders: each returns (inputs, output, size_dict) with arbitrary hashable index names; the names
# are renamed to opt_einsum symbols in order of first appearance afterwards.
# --------------------------------------------------------------------------------------------------
def parse_eq(eq: str, shapes) -> tuple[list[list[str]], list[str], dict]:
    lhs, rhs = eq.replace(" ", "").split("->")
    inputs = [list(t) for t in lhs.split(",")]
    sizes: dict = {}
    for t, s in zip(inputs, shapes):
        for ix, e in zip(t, s):
            sizes[ix] = int(e)
    return inputs, list(rhs), sizes


def from_quimb(tn, output=()) -> tuple[list[list[str]], list[str], dict]:
    inputs, out, sizes = tn.get_inputs_output_size_dict(output_inds=tuple(output))
    inputs = [list(t) for t in inputs if len(t) > 0]  # rank-0 factors (scalars) dropped
    return inputs, list(out), {k: int(v) for k, v in sizes.items()}


def sycamore_circuit(rows: int, cols: int, cycles: int, seed: int):
    """A Sycamore-like circuit on a rows x cols grid: each cycle a random sqrt(X)/sqrt(Y)/sqrt(W)
    per qubit (never the same twice in a row), then fSim(pi/2, pi/6) on one of four coupler patterns
    in the order ABCDCDAB (A/B: horizontal pairs starting at even/odd columns, C/D: vertical)."""
    import numpy as np
    import quimb.tensor as qtn
    rng = np.random.default_rng(seed)
    n = rows * cols
    q = lambda r, c: r * cols + c  # noqa: E731
    patterns = {
        "A": [(q(r, c), q(r, c + 1)) for r in range(rows) for c in range(0, cols - 1, 2)],
        "B": [(q(r, c), q(r, c + 1)) for r in range(rows) for c in range(1, cols - 1, 2)],
        "C": [(q(r, c), q(r + 1, c)) for r in range(0, rows - 1, 2) for c in range(cols)],
        "D": [(q(r, c), q(r + 1, c)) for r in range(1, rows - 1, 2) for c in range(cols)],
    }
    order = "ABCDCDAB"
    circ = qtn.Circuit(n)
    last = [-1] * n
    singles = ("X_1_2", "Y_1_2", "W_1_2")
    for cyc in range(cycles):
        for i in range(n):
            g = int(rng.choice([k for k in range(3) if k != last[i]]))
            last[i] = g
            circ.apply_gate(singles[g], i)
        for a, b in patterns[order[cyc % len(order)]]:
            circ.apply_gate("FSIM", math.pi / 2, math.pi / 6, a, b)
    return circ


def b_circuit_amplitude(rows, cols, cycles, seed):
    import numpy as np
    circ = sycamore_circuit(rows, cols, cycles, seed)
    bits = "".join(str(int(b)) for b in np.random.default_rng(seed + 1).integers(0, 2, rows * cols))
    tn = circ.amplitude_tn(bits)
    tn.full_simplify_(output_inds=(), seq="ADCR")
    return from_quimb(tn, ())


def b_circuit_open(rows, cols, cycles, seed, n_open):
    """<b|C|0> with the first n_open qubits left open: a tensor of 2**n_open amplitudes."""
    import numpy as np
    circ = sycamore_circuit(rows, cols, cycles, seed)
    n = rows * cols
    bits = np.random.default_rng(seed + 1).integers(0, 2, n)
    tn = circ.psi.copy()
    open_inds = [f"k{i}" for i in range(n_open)]
    tn.isel_({f"k{i}": int(bits[i]) for i in range(n_open, n)})
    tn.full_simplify_(output_inds=open_inds, seq="ADCR")
    return from_quimb(tn, open_inds)


def b_eb_maxcut(n, reg, p, seed):
    """einsum_benchmark's maxcut: the unsimplified QAOA amplitude network of a random reg-regular graph."""
    import numpy as np
    import quimb as qu
    from einsum_benchmark.generators.quantum_computing import maxcut
    np.random.seed(seed)  # its gammas/betas come from qu.randn; only the values depend on them
    qu.seed_rand(seed)
    eq, arrays = maxcut(n=n, reg=reg, p=p, seed=seed)
    return parse_eq(eq, [a.shape for a in arrays])


def b_qaoa_energy_term(n, reg, p, seed):
    """One term <psi|Z_i Z_j|psi> of the QAOA max-cut energy (quimb's light-cone-reduced
    local_expectation network of the first edge), simplified with ADCRS."""
    import networkx as nx
    import numpy as np
    import quimb as qu
    import quimb.tensor as qtn
    G = nx.random_regular_graph(reg, n, seed=seed)
    terms = {(int(i), int(j)): 1 for i, j in G.edges}
    rng = np.random.default_rng(seed)
    circ = qtn.circ_qaoa(terms, p, rng.uniform(0, math.pi, p), rng.uniform(0, math.pi, p))
    edge = sorted(terms)[0]
    zz = qu.pauli("Z") & qu.pauli("Z")
    tn = circ.local_expectation_rehearse(zz, edge, optimize=None)["tn"]
    return from_quimb(tn, ())


def b_eb_regular(n, reg, d, seed):
    from einsum_benchmark.generators.random import regular
    eq, shapes = regular(n, reg, d_min=d, d_max=d, seed=seed)
    return parse_eq(eq, shapes)


def b_eb_hyper(n, regularity, max_edge_order, max_tensor_order, seed):
    from einsum_benchmark.generators.random import connected_hypernetwork
    eq, shapes = connected_hypernetwork(number_of_tensors=n, regularity=regularity,
                                        max_tensor_order=max_tensor_order, max_edge_order=max_edge_order,
                                        min_axis_size=2, max_axis_size=2, seed=seed)
    return parse_eq(eq, shapes)


def b_eb_lattice(dims, d_min, d_max, seed):
    from einsum_benchmark.generators.structured import lattice
    eq, shapes = lattice(list(dims), cyclic=False, d_min=d_min, d_max=d_max, seed=seed)
    return parse_eq(eq, shapes)


def b_peps_norm(lx, ly, bond, phys, seed):
    """<psi|psi> of a random lx x ly PEPS (quimb PEPS.rand): 2*lx*ly tensors."""
    import quimb.tensor as qtn
    psi = qtn.PEPS.rand(lx, ly, bond_dim=bond, phys_dim=phys, seed=seed)
    return from_quimb(psi.make_norm(), ())


def b_eb_mps(n, phys_min, phys_max, bond, seed):
    from einsum_benchmark.generators.quantum_computing import matrix_product_state
    eq, shapes = matrix_product_state(n=n, phys_dim_min=phys_min, phys_dim_max=phys_max,
                                      bond_dim=bond, seed=seed)
    return parse_eq(eq, shapes)


def b_eb_chain(n, min_dim, max_dim, seed, shuffle):
    from einsum_benchmark.generators.structured import matrix_chain
    eq, shapes = matrix_chain(num_matrices=n, min_dim=min_dim, max_dim=max_dim, is_shuffle=shuffle, seed=seed)
    return parse_eq(eq, shapes)


def b_eb_sliding(depth, hidden, observable, batch):
    from einsum_benchmark.generators.language_model import sliding_likelihood
    eq, shapes = sliding_likelihood(depth, hidden, observable, batch)
    return parse_eq(eq, shapes)


def b_eb_first_last(depth, hidden, observable):
    from einsum_benchmark.generators.language_model import p_first_and_last
    eq, shapes = p_first_and_last(depth, hidden, observable)
    return parse_eq(eq, shapes)


def b_mpo_sandwich(sites, bond, mpo, mpo_bond, phys, seed):
    """<psi|H|psi>: a random MPS (quimb MPS_rand_state, bond `bond`), an MPO (quimb MPO_ham_heis,
    bond 5, or MPO_rand of bond mpo_bond) and the conjugate MPS: 3*sites tensors."""
    import quimb.tensor as qtn
    psi = qtn.MPS_rand_state(sites, bond, phys_dim=phys, seed=seed)
    if mpo == "heis":
        H = qtn.MPO_ham_heis(sites)
    else:
        H = qtn.MPO_rand(sites, mpo_bond, phys_dim=phys, seed=seed + 1)
    # H: upper inds k{i}, lower b{i}; ket on b{i}, bra on k{i}
    ket = psi.reindex({f"k{i}": f"b{i}" for i in range(sites)})
    bra = psi.conj()
    tn = bra & H & ket
    return from_quimb(tn, ())


BUILDERS = {
    "circuit_amplitude": b_circuit_amplitude, "circuit_open": b_circuit_open,
    "eb_maxcut": b_eb_maxcut, "qaoa_energy_term": b_qaoa_energy_term,
    "eb_regular": b_eb_regular, "eb_hyper": b_eb_hyper, "eb_lattice": b_eb_lattice,
    "peps_norm": b_peps_norm, "eb_mps": b_eb_mps, "eb_chain": b_eb_chain,
    "eb_sliding": b_eb_sliding, "eb_first_last": b_eb_first_last, "mpo_sandwich": b_mpo_sandwich,
}

SOURCE_TEXT = {
    "circuit_amplitude": "quimb Circuit (this script's Sycamore-like grid, fSim(pi/2, pi/6)), amplitude_tn, full_simplify ADCR",
    "circuit_open": "quimb Circuit (Sycamore-like grid), psi with all but n_open qubits projected, full_simplify ADCR",
    "eb_maxcut": "einsum_benchmark.generators.quantum_computing.maxcut",
    "qaoa_energy_term": "quimb circ_qaoa + local_expectation_rehearse(ZZ, first edge), ADCRS",
    "eb_regular": "einsum_benchmark.generators.random.regular",
    "eb_hyper": "einsum_benchmark.generators.random.connected_hypernetwork",
    "eb_lattice": "einsum_benchmark.generators.structured.lattice",
    "peps_norm": "quimb PEPS.rand(...).make_norm()",
    "eb_mps": "einsum_benchmark.generators.quantum_computing.matrix_product_state",
    "eb_chain": "einsum_benchmark.generators.structured.matrix_chain",
    "eb_sliding": "einsum_benchmark.generators.language_model.sliding_likelihood",
    "eb_first_last": "einsum_benchmark.generators.language_model.p_first_and_last",
    "mpo_sandwich": "quimb MPS_rand_state with MPO_ham_heis or MPO_rand: the expectation psi^dagger H psi",
}

# Every network: name, family, dtype, builder and its parameters, the path search (cotengra
# HyperOptimizer methods / repeats / seed / objective), and whether it gets a random-fill entry with
# a NumPy reference (only where the f64 NumPy contraction takes well under 20 s).
NETWORKS: list[dict] = []


def net(name, family, dtype, builder, params, methods=("greedy",), repeats=24, seed=1, minimize=("flops", "combo"),
        random=False):
    NETWORKS.append({"name": name, "family": family, "dtype": dtype, "builder": builder, "params": params,
                     "opt": {"methods": list(methods), "max_repeats": repeats, "seed": seed, "minimize": list(minimize)},
                     "random": random})


# random quantum circuits (c64)
net("rqc-4x5-c14-amp", "random quantum circuit", "c64", "circuit_amplitude",
    {"rows": 4, "cols": 5, "cycles": 14, "seed": 11}, random=True)
net("rqc-5x5-c16-amp", "random quantum circuit", "c64", "circuit_amplitude",
    {"rows": 5, "cols": 5, "cycles": 16, "seed": 12})
net("rqc-5x6-c12-amp", "random quantum circuit", "c64", "circuit_amplitude",
    {"rows": 5, "cols": 6, "cycles": 12, "seed": 13})
net("rqc-4x5-c16-open4", "random quantum circuit", "c64", "circuit_open",
    {"rows": 4, "cols": 5, "cycles": 16, "seed": 14, "n_open": 4})
net("rqc-5x5-c12-open6", "random quantum circuit", "c64", "circuit_open",
    {"rows": 5, "cols": 5, "cycles": 12, "seed": 15, "n_open": 6})
# QAOA max-cut (c64)
net("qaoa-maxcut-n24-p3", "QAOA max-cut", "c64", "eb_maxcut", {"n": 24, "reg": 3, "p": 3, "seed": 1},
    random=True)
net("qaoa-maxcut-n24-p4", "QAOA max-cut", "c64", "eb_maxcut", {"n": 24, "reg": 3, "p": 4, "seed": 2},
    methods=("greedy", "labels"))
net("qaoa-zz-n60-p4", "QAOA max-cut", "c64", "qaoa_energy_term", {"n": 60, "reg": 3, "p": 4, "seed": 3})
# bond-2 random-regular graphs and hypergraphs (f32)
net("regular3-n130", "random regular / hypergraph", "f32", "eb_regular", {"n": 130, "reg": 3, "d": 2, "seed": 1},
    random=True)
net("regular3-n160", "random regular / hypergraph", "f32", "eb_regular", {"n": 160, "reg": 3, "d": 2, "seed": 1})
net("regular4-n70", "random regular / hypergraph", "f32", "eb_regular", {"n": 70, "reg": 4, "d": 2, "seed": 3})
net("hyper-n90-r3-e3", "random regular / hypergraph", "f32", "eb_hyper",
    {"n": 90, "regularity": 3.0, "max_edge_order": 3, "max_tensor_order": 6, "seed": 4}, methods=("greedy", "labels"))
net("hyper-n100-r3-e4", "random regular / hypergraph", "f32", "eb_hyper",
    {"n": 100, "regularity": 3.0, "max_edge_order": 4, "max_tensor_order": 6, "seed": 5})
# 2D lattices and PEPS norms (f32)
net("lattice-10x10-d4", "2D lattice / PEPS norm", "f32", "eb_lattice", {"dims": [10, 10], "d_min": 4, "d_max": 4, "seed": 1},
    random=True)
net("lattice-7x7-d8", "2D lattice / PEPS norm", "f32", "eb_lattice", {"dims": [7, 7], "d_min": 8, "d_max": 8, "seed": 2})
net("lattice-5x5-d16", "2D lattice / PEPS norm", "f32", "eb_lattice", {"dims": [5, 5], "d_min": 16, "d_max": 16, "seed": 3})
net("peps-norm-5x5-D4", "2D lattice / PEPS norm", "f32", "peps_norm", {"lx": 5, "ly": 5, "bond": 4, "phys": 2, "seed": 4})
# MPS overlaps (f32)
net("mps-overlap-n24-D256", "MPS overlap", "f32", "eb_mps", {"n": 24, "phys_min": 2, "phys_max": 4, "bond": 256, "seed": 1},
    random=True)
net("mps-overlap-n16-D512", "MPS overlap", "f32", "eb_mps", {"n": 16, "phys_min": 2, "phys_max": 2, "bond": 512, "seed": 2})
net("mps-overlap-n40-D384", "MPS overlap", "f32", "eb_mps", {"n": 40, "phys_min": 2, "phys_max": 3, "bond": 384, "seed": 3})
# matrix chains (f32)
net("chain-n12-d200-1500", "matrix chain", "f32", "eb_chain", {"n": 12, "min_dim": 200, "max_dim": 1500, "seed": 1, "shuffle": False},
    random=True)
net("chain-n30-d100-1000-shuf", "matrix chain", "f32", "eb_chain", {"n": 30, "min_dim": 100, "max_dim": 1000, "seed": 2, "shuffle": True})
net("chain-n8-d800-2000", "matrix chain", "f32", "eb_chain", {"n": 8, "min_dim": 800, "max_dim": 2000, "seed": 3, "shuffle": False})
# batched language-model einsums (f32)
net("lm-sliding-d2-h8-o64-b256", "batched LM einsum", "f32", "eb_sliding",
    {"depth": 2, "hidden": 8, "observable": 64, "batch": 256}, random=True)
net("lm-sliding-d3-h4-o16-b128", "batched LM einsum", "f32", "eb_sliding",
    {"depth": 3, "hidden": 4, "observable": 16, "batch": 128}, methods=("greedy", "labels"))
net("lm-first-last-d2-h8-o64", "batched LM einsum", "f32", "eb_first_last", {"depth": 2, "hidden": 8, "observable": 64})
# MPO sandwiches (f32, one f64)
net("mpo-heis-L32-D128", "MPO sandwich", "f32", "mpo_sandwich",
    {"sites": 32, "bond": 128, "mpo": "heis", "mpo_bond": 5, "phys": 2, "seed": 1}, random=True)
net("mpo-rand-L24-D96-w8", "MPO sandwich", "f32", "mpo_sandwich",
    {"sites": 24, "bond": 96, "mpo": "rand", "mpo_bond": 8, "phys": 2, "seed": 2})
net("mpo-heis-L40-D64-f64", "MPO sandwich", "f64", "mpo_sandwich",
    {"sites": 40, "bond": 64, "mpo": "heis", "mpo_bond": 5, "phys": 2, "seed": 3})

REFERENCE_ENTRY = {
    "name": "reference-tree-f32-const", "family": "reference tree", "file": "data/tensornetwork_permutation_optimized.json",
    "dtype": "f32", "fill": {"kind": "constant", "value": 0.757858283255199}, "reference": 1.0,
    "reference_source": "exact: 2**220 * (0.5**0.4)**550 = 1",
    "note": "the reference tree of bench/suites/reference.json (550 tensors, bond 2), as it is",
}


# --------------------------------------------------------------------------------------------------
# Path, renaming, metrics
# --------------------------------------------------------------------------------------------------
def canonical(inputs, output, sizes):
    """Index names -> opt_einsum symbols in order of first appearance (inputs, then the output)."""
    import opt_einsum as oe
    names: dict = {}
    for t in list(inputs) + [output]:
        for ix in t:
            if ix not in names:
                names[ix] = oe.get_symbol(len(names))
    ins = ["".join(names[ix] for ix in t) for t in inputs]
    out = "".join(names[ix] for ix in output)
    shapes = [[sizes[ix] for ix in t] for t in inputs]
    return ins, out, shapes


def find_path(ins, out, shapes, opt: dict) -> list[list[int]]:
    """cotengra: HyperOptimizer over opt["methods"] (no subtree reconfiguration inside the search:
    pure-Python cotengra takes seconds per trial with it), then one subtree_reconfigure of the best
    tree, for each objective in opt["minimize"]; keeps the cheapest in flops (then width)."""
    import cotengra as ctg
    inputs = [tuple(t) for t in ins]
    sizes = {c: e for t, s in zip(ins, shapes) for c, e in zip(t, s)}
    if len(inputs) == 1:
        return [[0]]
    best = None
    for minimize in opt["minimize"]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "no optlib found, using random": expected, and seeded
            hopt = ctg.HyperOptimizer(methods=opt["methods"], max_repeats=opt["max_repeats"], seed=opt["seed"],
                                      minimize=minimize, optlib="random", parallel=False, progbar=False,
                                      reconf_opts=None)
            tree = hopt.search(inputs, tuple(out), sizes)
            tree = tree.subtree_reconfigure(subtree_size=8, minimize=minimize)
        key = (tree.contraction_cost(), tree.contraction_width())
        if best is None or key < best[0]:
            best = (key, tree)
    return [list(map(int, p)) for p in best[1].get_path()]


def metrics(problem: common.Problem, dtype: str) -> dict:
    """Flops, largest intermediate, bytes, the constant fill c and the log2 range of every
    intermediate's element under it (see the module docstring for the conventions)."""
    cx = dtype in COMPLEX
    ext = problem.extents
    lg = [math.log2(e) for e in ext]
    labels = problem.operand_labels()
    n = problem.n_inputs
    flops = 0
    largest = 0
    for s in problem.steps:
        if s.rhs >= 0:
            flops += math.prod(ext[l] for l in set(labels[s.lhs]) | set(labels[s.rhs])) * (8 if cx else 2)
        else:
            flops += math.prod(ext[l] for l in labels[s.lhs]) * (2 if cx else 1)
        largest = max(largest, math.prod(ext[l] for l in s.out))
    all_labels = set(l for t in problem.inputs for l in t)
    summed = all_labels - set(problem.output)
    log2_summed = sum(lg[l] for l in summed)
    log2_c = -log2_summed / n
    c = 2.0 ** log2_c
    # each operand: (inputs under it, labels under it); element value log2 = k log2 c + summed inside
    count = [1] * n
    under = [set(t) for t in problem.inputs]
    lo = hi = log2_c
    for s in problem.steps:
        k = count[s.lhs] + (count[s.rhs] if s.rhs >= 0 else 0)
        u = under[s.lhs] | (under[s.rhs] if s.rhs >= 0 else set())
        count.append(k)
        under.append(u)
        v = k * log2_c + sum(lg[l] for l in u - set(s.out))
        lo, hi = min(lo, v), max(hi, v)
    final = count[-1] * log2_c + sum(lg[l] for l in under[-1] - set(problem.output)) if problem.steps else log2_c
    import numpy as np
    rounding = None
    if dtype in ("f32", "c64"):
        rounding = math.expm1(n * math.log(float(np.float32(c)) / c))
    out_elems = math.prod(ext[l] for l in problem.output)
    return {"n_inputs": n, "steps": len(problem.steps), "labels": len(ext), "flops": flops,
            "log2_flops": math.log2(flops), "largest_intermediate": largest,
            "log2_largest_intermediate": math.log2(largest) if largest else 0.0,
            "bytes_read_written": problem.total_bytes(dtype), "input_elements": sum(math.prod(ext[l] for l in t) for t in problem.inputs),
            "log2_summed": log2_summed, "fill": c, "log2_fill": log2_c,
            "log2_intermediate_range": [lo, hi], "log2_result": final,
            "f32_fill_rounding": rounding, "output_shape": [ext[l] for l in problem.output],
            "output_elements": out_elems,
            "max_labels_per_step": max(len(set(labels[s.lhs]) | (set(labels[s.rhs]) if s.rhs >= 0 else set()))
                                       for s in problem.steps)}


def problems_of(entry: dict, m: dict) -> list[dict]:
    """The suite entries of one network: the constant fill (exact 1) and, if chosen, a random fill."""
    rel = os.path.relpath(os.path.join(HERE, entry["name"] + ".json"), ROOT)
    info = {"family": entry["family"], "n_inputs": m["n_inputs"], "steps": m["steps"],
            "log2_flops": round(m["log2_flops"], 3), "log2_largest_intermediate": round(m["log2_largest_intermediate"], 3),
            "bytes_read_written": m["bytes_read_written"]}
    c = m["fill"]
    src = (f"exact: constant fill c = 2**(-{m['log2_summed']:.6g}/{m['n_inputs']}) (prod of the summed extents "
           f"to the -1/N), every output element c**{m['n_inputs']} * 2**{m['log2_summed']:.6g} = 1")
    if m["output_shape"]:
        k = m["output_elements"]
        ref = {"shape": m["output_shape"], "norm": math.sqrt(k), "sum": [float(k), 0.0]}
        src += f"; the output has {k} elements, all 1: norm sqrt({k}), sum {k}"
    else:
        ref = 1.0
    out = [{"name": entry["name"], "file": rel, "dtype": entry["dtype"], **info,
            "fill": {"kind": "constant", "value": c}, "reference": ref, "reference_source": src}]
    if entry["random"]:
        # tnrt's random fill draws the real and the imaginary part from U[0.9 v, 1.1 v): for complex
        # dtypes v = c / sqrt(2) keeps |element| near c (with v = c the result grows as 2**(N/2))
        v = c / math.sqrt(2) if entry["dtype"] in COMPLEX else c
        out.append({"name": entry["name"] + "-random", "file": rel, "dtype": entry["dtype"], **info,
                    "fill": {"kind": "random", "seed": 20261201, "value": v}, "reference": "numpy"})
    return out


def reset_randomness() -> None:
    """Before each network: quimb names new indices '_' + a per-process uuid4 prefix + a counter, and
    sets of those names iterate in an order that depends on the prefix, so both are reset (as are
    the global random generators); each network then comes out the same whatever ran before it."""
    import itertools
    import random as pyrandom
    import numpy as np
    import quimb.tensor.tensor_core as tc
    tc._RAND_PREFIX = "tnrt00"
    tc.RAND_UUIDS = map("".join, itertools.chain.from_iterable(
        itertools.product(tc._RAND_ALPHABET, repeat=r) for r in itertools.count(5)))
    pyrandom.seed(0)
    np.random.seed(0)


def build(entry: dict) -> tuple[dict, dict]:
    """Builds one network, finds its path, writes its file; returns (file document, metrics)."""
    t0 = time.perf_counter()
    reset_randomness()
    inputs, output, sizes = BUILDERS[entry["builder"]](**entry["params"])
    ins, out, shapes = canonical(inputs, output, sizes)
    t1 = time.perf_counter()
    path = find_path(ins, out, shapes, entry["opt"])
    dtype_name = common.NUMPY_DTYPE[entry["dtype"]]
    doc = {"format_string": ",".join(ins) + "->" + out, "shapes": shapes, "dtype": dtype_name, "path": path,
           "family": entry["family"], "generator": {"source": SOURCE_TEXT[entry["builder"]], "params": entry["params"],
                                                     "path": {"cotengra.HyperOptimizer": entry["opt"]}}}
    fpath = os.path.join(HERE, entry["name"] + ".json")
    with open(fpath, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    problem = common.load_problem(file=fpath)
    m = metrics(problem, entry["dtype"])
    progress(f"{entry['name']}: {m['n_inputs']} inputs, 2^{m['log2_flops']:.2f} flops, largest 2^"
             f"{m['log2_largest_intermediate']:.2f}, {m['bytes_read_written'] / 2**20:.1f} MiB moved, fill {m['fill']:.6g}, "
             f"intermediates 2^[{m['log2_intermediate_range'][0]:.1f}, {m['log2_intermediate_range'][1]:.1f}] "
             f"(build {t1 - t0:.1f} s, path {time.perf_counter() - t1:.1f} s)")
    return doc, m


def problems_of_check(entry: dict, m: dict) -> list[str]:
    """Violations of the caps; an empty list when the network is accepted."""
    bad = []
    if m["log2_largest_intermediate"] > MAX_LOG2_INTERMEDIATE:
        bad.append(f"largest intermediate 2^{m['log2_largest_intermediate']:.2f} > 2^{MAX_LOG2_INTERMEDIATE}")
    if m["log2_flops"] < MIN_LOG2_FLOPS:
        bad.append(f"flops 2^{m['log2_flops']:.2f} < 2^{MIN_LOG2_FLOPS}")
    lo, hi = m["log2_intermediate_range"]
    if max(abs(lo), abs(hi)) >= MAX_FILL_LOG2:
        bad.append(f"constant-fill intermediates reach 2^{lo:.1f} .. 2^{hi:.1f}")
    if abs(m["log2_result"]) > 1e-9:
        bad.append(f"result 2^{m['log2_result']} != 1")
    if m["f32_fill_rounding"] is not None and abs(m["f32_fill_rounding"]) > MAX_FILL_ROUNDING:
        bad.append(f"f32-rounded fill gives 1{m['f32_fill_rounding']:+.2e}")
    if m["max_labels_per_step"] > 52:
        bad.append(f"a step has {m['max_labels_per_step']} labels (einsum sublists allow 52)")
    return bad


# --------------------------------------------------------------------------------------------------
# Suite and README
# --------------------------------------------------------------------------------------------------
def suite_doc(problems: list[dict]) -> dict:
    return {
        "name": "families",
        "description": ("Every family of network (issue 14): random quantum circuits and QAOA max-cut (c64), bond-2 "
                        "random-regular graphs and hypergraphs, 2D lattices and PEPS norms, MPS overlaps, matrix chains, "
                        "batched language-model einsums and MPO sandwiches (f32, one f64), plus the reference tree; "
                        "generated by bench/suites/families/generate.py (seeded, paths from cotengra), listed in "
                        "bench/suites/families/README.md. Each network's constant fill makes every output element exactly 1; "
                        "one network per family also has a seeded random fill checked against NumPy in f64/c128. Flops: "
                        "2 per real multiply-add, 8 per complex one."),
        "device": "cuda",
        "warmups": 2,
        "runs": 5,
        "timeout_s": 300,
        "tolerance": {"abs": 1e-05, "rel": 0.0001, "rule": "|x - ref| <= 1e-5 + 1e-4 * max(|ref|, 1)"},
        "bandwidth_args": ["--size-mib", "4096", "--repeats", "20"],
        "tnrt": {
            "command": ["{tnrt}", "contract", "{file}", "{problem_args}", "--device", "{device}", "--dtype", "{dtype}",
                        "{fill_args}", "--mode", "{mode}", "--warmup", "{warmups}", "--repeat", "{runs}", "{options}",
                        "--json", "{json}", "--quiet"],
            "fill_args": {"constant": ["--fill={value}"], "random": ["--fill={value}", "--random", "{seed}"]},
        },
        "problems": problems,
        "variants": [{"name": "eager", "mode": "eager", "options": []},
                     {"name": "compiled", "mode": "compiled", "options": []},
                     # the inputs in the program's own buffers, as torch's graph peer replays static inputs
                     {"name": "compiled static", "mode": "compiled", "options": ["--static-inputs"]}],
        "peers": [{"name": "torch", "script": "bench/peers/torch_tree.py", "args": []},
                  {"name": "torch graph", "script": "bench/peers/torch_tree.py", "args": ["--graph"]}],
    }


def fmt_params(p: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in p.items())


def readme_text(rows: list[tuple[dict, dict]]) -> str:
    total = sum(os.path.getsize(os.path.join(HERE, e["name"] + ".json")) for e, _ in rows)
    lines = [
        "# The families suite",
        "",
        "Networks of every family for `bench/harness.py bench/suites/families.json` (issue 14). This file, the",
        "network files here and the suite file are written by the seeded generator; regenerate them with",
        "",
        "    python3 bench/suites/families/generate.py",
        "",
        "which needs quimb 1.16.0, cotengra 0.8.3, networkx 3.6.1, numpy 2.4, opt_einsum 3.4.0 and einsum_benchmark 0.1.8",
        "(`pip install --user einsum_benchmark==0.1.8`; its package imports pooch); with those versions the files come",
        "out byte for byte the same (the script runs itself with PYTHONHASHSEED=0). No network access, no GPU; a few",
        "minutes on 2 cores. `tests/python/test_suite_families.py` checks the files, the caps and the fills.",
        "",
        "Each network is tnrt's einsum JSON (`format_string`, `shapes`, `dtype`, `path` in opt_einsum's linear form,",
        "plus `family` and `generator`, which record the source and parameters and which loaders ignore). Paths come",
        "from `cotengra.HyperOptimizer(methods, max_repeats, seed, minimize, optlib='random', parallel=False,\n",
        "reconf_opts=None)` for `minimize` 'flops' and 'combo', each best tree then improved by one",
        "`subtree_reconfigure(subtree_size=8)`, the cheaper in flops kept (reconfiguration inside the search takes",
        "seconds per trial in pure-Python cotengra);",
        "kahypar is not installed here, so the methods are greedy (and labels where noted).",
        "",
        "Conventions:",
        "",
        "- **flops**: a pairwise step costs prod(extents of the labels of both operands) multiply-adds, 2 flops each",
        "  for real dtypes, 8 for complex; a unary step (sum/permutation) one flop per element (2 complex). The steps are",
        "  those tnrt and the peers run (an intermediate keeps the labels still needed elsewhere).",
        "- **largest**: the largest intermediate, in elements (log2). **bytes**: every step's operands and result,",
        "  summed (`Problem.total_bytes`, the floor's numerator).",
        "- **fill**: the constant c = prod(summed extents)^(-1/N) (N inputs), which makes every output element exactly",
        "  1 (reference 1.0; for a tensor output the reference is the result object: norm sqrt(elements), sum elements).",
        "  Every intermediate's element under it, c^k * prod(extents summed inside its subtree), stays within",
        "  2^±100 (column *interm. log2*), and for f32/c64 the f32-rounded c still gives 1 within 1e-5.",
        "- **random**: networks marked ✓ also have a `-random` entry: tnrt's seeded fill U[0.9v, 1.1v) with v = c",
        "  (complex: real and imaginary parts each from U[0.9v, 1.1v) with v = c/sqrt(2), so |element| stays near c),",
        "  reference computed by the harness with NumPy in f64/c128 (`bench/peers/common.py`); each takes seconds on",
        "  the CPU (at most about 10 s on 2 cores here).",
        "- Caps: largest intermediate ≤ 2^29 elements and flops ≥ 2^28 for every network; most stay within",
        "  2^28–2^36 flops and 2^27 elements.",
        "",
        "| network | family | source and parameters | dtype | inputs | steps | flops (log2) | largest (log2) | bytes | fill c | interm. log2 | random |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for e, m in rows:
        lo, hi = m["log2_intermediate_range"]
        out = "scalar" if not m["output_shape"] else "output " + "x".join(map(str, m["output_shape"]))
        lines.append(
            f"| {e['name']} | {e['family']} | {SOURCE_TEXT[e['builder']].replace('|', '&#124;')}: {fmt_params(e['params'])}; path "
            f"{'+'.join(e['opt']['methods'])} x{e['opt']['max_repeats']} seed {e['opt']['seed']}; {out} | {e['dtype']} | "
            f"{m['n_inputs']} | {m['steps']} | {m['log2_flops']:.2f} | {m['log2_largest_intermediate']:.2f} | "
            f"{m['bytes_read_written'] / 2**20:.1f} MiB | {m['fill']:.9g} | {lo:.1f} .. {hi:.1f} | "
            f"{'✓' if e['random'] else ''} |")
    lines += [
        f"| reference-tree-f32-const | reference tree | `{REFERENCE_ENTRY['file']}` (bench/suites/reference.json) | f32 | "
        "550 | 549 | | | | 0.757858283 | | |",
        "",
        f"{len(rows)} generated networks in {len(set(e['family'] for e, _ in rows))} families, {total / 2**20:.2f} MiB of files.",
        "",
    ]
    return "\n".join(lines)


def check_random(problems: list[dict]) -> None:
    for p in problems:
        if p["fill"]["kind"] != "random":
            continue
        t0 = time.perf_counter()
        res = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "peers", "common.py"), os.path.join(ROOT, p["file"]),
                              "--dtype", p["dtype"], "--compute-dtype", "c128" if p["dtype"] in COMPLEX else "f64",
                              "--fill", "random", "--seed", str(p["fill"]["seed"]), f"--lo={0.9 * p['fill']['value']!r}",
                              f"--hi={1.1 * p['fill']['value']!r}", "--device", "cpu", "--runs", "1", "--warmups", "0"],
                             capture_output=True, text=True)
        doc = json.loads(res.stdout) if res.returncode == 0 else {}
        progress(f"check {p['name']}: NumPy {time.perf_counter() - t0:.1f} s, result {doc.get('result')}")


def main(argv: list[str] | None = None) -> int:
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.execve(sys.executable, [sys.executable] + sys.argv, dict(os.environ, PYTHONHASHSEED="0"))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="regenerate only networks whose name contains this")
    ap.add_argument("--check", action="store_true", help="afterwards, time the NumPy references of the random fills")
    args = ap.parse_args(argv)
    rows: list[tuple[dict, dict]] = []
    problems: list[dict] = [dict(REFERENCE_ENTRY)]
    failed = []
    t0 = time.perf_counter()
    for i, e in enumerate(NETWORKS):
        fpath = os.path.join(HERE, e["name"] + ".json")
        if args.only and args.only not in e["name"] and os.path.exists(fpath):
            m = metrics(common.load_problem(file=fpath), e["dtype"])
        else:
            progress(f"[{i + 1}/{len(NETWORKS)}] {e['name']} ...")
            _, m = build(e)
        bad = problems_of_check(e, m)
        if bad:
            failed.append(f"{e['name']}: " + "; ".join(bad))
            progress(f"REJECTED {failed[-1]}")
        rows.append((e, m))
        problems += problems_of(e, m)
    with open(SUITE, "w", encoding="utf-8") as f:
        json.dump(suite_doc(problems), f, indent=1, ensure_ascii=False)
        f.write("\n")
    with open(README, "w", encoding="utf-8") as f:
        f.write(readme_text(rows))
    progress(f"{len(rows)} networks, suite {os.path.relpath(SUITE, ROOT)}, {time.perf_counter() - t0:.0f} s")
    if args.check:
        check_random(problems)
    if failed:
        progress("networks breaking the caps:\n  " + "\n  ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
