"""GPU operands (torch, CuPy, JAX) on non-default streams, checked against the CPU engine and torch.
Skips cleanly where there is no usable GPU, cuTENSOR or library context in this build."""

import concurrent.futures as cf

import numpy as np
import pytest
from conftest import DTYPES, rand, tol

import tnrt

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device (torch.cuda.is_available() is False)", allow_module_level=True)
if not tnrt.built_with_cuda or not getattr(tnrt._tnrt, "has_context", False):
    pytest.skip("this build of tnrt has no CUDA backend or no library context", allow_module_level=True)
if tnrt.unavailable_reason(0):
    pytest.skip(tnrt.unavailable_reason(0), allow_module_level=True)

TORCH_DT = {np.float32: torch.float32, np.float64: torch.float64, np.complex64: torch.complex64,
            np.complex128: torch.complex128}
EQ, SHAPES = "abc,cd,bde->ae", [(8, 6, 5), (5, 7), (6, 7, 4)]


def host_ref(ops):
    return tnrt.einsum(EQ, *ops)  # the CPU engine


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_torch_side_stream(rng, dtype):
    ops = [rand(rng, s, dtype) for s in SHAPES]
    dev = [torch.from_numpy(o).cuda() for o in ops]
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        r = tnrt.einsum(EQ, *dev)  # default: torch's current stream, i.e. s
    s.synchronize()
    assert isinstance(r, torch.Tensor) and r.is_cuda and r.dtype == TORCH_DT[dtype]
    np.testing.assert_allclose(r.cpu().numpy(), host_ref(ops), rtol=tol(dtype), atol=tol(dtype))
    torch.testing.assert_close(r, torch.einsum(EQ, *dev), rtol=tol(dtype) * 10, atol=tol(dtype) * 10)


def test_torch_explicit_stream_and_out(rng):
    ops = [rand(rng, s, np.float32) for s in SHAPES]
    dev = [torch.from_numpy(o).cuda() for o in ops]
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    out = torch.empty((8, 4), device="cuda")
    for stream in (s, s.cuda_stream):
        r = tnrt.einsum(EQ, *dev, out=out, stream=stream)
        assert r is out
        s.synchronize()
        np.testing.assert_allclose(out.cpu().numpy(), host_ref(ops), rtol=1e-4, atol=1e-4)


def test_torch_current_stream_skips_the_handshake(rng, monkeypatch):
    """With no stream given, torch tensors are exported without __dlpack__'s stream handshake (tnrt
    runs on torch's current stream, where their writes are already ordered); a stream given goes
    through __dlpack__(stream=) for every operand and out. The results are right either way."""
    ops = [rand(rng, s, np.float32) for s in SHAPES]
    dev = [torch.from_numpy(o).cuda() for o in ops]
    calls = []
    original = torch.Tensor.__dlpack__

    def counting(self, *args, **kwargs):
        calls.append(kwargs.get("stream"))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "__dlpack__", counting)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        big = torch.rand(1 << 22, device="cuda")  # queued on s just before tnrt reads its neighbours
        dev = [d * 1.0 for d in dev]             # written on s
        r = tnrt.einsum(EQ, *dev)
    assert calls == []
    s.synchronize()
    np.testing.assert_allclose(r.cpu().numpy(), host_ref(ops), rtol=1e-4, atol=1e-4)
    out = torch.empty((8, 4), device="cuda")
    tnrt.einsum(EQ, *dev, out=out, stream=s)
    assert len(calls) == 4 and all(c == s.cuda_stream for c in calls)
    s.synchronize()
    np.testing.assert_allclose(out.cpu().numpy(), host_ref(ops), rtol=1e-4, atol=1e-4)
    del big


def test_torch_strided_views(rng):
    a = torch.rand(16, 6, 5, device="cuda", dtype=torch.float64)[::2]  # non-contiguous
    b = torch.rand(7, 5, device="cuda", dtype=torch.float64).t()       # transposed
    c = torch.rand(6, 7, 4, device="cuda", dtype=torch.float64)
    torch.testing.assert_close(tnrt.einsum(EQ, a, b, c), torch.einsum(EQ, a, b, c))


