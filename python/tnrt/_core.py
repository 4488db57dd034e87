"""einsum, Network, load: the package's API over tnrt._tnrt."""

import atexit
import functools
import threading

from . import _arrays, _expr, _tnrt
from ._errors import DeviceError, ParseError, ShapeError, StateError, UsageError

_contexts = {}
_contexts_lock = threading.Lock()


def context(device=-1):
    """The process's shared tnrt context for a device (-1: the CPU engine), created on first use.
    Thread-safe: the C++ context serializes calls from any number of threads."""
    with _contexts_lock:
        ctx = _contexts.get(device)
        if ctx is None:
            ctx = _contexts[device] = _tnrt.Context(device)
        return ctx


@atexit.register
def _release_contexts():
    """At interpreter exit, while CUDA and the array libraries are still alive: wait for each
    context's work and drop it. Left to module teardown, a context could be destroyed after the
    CUDA runtime has begun shutting down (a crash at exit)."""
    with _contexts_lock:
        for ctx in _contexts.values():
            try:
                ctx.synchronize()
            except Exception:  # noqa: BLE001 - exiting: nothing left to report to
                pass
        _contexts.clear()
    _path_and_problem.cache_clear()
    _problem.cache_clear()
    _searched_path.cache_clear()


@functools.lru_cache(maxsize=512)
def _problem(eq, shapes, dtype, path):
    return _tnrt.Problem.from_expression(eq, [list(s) for s in shapes], dtype, [list(p) for p in path])


@functools.lru_cache(maxsize=512)
def _searched_path(optimize, eq, shapes, dtype):
    """tnrt's own path search, once per optimizer name, expression, shapes and dtype: einsum resolves
    its path on every call, and a repeated einsum would otherwise pay the search each time."""
    return tuple(tuple(p) for p in _tnrt.linear_path(eq, [list(s) for s in shapes], optimize, dtype))


def _input_labels(eq):
    return eq.split("->")[0].split(",")


def resolve_path(optimize, eq, shapes, dtype="float32"):
    """A linear path (tuple of pairs) from any `optimize` value einsum takes. "auto" and "hyper" are
    tnrt's search, scored by its cost model for `dtype`."""
    n = len(shapes)
    if optimize is None or optimize is True:
        optimize = "auto"
    if optimize is False:
        return tuple((0, 1) for _ in range(n - 1)) if n > 1 else ((0,),) if n == 1 else ()
    if isinstance(optimize, dict) and "path" in optimize:  # cuQuantum's OptimizerOptions(path=...)
        optimize = optimize["path"]
    if isinstance(optimize, str):
        if optimize in ("optimal", "exhaustive", "dp") and n > 8:
            optimize = "greedy"
        if optimize in ("dp", "branch-all", "branch-2"):
            optimize = "auto"
        return _searched_path(optimize, eq, tuple(tuple(int(e) for e in s) for s in shapes), dtype)
    if hasattr(optimize, "get_path"):  # a cotengra ContractionTree
        return tuple(tuple(int(i) for i in p) for p in optimize.get_path())
    if callable(optimize):  # an opt_einsum PathOptimizer or a cotengra HyperOptimizer
        inputs = [tuple(t) for t in _input_labels(eq)]
        output = tuple(eq.split("->")[1])
        size = {}
        for t, s in zip(inputs, shapes):
            for c, e in zip(t, s):
                size[c] = int(e)
        return tuple(tuple(int(i) for i in p) for p in optimize(inputs, output, size))
    optimize = list(optimize) if isinstance(optimize, (list, tuple)) else optimize
    if isinstance(optimize, list) and optimize and optimize[0] == "einsum_path":  # numpy.einsum_path's marker
        optimize = optimize[1:]
    try:
        path = [tuple(int(i) for i in p) for p in optimize]
    except TypeError:
        raise UsageError(f"optimize: expected 'auto', 'greedy', a linear path, a cotengra tree or a path optimizer; "
                         f"got {type(optimize).__name__}") from None
    return tuple(path)


