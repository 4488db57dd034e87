"""Generates the "sliced" benchmark suite (issue "Networks larger than the GPU: slicing"): three
bond-2 random 3-regular graphs of one family and generator (einsum_benchmark's random regular graph,
f32, like bench/suites/families/regular3-*), each with a seeded cotengra path:

    big    the largest intermediate of the path is 2^34..2^36 elements, so the unsliced contraction
           needs more than an H200's memory (141 GiB); meant for tnrt's slicing under a 40 GB limit
    small  largest intermediate 2^26..2^28 elements: its unsliced run fits a GPU (sliced == unsliced)
    tiny   largest intermediate <= 2^18 elements: checked on the CPU

Each file is tnrt's einsum JSON written exactly as bench/suites/families/generate.py writes its
networks (its builders, renaming, path search and metrics are imported from it, not copied), plus
  "slices"        the labels (names as in "format_string") that cotengra's SliceFinder chose for this
                  network's own target (big 2^31, small 2^24, tiny 2^12 elements) on the file's path
  "slicing_note"  how they were found
  "slicing"       per target (big also 2^30): labels, slice count, per-slice largest intermediate and
                  peak, flops overhead (tnrt's and cotengra's count)
  "fill"          the constant fill that makes the exact result 1 (families' convention)
  "metrics"       inputs, flops, largest intermediate, the unsliced peak estimate
Loaders (tnrt, bench/peers/common.py) ignore the extra keys. Also writes bench/suites/sliced.json
and bench/suites/sliced/README.md (the metrics table of this run).

    python3 bench/suites/sliced/generate.py     # about 10 s on 2 cores, no GPU, no network

Seeded: with the package versions families/generate.py names (cotengra 0.8.3, quimb 1.16.0,
networkx 3.6.1, numpy 2.4, opt_einsum 3.4.0, einsum_benchmark 0.1.8) the files come out byte for
byte the same; the script re-executes itself with PYTHONHASHSEED=0 as families/generate.py does.

Conventions (families/generate.py's): flops = 2 per real multiply-add over the union of a pairwise
step's labels (the log2 multiply-adds are recorded too); the peak estimate is tnrt's live-bytes
lower bound of the static memory plan with the inputs in the arena (docs/memory-plan.md: input k
live over [-1, its consumer], step i's result over [i, its consumer], each buffer rounded up to 256
bytes), without cuTENSOR workspaces; the real arena can only be larger. One slice is the problem
with the sliced labels' extents set to 1; "sliced flops" = slices x flops of one slice (what
tnrt's plan_slices reports; no hoisting of slice-independent steps).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
SUITE = os.path.join(os.path.dirname(HERE), "sliced.json")
README = os.path.join(HERE, "README.md")
FAMILIES = os.path.join(os.path.dirname(HERE), "families", "generate.py")


def load_families():
    """bench/suites/families/generate.py as a module (under its own name: this file is generate.py
    too, so a plain `import generate` could find this one)."""
    spec = importlib.util.spec_from_file_location("families_generate", FAMILIES)
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("families_generate", mod)
    spec.loader.exec_module(mod)
    return mod


fam = load_families()
common = fam.common  # bench/peers/common.py, as families/generate.py imported it

H200_BYTES = 141 * 2**30  # more than an H200 holds (nvidia-smi: 143771 MiB = 140.4 GiB)
MEMORY_LIMIT_BYTES = 40 * 10**9  # the limit the big network is meant to be contracted under
SLICE_SEED = 1
SLICE_REPEATS = 32

# name, role, builder parameters (einsum_benchmark regular graph: n vertices, degree 3, bond 2, graph
# seed), path search (families' find_path: cotengra HyperOptimizer greedy, seeded), slicing targets
# (log2 elements; the first is the one recorded under "slices") and the caps the network must meet.
PATH_OPT = {"methods": ["greedy"], "max_repeats": 24, "seed": 1, "minimize": ["flops"]}
NETWORKS = [
    {"name": "big-regular3-n228", "role": "big", "params": {"n": 228, "reg": 3, "d": 2, "seed": 2},
     "targets": [31, 30], "caps": {"largest": (34, 36), "max_log2_madds": 44, "max_overhead": 4.0,
                                   "min_peak_bytes": H200_BYTES, "max_slice_peak_bytes": MEMORY_LIMIT_BYTES}},
    {"name": "small-regular3-n180", "role": "small", "params": {"n": 180, "reg": 3, "d": 2, "seed": 3},
     "targets": [24], "caps": {"largest": (26, 28), "min_log2_flops": 30, "max_peak_bytes": 8 * 10**9}},
    {"name": "tiny-regular3-n90", "role": "tiny", "params": {"n": 90, "reg": 3, "d": 2, "seed": 2},
     "targets": [12], "caps": {"largest": (0, 18)}},
]
FAMILY = "random regular / hypergraph"
DTYPE = "f32"


def progress(msg: str) -> None:
    sys.stderr.write(f"generate(sliced): {msg}\n")
    sys.stderr.flush()


def entry_of(net: dict) -> dict:
    """The network as a families/generate.py entry (what its problems_of and README helpers read)."""
    return {"name": net["name"], "family": FAMILY, "dtype": DTYPE, "builder": "eb_regular", "params": net["params"],
            "opt": PATH_OPT, "random": net["role"] == "tiny"}


# --------------------------------------------------------------------------------------------------
# Peak estimate and one-slice problems
# --------------------------------------------------------------------------------------------------
def peak_bytes(problem, dtype: str = DTYPE, alignment: int = 256) -> int:
    """tnrt's live-bytes lower bound (docs/memory-plan.md) with the inputs in the arena."""
    eb = common.dtype_bytes(dtype)
    labels = problem.operand_labels()
    n_ops = len(labels)
    nsteps = len(problem.steps)
    last = [nsteps] * n_ops  # the final result lives to S
    for i, s in enumerate(problem.steps):
        last[s.lhs] = i
        if s.rhs >= 0:
            last[s.rhs] = i
    delta = [0] * (nsteps + 3)  # index t + 1 for t in -1 .. S
    for op in range(n_ops):
        first = -1 if op < problem.n_inputs else op - problem.n_inputs
        b = -(-math.prod(problem.extents[l] for l in labels[op]) * eb // alignment) * alignment
        delta[first + 1] += b
        delta[last[op] + 2] -= b
    best = live = 0
    for d in delta:
        live += d
        best = max(best, live)
    return best


def one_slice(problem, label_ids):
    """The problem with the sliced labels' extents 1 (labels, operands and steps unchanged)."""
    ext = list(problem.extents)
    for l in label_ids:
        ext[l] = 1
    return common.Problem(problem.inputs, problem.output, ext, problem.steps, problem.label_names, problem.source)


def slicing_info(problem, tree, target_log2: int, flops_unsliced: int) -> dict:
    import cotengra as ctg
    sf = ctg.SliceFinder(tree, target_size=2 ** target_log2, minimize="flops", seed=SLICE_SEED)
    ix, cost = sf.search(max_repeats=SLICE_REPEATS)
    order = {name: i for i, name in enumerate(problem.label_names)}
    names = sorted(ix, key=lambda c: order[c])  # first appearance in format_string
    ids = [order[c] for c in names]
    sl = one_slice(problem, ids)
    m1 = fam.metrics(sl, DTYPE)
    slices = math.prod(problem.extents[l] for l in ids)
    sliced = slices * m1["flops"]
    return {"target_log2_elements": target_log2, "labels": names, "slices": slices,
            "log2_largest_intermediate_per_slice": round(m1["log2_largest_intermediate"], 3),
            "peak_bytes_per_slice": peak_bytes(sl), "log2_flops_sliced": round(math.log2(sliced), 3),
            "flops_overhead": round(sliced / flops_unsliced, 4),
            "cotengra_overhead": round(float(cost.overhead), 4),
            "bytes_read_written_sliced": slices * sl.total_bytes(DTYPE)}


# --------------------------------------------------------------------------------------------------
# One network
# --------------------------------------------------------------------------------------------------
def write_doc(doc: dict, fpath: str) -> None:
    """families/generate.py's writer (its build() writes exactly this)."""
    with open(fpath, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")


def build(net: dict) -> tuple[dict, dict, dict]:
    """Builds one network with families/generate.py's pieces, finds its path and slices, writes its
    file; returns (entry, families metrics, the document)."""
    import cotengra as ctg
    e = entry_of(net)
    t0 = time.perf_counter()
    fam.reset_randomness()
    inputs, output, sizes = fam.BUILDERS[e["builder"]](**e["params"])
    ins, out, shapes = fam.canonical(inputs, output, sizes)
    path = fam.find_path(ins, out, shapes, e["opt"])
    t1 = time.perf_counter()
    # the document families/generate.py's build() writes, key for key
    doc = {"format_string": ",".join(ins) + "->" + out, "shapes": shapes, "dtype": common.NUMPY_DTYPE[DTYPE],
           "path": path, "family": FAMILY,
           "generator": {"source": fam.SOURCE_TEXT[e["builder"]], "params": e["params"],
                         "path": {"cotengra.HyperOptimizer": e["opt"]}}}
    fpath = os.path.join(HERE, net["name"] + ".json")
    write_doc(doc, fpath)  # written once without the extra keys, so that metrics read the file as loaders do
    problem = common.load_problem(file=fpath)
    m = fam.metrics(problem, DTYPE)
    sd = {c: x for t, s in zip(ins, shapes) for c, x in zip(t, s)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = ctg.ContractionTree.from_path([tuple(t) for t in ins], tuple(out), sd, path=path)
    # cotengra's cost is multiply-adds over the same trees tnrt runs: a check of the step rule
    if abs(math.log2(tree.contraction_cost()) - math.log2(m["flops"] / 2)) > 1e-6:
        progress(f"{net['name']}: cotengra counts 2^{math.log2(tree.contraction_cost()):.3f} multiply-adds, "
                 f"tnrt's steps 2^{math.log2(m['flops'] / 2):.3f}")
    infos = [slicing_info(problem, tree, t, m["flops"]) for t in net["targets"]]
    chosen = infos[0]
    peak = peak_bytes(problem)
    doc["slices"] = chosen["labels"]
    doc["slicing_note"] = (
        f"cotengra {ctg.__version__} SliceFinder(ContractionTree.from_path(this file's path), target_size=2**"
        f"{chosen['target_log2_elements']}, minimize='flops', seed={SLICE_SEED}).search(max_repeats={SLICE_REPEATS}); "
        f"each label is sliced whole (one value per slice, {chosen['slices']} slices); names as in format_string, "
        "in order of first appearance; the path is the unsliced one (slicing keeps the tree)")
    doc["slicing"] = {f"2^{i['target_log2_elements']}": i for i in infos}
    doc["fill"] = {"kind": "constant", "value": m["fill"], "result": 1.0,
                   "note": f"families' convention: c = 2**(-{m['log2_summed']:.6g}/{m['n_inputs']}), "
                           f"the result c**{m['n_inputs']} * 2**{m['log2_summed']:.6g} = 1 (sliced or not)"}
    doc["metrics"] = {"n_inputs": m["n_inputs"], "steps": m["steps"],
                      "log2_largest_intermediate": round(m["log2_largest_intermediate"], 3),
                      "log2_flops": round(m["log2_flops"], 3), "log2_multiply_adds": round(math.log2(m["flops"] / 2), 3),
                      "peak_bytes_unsliced": peak, "bytes_read_written": m["bytes_read_written"],
                      "max_labels_per_step": m["max_labels_per_step"],
                      "peak_note": "tnrt's live-bytes lower bound, inputs in the arena, no workspaces"}
    write_doc(doc, fpath)
    progress(f"{net['name']}: {m['n_inputs']} inputs, largest 2^{m['log2_largest_intermediate']:.2f} elements, "
             f"flops 2^{m['log2_flops']:.2f} (2^{math.log2(m['flops'] / 2):.2f} multiply-adds), unsliced peak "
             f"{peak / 1e9:.2f} GB, fill {m['fill']:.9g} (path {t1 - t0:.1f} s)")
    for i in infos:
        progress(f"  slice to 2^{i['target_log2_elements']}: {len(i['labels'])} labels {i['labels']} -> {i['slices']} "
                 f"slices, per slice largest 2^{i['log2_largest_intermediate_per_slice']:.2f}, peak "
                 f"{i['peak_bytes_per_slice'] / 1e9:.3f} GB, flops x{i['flops_overhead']:.4f} "
                 f"(cotengra x{i['cotengra_overhead']:.4f})")
    return e, m, doc


def violations(net: dict, m: dict, doc: dict) -> list[str]:
    caps, bad = net["caps"], []
    lo, hi = caps["largest"]
    w = m["log2_largest_intermediate"]
    if not lo <= w <= hi:
        bad.append(f"largest intermediate 2^{w:.2f} outside 2^{lo}..2^{hi}")
    madds = math.log2(m["flops"] / 2)
    if "max_log2_madds" in caps and madds > caps["max_log2_madds"]:
        bad.append(f"2^{madds:.2f} multiply-adds > 2^{caps['max_log2_madds']}")
    if "min_log2_flops" in caps and m["log2_flops"] < caps["min_log2_flops"]:
        bad.append(f"flops 2^{m['log2_flops']:.2f} < 2^{caps['min_log2_flops']}")
    peak = doc["metrics"]["peak_bytes_unsliced"]
    if "min_peak_bytes" in caps and peak <= caps["min_peak_bytes"]:
        bad.append(f"unsliced peak {peak / 2**30:.1f} GiB fits in {caps['min_peak_bytes'] / 2**30:.0f} GiB")
    if "max_peak_bytes" in caps and peak > caps["max_peak_bytes"]:
        bad.append(f"unsliced peak {peak / 1e9:.1f} GB > {caps['max_peak_bytes'] / 1e9:.0f} GB")
    chosen = doc["slicing"][f"2^{net['targets'][0]}"]
    if "max_overhead" in caps and chosen["flops_overhead"] > caps["max_overhead"]:
        bad.append(f"slicing overhead x{chosen['flops_overhead']} > x{caps['max_overhead']}")
    if "max_slice_peak_bytes" in caps and chosen["peak_bytes_per_slice"] > caps["max_slice_peak_bytes"]:
        bad.append(f"one slice needs {chosen['peak_bytes_per_slice'] / 1e9:.1f} GB")
    if not doc["slices"]:
        bad.append("no labels sliced")
    fl_lo, fl_hi = m["log2_intermediate_range"]
    if max(abs(fl_lo), abs(fl_hi)) >= fam.MAX_FILL_LOG2 or abs(m["log2_result"]) > 1e-9:
        bad.append("constant fill out of range")
    if m["f32_fill_rounding"] is not None and abs(m["f32_fill_rounding"]) > fam.MAX_FILL_ROUNDING:
        bad.append(f"f32-rounded fill gives 1{m['f32_fill_rounding']:+.2e}")
    if os.path.getsize(os.path.join(HERE, net["name"] + ".json")) >= 1 << 20:
        bad.append("file of 1 MiB or more")
    return bad


# --------------------------------------------------------------------------------------------------
# Suite and README
# --------------------------------------------------------------------------------------------------
def suite_problems(net: dict, e: dict, m: dict, doc: dict) -> list[dict]:
    out = fam.problems_of(e, m)  # families' entries (constant fill with reference 1, random fill for tiny)
    rel = os.path.relpath(os.path.join(HERE, net["name"] + ".json"), ROOT)
    for p in out:
        p["file"] = rel
        p["role"] = net["role"]
        p["slices"] = doc["slices"]
        p["num_slices"] = doc["slicing"][f"2^{net['targets'][0]}"]["slices"]
        p["peak_bytes_unsliced"] = doc["metrics"]["peak_bytes_unsliced"]
        if net["role"] == "big":
            p["memory_limit_bytes"] = MEMORY_LIMIT_BYTES
    return out


def suite_doc(problems: list[dict]) -> dict:
    base = fam.suite_doc([])  # families' runner settings, tnrt command and fill arguments
    return {
        "name": "sliced",
        "description": ("Networks larger than the GPU (slicing): three bond-2 random 3-regular graphs (f32, "
                        "einsum_benchmark's generator, seeded cotengra paths), generated by bench/suites/sliced/generate.py "
                        "and listed in bench/suites/sliced/README.md. big: largest intermediate 2^35 elements, "
                        "unsliced peak above an H200's memory, to be contracted by tnrt's slicing under a 40 GB limit; "
                        "small: fits unsliced (checks sliced == unsliced); tiny: a CPU check. Each file records the labels "
                        "cotengra's SliceFinder sliced (\"slices\"), used by the cuTensorNet sliced peer. The constant "
                        "fill makes the result exactly 1. tnrt variants run only where the unsliced contraction fits; "
                        "sliced tnrt variants come with the memory limit in tnrt's CLI. Flops: 2 per real multiply-add."),
        "device": "cuda",
        "warmups": 1,
        "runs": 3,
        "timeout_s": 600,
        "tolerance": base["tolerance"],
        "bandwidth_args": base["bandwidth_args"],
        "tnrt": base["tnrt"],
        "problems": problems,
        "variants": [{"name": "eager", "mode": "eager", "options": [], "problems": ["small-*", "tiny-*"]},
                     {"name": "compiled", "mode": "compiled", "options": [], "problems": ["small-*", "tiny-*"]}],
        "peers": [{"name": "cuTensorNet sliced", "script": "bench/peers/cutensornet_sliced.py",
                   "args": ["--autotune", "0", "--memory-limit", str(MEMORY_LIMIT_BYTES)], "skip_problems": ["*-random"]},
                  {"name": "cuTensorNet", "script": "bench/peers/cutensornet_tree.py", "args": ["--autotune", "3"],
                   "problems": ["small-*", "tiny-*"], "skip_problems": ["*-random"]}],
    }


def fmt_bytes(b: int) -> str:
    return f"{b / 1e9:.2f} GB" if b >= 1e9 else f"{b / 1e6:.2f} MB"


def readme_text(rows: list[tuple[dict, dict, dict, dict]]) -> str:
    lines = [
        "# The sliced suite",
        "",
        "Networks larger than the GPU, for tnrt's slicing (issue \"Networks larger than the GPU: slicing\"), run by",
        "`bench/harness.py bench/suites/sliced.json`. The network files here, this README and the suite file are",
        "written by the seeded generator:",
        "",
        "    python3 bench/suites/sliced/generate.py",
        "",
        "(about 10 s on 2 cores, no GPU, no network; the package versions of bench/suites/families/generate.py,",
        "whose builders, renaming, path search, metrics and file writer it imports; the script runs itself with",
        "PYTHONHASHSEED=0, and the files come out byte for byte the same). `tests/python/test_suite_sliced.py` checks",
        "the files without a GPU.",
        "",
        "## The networks",
        "",
        "All three are one family and one generator: `einsum_benchmark.generators.random.regular(n, 3, d_min=2,",
        "d_max=2, seed)`, a random 3-regular graph with a bond-2 label per edge and a tensor per vertex (scalar",
        "result), f32, as bench/suites/families/regular3-* (same builder). Paths: families' `find_path`, i.e.",
        f"`cotengra.HyperOptimizer(methods={PATH_OPT['methods']}, max_repeats={PATH_OPT['max_repeats']}, seed={PATH_OPT['seed']}, "
        f"minimize='flops', optlib='random')`",
        "then one `subtree_reconfigure(subtree_size=8)`. Graph sizes and seeds were picked (by scanning n and the",
        "graph seed with this search) so that the path's largest intermediate lands in the band each role needs:",
        "",
        "- **big**: largest intermediate 2^34–2^36 elements, so the unsliced f32 peak exceeds an H200 (141 GiB), with",
        "  at most 2^44 multiply-adds and a slicing to 2^31 elements costing at most 4x the flops; to be contracted",
        f"  sliced under a {MEMORY_LIMIT_BYTES / 1e9:.0f} GB limit.",
        "- **small**: largest intermediate 2^26–2^28 elements and at least 2^30 flops: its unsliced run fits a GPU,",
        "  for checking sliced == unsliced there.",
        "- **tiny**: largest intermediate at most 2^18 elements: sliced == unsliced on the CPU (it also has a",
        "  seeded random-fill entry in the suite, reference from NumPy).",
        "",
        "## The sliced labels",
        "",
        "`\"slices\"` in each file holds the labels (names as in `format_string`) that cotengra's",
        f"`SliceFinder(tree, target_size=2**T, minimize='flops', seed={SLICE_SEED}).search(max_repeats={SLICE_REPEATS})` chose on",
        "the tree of the file's own path (`ContractionTree.from_path`), T = 31 (big), 24 (small), 12 (tiny);",
        "`\"slicing_note\"` says so in the file, and `\"slicing\"` records each target (big: 2^31 and 2^30) with its",
        "slice count, the per-slice largest intermediate and peak, and the flops overhead. Every sliced label is",
        "summed (the output is a scalar) and sliced whole: one value per slice. The path in the file is the unsliced",
        "one; slicing keeps the tree. `bench/peers/cutensornet_sliced.py` hands cuTensorNet the same path and these",
        "labels. tnrt's own `plan_slices` picks its labels greedily by its memory model; these are a fixed choice",
        "to compare against, or to give it.",
        "",
        "Conventions (families'): flops are 2 per real multiply-add over the union of a pairwise step's labels",
        "(log2 multiply-adds in parentheses); **peak** is tnrt's live-bytes lower bound of the static memory plan",
        "with the inputs in the arena (docs/memory-plan.md), without cuTENSOR workspaces, in GB/MB (10^9/10^6 bytes);",
        "**sliced flops** = slices x flops of one slice (one slice: the sliced labels' extents set to 1), overhead",
        "= sliced / unsliced (cotengra's own count in parentheses); **bytes sliced** = slices x the bytes every step",
        "of one slice reads and writes. **fill**: the constant c = 2^(-summed/N) that makes the result exactly 1.",
        "",
        "| network | role | n, seed | inputs | largest (log2) | flops (log2) | peak unsliced | target | sliced labels | slices | largest per slice (log2) | peak per slice | overhead | bytes sliced | fill c |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for net, e, m, doc in rows:
        md = doc["metrics"]
        for k, key in enumerate(f"2^{t}" for t in net["targets"]):
            i = doc["slicing"][key]
            head = (f"| {net['name']} | {net['role']} | {net['params']['n']}, {net['params']['seed']} | {m['n_inputs']} | "
                    f"{md['log2_largest_intermediate']:.2f} | {md['log2_flops']:.2f} ({md['log2_multiply_adds']:.2f}) | "
                    f"{fmt_bytes(md['peak_bytes_unsliced'])}" if k == 0 else "| | | | | | |")
            lines.append(
                f"{head} | 2^{i['target_log2_elements']}{' (slices)' if k == 0 else ''} | {' '.join(i['labels'])} | "
                f"{i['slices']} | {i['log2_largest_intermediate_per_slice']:.2f} | {fmt_bytes(i['peak_bytes_per_slice'])} | "
                f"x{i['flops_overhead']:.3f} (x{i['cotengra_overhead']:.3f}) | {fmt_bytes(i['bytes_read_written_sliced'])} | "
                f"{m['fill']:.9g} |")
    total = sum(os.path.getsize(os.path.join(HERE, net["name"] + ".json")) for net, *_ in rows)
    big = next(r for r in rows if r[0]["role"] == "big")
    bi = big[3]["slicing"][f"2^{big[0]['targets'][0]}"]
    lines += [
        "",
        f"{len(rows)} networks, {total / 2**10:.0f} KiB of files. For scale: the big network sliced to 2^31 moves "
        f"{bi['bytes_read_written_sliced'] / 1e12:.2f} TB",
        f"through its steps and does 2^{bi['log2_flops_sliced']:.2f} flops, i.e. about "
        f"{bi['bytes_read_written_sliced'] / 4e12:.1f} s at 4 TB/s and {2 ** bi['log2_flops_sliced'] / 50e12:.1f} s at "
        "50 TFLOP/s on an H200",
        "(an estimate, not a measurement). Its largest intermediates have 35 labels (31 of extent 2 in one slice)",
        f"and its steps up to {big[3]['metrics']['max_labels_per_step']} labels.",
        "",
        "## Running",
        "",
        "    python3 bench/harness.py bench/suites/sliced.json",
        "",
        "runs tnrt (eager, compiled) only on small and tiny: the big network's unsliced contraction does not fit,",
        "and tnrt's CLI has no memory limit yet (docs/design.md, Slicing); a sliced tnrt variant belongs here once",
        f"it does (big: `memory_limit_bytes` {MEMORY_LIMIT_BYTES} in its suite entry). The peers: cuTensorNet with the",
        "file's path and sliced labels (`bench/peers/cutensornet_sliced.py`, all three networks) and cuTensorNet",
        "unsliced on the same path (`bench/peers/cutensornet_tree.py`, small and tiny). The sliced peer hands both",
        "to cuquantum-python's documented form",
        "",
        "    net.contract_path(optimize=cuquantum.tensornet.OptimizerOptions(path=linear_path, slicing=[mode, ...]))",
        "",
        "(`slicing`: a sequence of sliced modes, or of (mode, sliced extent) pairs; with a given path cuTensorNet",
        "slices only what it is given, `Network.contract_path` in cuquantum/tensornet/tensor_network.py), checks",
        "that the `num_slices` it reports is the product of the labels' extents, and times `contract()`, which",
        "sums every slice.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.execve(sys.executable, [sys.executable] + sys.argv, dict(os.environ, PYTHONHASHSEED="0"))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.parse_args(argv)
    t0 = time.perf_counter()
    rows, problems, failed = [], [], []
    for net in NETWORKS:
        progress(f"{net['name']} ...")
        e, m, doc = build(net)
        bad = violations(net, m, doc)
        if bad:
            failed.append(f"{net['name']}: " + "; ".join(bad))
            progress(f"REJECTED {failed[-1]}")
        rows.append((net, e, m, doc))
        problems += suite_problems(net, e, m, doc)
    with open(SUITE, "w", encoding="utf-8") as f:
        json.dump(suite_doc(problems), f, indent=1, ensure_ascii=False)
        f.write("\n")
    with open(README, "w", encoding="utf-8") as f:
        f.write(readme_text(rows))
    progress(f"{len(rows)} networks, suite {os.path.relpath(SUITE, ROOT)}, {time.perf_counter() - t0:.0f} s")
    if failed:
        progress("networks breaking the caps:\n  " + "\n  ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