def test_cupy_side_stream(rng):
    cupy = pytest.importorskip("cupy")
    ops = [rand(rng, s, np.complex64) for s in SHAPES]
    dev = [cupy.asarray(o) for o in ops]
    cupy.cuda.get_current_stream().synchronize()
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        r = tnrt.einsum(EQ, *dev)
    s.synchronize()
    assert isinstance(r, cupy.ndarray)
    np.testing.assert_allclose(cupy.asnumpy(r), host_ref(ops), rtol=1e-4, atol=1e-4)
    # A negative-stride view: refused with NotSupportedError, or contracted right (never wrong).
    x = cupy.arange(12, dtype=cupy.float32).reshape(3, 4)[::-1]
    try:
        t = tnrt.einsum("ab->ba", x)
    except tnrt.NotSupportedError:
        return
    np.testing.assert_array_equal(cupy.asnumpy(t), cupy.asnumpy(x).T)


def test_jax(rng):
    jax = pytest.importorskip("jax")
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("JAX has no GPU device")
    ops = [rand(rng, s, np.float32) for s in SHAPES]
    dev = [jax.device_put(o, jax.devices("gpu")[0]) for o in ops]
    r = tnrt.einsum(EQ, *dev)  # legacy default stream; result through __dlpack__
    assert isinstance(r, jax.Array)
    np.testing.assert_allclose(np.asarray(r), host_ref(ops), rtol=1e-4, atol=1e-4)


def test_network_compiled_reset_operands(rng):
    ops = [rand(rng, s, np.float64) for s in SHAPES]
    dev = [torch.from_numpy(o).cuda() for o in ops]
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with tnrt.Network(EQ, *dev) as net:
        net.contract_path(optimize="greedy")
        net.compile()
        assert net.memory.get("total_bytes", 0) > 0
        r = net.contract(stream=s)
        s.synchronize()
        np.testing.assert_allclose(r.cpu().numpy(), host_ref(ops), rtol=1e-10)
        ops2 = [rand(rng, o.shape, np.float64) for o in ops]
        net.reset_operands(*[torch.from_numpy(o).cuda() for o in ops2])
        torch.cuda.synchronize()
        r2 = net.contract(stream=s)
        s.synchronize()
        np.testing.assert_allclose(r2.cpu().numpy(), host_ref(ops2), rtol=1e-10)
        assert net.stats["api"]["program_runs"] >= 2


def test_two_devices_refused():
    a = torch.rand(3, 4, device="cuda")
    with pytest.raises(tnrt.DeviceError):
        tnrt.einsum("ab,bc->ac", a, np.ones((4, 5), np.float32))


def test_eight_threads_own_streams(rng):
    ops = [rand(rng, s, np.float32) for s in SHAPES]
    want = host_ref(ops)
    dev = [torch.from_numpy(o).cuda() for o in ops]
    torch.cuda.synchronize()

    def work(_):
        s = torch.cuda.Stream()
        results = []
        with torch.cuda.stream(s):
            for _ in range(20):
                results.append(tnrt.einsum(EQ, *dev))
        s.synchronize()
        return [r.cpu().numpy() for r in results]

    with cf.ThreadPoolExecutor(8) as pool:
        for rs in pool.map(work, range(8)):
            for r in rs:
                np.testing.assert_allclose(r, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_network_sliced_torch_side_stream(rng, dtype):
    """A sliced Network over torch tensors on a side stream: the given labels (one summed, one kept)
    and a memory limit that makes tnrt find its own, each against the CPU engine."""
    ops = [rand(rng, s, dtype) for s in SHAPES]
    dev = [torch.from_numpy(o).cuda() for o in ops]
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    for kwargs in ({"slicing": ["d", "a"]}, {"slicing": ["c"]}):
        with tnrt.Network(EQ, *dev) as net:
            _, info = net.contract_path(**kwargs)
            assert info["slicing"]["slices"] > 1
            with torch.cuda.stream(s):
                r = net.contract()
                r2 = net.contract()  # a second run zeroes and sums again
            s.synchronize()
            np.testing.assert_allclose(r.cpu().numpy(), host_ref(ops), rtol=tol(dtype), atol=tol(dtype))
            np.testing.assert_allclose(r2.cpu().numpy(), host_ref(ops), rtol=tol(dtype), atol=tol(dtype))