class _Prepared:
    """One call's operands, normalized: expression, arrays, dtype, device, framework."""

    def __init__(self, subscripts, operands):
        if isinstance(subscripts, _tnrt.Problem):
            self.eq, self.raw_eq = None, None
            self.arrays = [_arrays.as_array(x) for x in operands]
            self.problem = subscripts
        else:
            if not isinstance(subscripts, str):
                subscripts, operands = _expr.from_interleaved((subscripts,) + tuple(operands))
            self.raw_eq = subscripts
            self.eq, self.arrays = _expr.normalize(subscripts, [_arrays.as_array(x) for x in operands])
            self.problem = None
        if not self.arrays:
            raise ParseError("einsum: no operands")
        self.framework = _arrays.framework_of(self.arrays[0])
        self.is_cuda, self.ordinal = _arrays.common_device(self.arrays)
        names = [_arrays.dtype_name(a) for a in self.arrays]
        self.dtype = names[0] if self.problem is None else self.problem.dtype
        self.shapes = tuple(_shape_of(a) for a in self.arrays)

    def build(self, optimize):
        if self.problem is None:
            if optimize is None or isinstance(optimize, (bool, str)):  # one lookup for a repeated einsum
                self.path, self.problem = _path_and_problem(optimize, self.eq, self.shapes, self.dtype)
            else:
                self.path = resolve_path(optimize, self.eq, self.shapes, self.dtype)
                self.problem = _problem(self.eq, self.shapes, self.dtype, self.path)
        return self.problem


def _shape_of(x):
    """An array's shape as a tuple of Python ints (NumPy's, torch's, CuPy's and JAX's already are)."""
    s = tuple(x.shape)
    return s if all(type(e) is int for e in s) else tuple(int(e) for e in s)


@functools.lru_cache(maxsize=512)
def _path_and_problem(optimize, eq, shapes, dtype):
    """resolve_path and _problem for an `optimize` that is a name (or None, True, False): one cache
    lookup instead of two on a repeated call."""
    path = resolve_path(optimize, eq, shapes, dtype)
    return path, _problem(eq, shapes, dtype, path)


def _run(prep, problem, out, stream, program=None, cache=None):
    if not prep.is_cuda:
        ctx = context(-1)
        result = ctx.contract_host(problem, [_arrays.host_view(a) for a in prep.arrays])
        if out is not None:
            return _arrays.write_host_out(out, result)
        return _arrays.from_host_result(prep.framework, prep.arrays[0], result)
    s = _arrays.stream_handle(stream, prep.framework, prep.ordinal)
    cur = stream is None and prep.framework == "torch"  # s is torch's current stream: see import_cuda
    ctx = context(prep.ordinal)
    if program is not None and cache is not None and out is None:
        out = _arrays.empty_like_framework(prep.framework, prep.arrays[0], problem.output_shape, prep.ordinal)
    if program is not None and cache is not None and out is not None:
        # A compiled Network: its operands imported once (ordered before stream s then), reused on
        # every call until reset_operands; writes into them later are ordered by the caller's stream.
        if cache.get("operands") is None:
            cache["operands"] = _tnrt.Operands(problem, [_arrays.import_cuda(a, s, cur) for a in prep.arrays])
        if _arrays.device_of(out) != (True, prep.ordinal):
            raise DeviceError(f"out is not on cuda:{prep.ordinal} with the operands")
        program.run_prepared(cache["operands"], _arrays.import_cuda(out, s, cur), s)
        return out
    caps = [_arrays.import_cuda(a, s, cur) for a in prep.arrays]
    if out is None:
        out = _arrays.empty_like_framework(prep.framework, prep.arrays[0], problem.output_shape, prep.ordinal)
        if out is None:  # JAX and the like: tnrt allocates, the framework imports through DLPack
            if program is not None:
                raise UsageError(f"a compiled Network over {prep.framework} arrays needs out=")
            return _arrays.from_device_result(prep.framework, _arrays.DeviceResult(ctx.contract_alloc(problem, caps, s), s, prep.ordinal))
    if _arrays.device_of(out) != (True, prep.ordinal):
        raise DeviceError(f"out is not on cuda:{prep.ordinal} with the operands")
    out_cap = _arrays.import_cuda(out, s, cur)
    if program is not None:
        program.run(caps, out_cap, s)
    else:
        ctx.contract_into(problem, caps, out_cap, s)
    return out


def einsum(subscripts, *operands, optimize="auto", out=None, stream=None):
    """numpy.einsum's and torch.einsum's expressions (ellipsis and the interleaved form too) over
    any DLPack arrays: NumPy and other host arrays on the CPU engine, CUDA arrays on their GPU,
    without copies. Returns the first operand's type on the operands' device (or `out`).

    optimize: "auto", "greedy", "optimal", a linear path [(0, 1), ...], a cotengra
    ContractionTree, or an opt_einsum/cotengra path optimizer. stream: see tnrt._arrays."""
    prep = _Prepared(subscripts, operands)
    return _run(prep, prep.build(optimize), out, stream)


def load(path, dtype=None):
    """A problem from a TNB tree JSON or an einsum JSON file (the CLI's loaders); contract it with
    Network(problem, *operands)."""
    return _tnrt.Problem.load(str(path), dtype)


def tensordot(a, b, axes=2):
    """numpy.tensordot through tnrt (for opt_einsum's backend="tnrt" and cotengra's tuple
    implementation)."""
    a, b = _arrays.as_array(a), _arrays.as_array(b)
    na, nb = len(a.shape), len(b.shape)
    if isinstance(axes, int):
        left, right = list(range(na - axes, na)), list(range(axes))
    else:
        left, right = axes
        left = [left] if isinstance(left, int) else list(left)
        right = [right] if isinstance(right, int) else list(right)
    left = [i % na if na else i for i in left]
    right = [i % nb if nb else i for i in right]
    if len(left) != len(right):
        raise ShapeError(f"tensordot: {len(left)} axes of a against {len(right)} of b")
    pool = _expr._POOL
    la = pool[:na]
    lb = [None] * nb
    for i, j in zip(left, right):
        lb[j] = la[i]
    nxt = na
    for j in range(nb):
        if lb[j] is None:
            lb[j] = pool[nxt]
            nxt += 1
    out = [c for i, c in enumerate(la) if i not in left] + [c for j, c in enumerate(lb) if j not in right]
    return einsum("".join(la) + "," + "".join(lb) + "->" + "".join(out), a, b)


def transpose(a, axes=None):
    """The caller's framework's own transpose (a view where it has views)."""
    if axes is None:
        axes = tuple(reversed(range(len(a.shape))))
    if _arrays.framework_of(a) == "torch":
        return a.permute(*axes)
    return a.transpose(tuple(axes))


class Network:
    """A contraction built once and run many times, with cuQuantum's Network method names:

        with tnrt.Network("ab,bc->ac", a, b) as net:
            path, info = net.contract_path()   # or optimize="greedy", a path, a cotengra tree
            net.compile()                      # GPU: plans pinned, memory planned, CUDA graph
            r = net.contract(stream=s)
            net.reset_operands(a2, b2)         # same shapes, dtype and device
            r2 = net.contract()

    The first argument may also be a problem from tnrt.load or the interleaved form."""

    def __init__(self, subscripts, *operands, options=None, stream=None):
        self._prep = _Prepared(subscripts, operands)
        self._options = dict(options or {})
        self._stream = stream
        self._problem = self._prep.problem
        self._program = None
        self._cache = {}
        self._freed = False
        self._slicing = None  # (index names, memory limit in bytes) once contract_path asked for slicing
        self._sliced = None

    def _check(self):
        if self._freed:
            raise StateError("this Network was freed")

    def contract_path(self, optimize="auto", slicing=None, memory_limit=None, **_ignored):
        """Chooses the contraction order; returns (path, info) with the path as opt_einsum pairs.

        slicing: index names to slice (cotengra's tree.sliced_inds), and/or memory_limit (bytes):
        contract() then sums the slices, each a replay of one compiled program (tnrt finds the
        labels under the limit when none are given). info["slicing"] says what was chosen."""
        self._check()
        self._sliced = None
        self._slicing = (list(slicing or []), int(memory_limit or 0)) if (slicing or memory_limit) else None
        if self._prep.problem is not None and self._prep.eq is None:
            c = self._problem.cost
            return None, c
        self._prep.problem = None
        self._problem = self._prep.build(optimize)
        self._program = None
        self._cache.clear()
        path = self._prep.path  # the one build resolved (a search is not run twice)
        info = self._problem.cost
        if self._slicing is not None:
            info = dict(info)
            info["slicing"] = self._sliced_program().report()
        return [tuple(p) for p in path], info

    def _sliced_program(self):
        if self._sliced is None:
            labels, limit = self._slicing
            ctx = context(self._prep.ordinal if self._prep.is_cuda else -1)
            self._sliced = _tnrt.SlicedProgram(ctx, self._ensure_problem(), labels, limit)
        return self._sliced

    def _contract_sliced(self, stream, out):
        sp = self._sliced_program()
        if not self._prep.is_cuda:
            result = sp.run_host([_arrays.host_view(a) for a in self._prep.arrays])
            if out is not None:
                return _arrays.write_host_out(out, result)
            return _arrays.from_host_result(self._prep.framework, self._prep.arrays[0], result)
        s = _arrays.stream_handle(stream, self._prep.framework, self._prep.ordinal)
        if out is None:
            out = _arrays.empty_like_framework(self._prep.framework, self._prep.arrays[0], self._problem.output_shape, self._prep.ordinal)
            if out is None:
                raise UsageError(f"a sliced Network over {self._prep.framework} arrays needs out=")
        if _arrays.device_of(out) != (True, self._prep.ordinal):
            raise DeviceError(f"out is not on cuda:{self._prep.ordinal} with the operands")
        cur = stream is None and self._prep.framework == "torch"
        caps = [_arrays.import_cuda(a, s, cur) for a in self._prep.arrays]
        sp.run(caps, _arrays.import_cuda(out, s, cur), s)
        return out

    def _ensure_problem(self):
        self._check()
        if self._problem is None:
            self.contract_path()
        return self._problem

    def compile(self):
        """GPU: compiles the program (blocking). On the CPU engine there is nothing to compile."""
        problem = self._ensure_problem()
        if self._prep.is_cuda and self._program is None:
            if not getattr(_tnrt, "has_context", False):
                raise DeviceError("this build of tnrt's Python module has no library context")
            self._program = _tnrt.Program(context(self._prep.ordinal), problem)
        return self

    def autotune(self, iterations=3, **_ignored):
        """cuQuantum's autotune: compiling times tnrt's kernel choices once."""
        return self.compile()

    def contract(self, stream=None, out=None):
        problem = self._ensure_problem()
        s = stream if stream is not None else self._stream
        if self._slicing is not None:
            return self._contract_sliced(s, out)
        return _run(self._prep, problem, out, s, self._program, self._cache)

    def reset_operands(self, *operands):
        """New arrays of the same shapes, dtype and device (new pointers and values every call)."""
        self._check()
        arrays = [_arrays.as_array(x) for x in operands]
        if len(arrays) != len(self._prep.arrays):
            raise ShapeError(f"reset_operands: {len(arrays)} operands for a network of {len(self._prep.arrays)}")
        if self._prep.raw_eq is not None:  # squeeze broadcast ellipsis dimensions as the first time
            eq, arrays = _expr.normalize(self._prep.raw_eq, arrays)
            if eq != self._prep.eq:
                raise ShapeError(f"reset_operands: the operands make '{eq}', the network is '{self._prep.eq}'")
        for i, (new, old) in enumerate(zip(arrays, self._prep.arrays)):
            if tuple(new.shape) != tuple(old.shape):
                raise ShapeError(f"reset_operands: operand {i} has shape {tuple(new.shape)}, the network {tuple(old.shape)}")
        if _arrays.common_device(arrays) != (self._prep.is_cuda, self._prep.ordinal):
            raise DeviceError("reset_operands: operands on another device than the network's")
        self._prep.arrays = arrays
        self._prep.framework = _arrays.framework_of(arrays[0])
        self._cache.clear()

    @property
    def memory(self):
        """Device memory of the compiled program (bytes by kind); empty before compile or on the CPU."""
        self._check()
        return self._program.memory() if self._program is not None else {}

    @property
    def stats(self):
        """The context's counters (plan cache, API calls, host synchronizations), and the program's
        launches and compile time once compiled."""
        self._check()
        d = {}
        if self._prep.is_cuda and getattr(_tnrt, "has_context", False):
            d.update(context(self._prep.ordinal).stats())
        if self._program is not None:
            d["program"] = self._program.info()
        if self._sliced is not None:
            d["slicing"] = self._sliced.report()
        if self._problem is not None:
            d["cost"] = self._problem.cost
        return d

    def free(self):
        """Drops the compiled program and the operands; the Network cannot be used afterwards."""
        self._program = None
        self._sliced = None
        self._cache.clear()
        self._prep.arrays = []
        self._freed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.free()
        return False
