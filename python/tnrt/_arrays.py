"""Operands from any framework through DLPack, streams, and results handed back in the caller's type.

Stream contract (nanobind itself never synchronizes on a DLPack exchange): tnrt enqueues every GPU
operation on one stream and returns without waiting. Operands are taken with
``x.__dlpack__(stream=s)``, so their producer orders its pending writes before tnrt's work on ``s``
(the DLPack protocol); torch tensors on torch's own current stream (no stream given) need no
ordering and are exported with ``torch.utils.dlpack.to_dlpack`` (import_cuda). Results are ready
in ``s``'s order: read them on ``s``, or make another stream wait for ``s`` first. A result tnrt
allocated itself (JAX and other frameworks without an ``empty``) is exported through
``__dlpack__``, which makes the consumer's stream wait for ``s``.

Default stream: the operands' framework's current stream (torch.cuda.current_stream(),
cupy.cuda.get_current_stream()); for JAX and anything else, CUDA's legacy default stream (JAX has no
public current stream; the legacy stream orders itself after every blocking stream, and JAX's
``__dlpack__(stream=)`` makes the array ready for it).
"""

import functools
import sys

import numpy as np

from . import _tnrt
from ._errors import DeviceError

KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED = 1, 2, 3, 13


def framework_of(x):
    mod = type(x).__module__.split(".")[0]
    if mod in ("jaxlib", "jax"):
        return "jax"
    return mod  # numpy, torch, cupy, ...


def as_array(x):
    """Anything without __dlpack__ (a list, a Python scalar) becomes a numpy array."""
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        return x
    return np.asarray(x)


def device_of(x):
    """(is_cuda, ordinal) of an array."""
    kind, ordinal = x.__dlpack_device__()
    kind = int(kind)
    if kind in (KDL_CPU, KDL_CUDA_HOST):
        return (False, -1)
    if kind in (KDL_CUDA, KDL_CUDA_MANAGED):
        return (True, int(ordinal))
    raise DeviceError(f"operand on DLPack device type {kind}: tnrt takes host and CUDA arrays")


def common_device(arrays):
    devices = {device_of(a) for a in arrays}
    if len(devices) > 1:
        names = sorted("cpu" if not c else f"cuda:{o}" for c, o in devices)
        raise DeviceError("operands on different devices: " + ", ".join(names))
    return devices.pop() if devices else (False, -1)


def _name_of(dt):
    name = str(dt)
    if name.startswith("torch."):
        name = name[len("torch."):]
    return {"float": "float32", "double": "float64", "cfloat": "complex64", "cdouble": "complex128"}.get(name, name)


# str() of a NumPy dtype is slow next to a lookup: _Prepared took 11.4 us a 2x2 call before the names
# were kept, 4.7 after (bench/results/cpu-2026-12-06-host-threads).
_cached_name_of = functools.lru_cache(maxsize=256)(_name_of)


def dtype_name(x):
    try:
        return _cached_name_of(x.dtype)
    except TypeError:  # an unhashable dtype-like object
        return _name_of(x.dtype)


def stream_handle(stream, framework, ordinal):
    """A cudaStream_t as an int: from `stream` (int, torch or CuPy stream, __cuda_stream__) or the
    framework's current stream on `ordinal`."""
    if stream is None:
        if framework == "torch":
            import torch
            return int(torch.cuda.current_stream(ordinal).cuda_stream)
        if framework == "cupy":
            import cupy
            with cupy.cuda.Device(ordinal):
                return int(cupy.cuda.get_current_stream().ptr)
        return 0
    if isinstance(stream, int):
        return stream
    if hasattr(stream, "__cuda_stream__"):
        v = stream.__cuda_stream__
        v = v() if callable(v) else v
        return int(v[1]) if isinstance(v, tuple) else int(v)
    if hasattr(stream, "cuda_stream"):  # torch.cuda.Stream
        return int(stream.cuda_stream)
    if hasattr(stream, "ptr"):  # cupy.cuda.Stream
        return int(stream.ptr)
    raise TypeError(f"stream: expected an int, a torch or CuPy stream, or an object with __cuda_stream__; got {type(stream).__name__}")


def dlpack_stream(s):
    # DLPack's stream argument: 1 is the legacy default stream (0 is not allowed), 2 per-thread.
    return 1 if s == 0 else s


_torch_to_dlpack = None


def import_cuda(x, s, current=False):
    """A DLPack capsule of a CUDA array, ordered before work on stream `s` by its producer.

    current: `s` is torch's current stream on the operands' device (stream_handle's choice when the
    caller passed none). A torch tensor's writes are then already ordered before `s`, and its
    exporter is called without the stream handshake: ``Tensor.__dlpack__(stream=s)`` builds an
    ExternalStream and compares it with the current one in Python, about 10 us a tensor on a 2x2
    call (bench/results/2026-12-07-h100-diag: three conversions 43.7 us of tnrt.einsum's 84). The
    tensors __dlpack__ refuses (requires_grad, conjugate or negative bit) still go through it, for
    its error."""
    global _torch_to_dlpack
    if current and type(x).__module__ == "torch" and not (x.requires_grad or x.is_conj() or x.is_neg()):
        if _torch_to_dlpack is None:
            import torch.utils.dlpack
            _torch_to_dlpack = torch.utils.dlpack.to_dlpack
        return _torch_to_dlpack(x)
    return x.__dlpack__(stream=dlpack_stream(s))


class DeviceResult:
    """A result tnrt allocated on the GPU, handed to the caller's framework through DLPack."""

    def __init__(self, nd, stream, ordinal=0):
        self._nd = nd          # nanobind's ndarray (or its DLPack capsule), owning tnrt's device_tensor
        self._stream = stream  # where it was produced
        self._ordinal = ordinal

    def __dlpack_device__(self):
        if hasattr(self._nd, "__dlpack_device__"):
            return self._nd.__dlpack_device__()
        return (2, self._ordinal)  # kDLCUDA

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if stream != -1:
            consumer = 0 if stream in (None, 1) else stream
            _tnrt._stream_wait(consumer, self._stream)
        if not hasattr(self._nd, "__dlpack__"):
            return self._nd  # the capsule itself (a DLPack capsule is consumed once)
        kw = {} if max_version is None else {"max_version": max_version}
        return self._nd.__dlpack__(**kw)


def empty_like_framework(framework, like, shape, ordinal):
    """An uninitialised CUDA output of the caller's framework, or None when it has no `empty`."""
    if framework == "torch":
        import torch
        return torch.empty(tuple(shape), dtype=like.dtype, device=like.device)
    if framework == "cupy":
        import cupy
        with cupy.cuda.Device(ordinal):
            return cupy.empty(tuple(shape), dtype=like.dtype)
    return None


def from_device_result(framework, result):
    if framework == "jax":
        import jax
        return jax.dlpack.from_dlpack(result)
    mod = sys.modules.get(framework)
    if mod is not None and hasattr(mod, "from_dlpack"):
        return mod.from_dlpack(result)
    raise DeviceError(f"cannot hand a CUDA result back to {framework}: it has no from_dlpack")


def from_host_result(framework, like, result):
    """A numpy result as the caller's host type."""
    if framework == "numpy":
        return result
    if framework == "torch":
        import torch
        return torch.from_numpy(result)
    if framework == "jax":
        import jax.numpy as jnp
        return jnp.asarray(result)
    mod = sys.modules.get(framework)
    if mod is not None and hasattr(mod, "from_dlpack"):
        try:
            return mod.from_dlpack(result)
        except Exception:  # noqa: BLE001 - fall back to numpy for frameworks that refuse host arrays
            return result
    return result


def host_view(x):
    """What the C++ host path reads: numpy arrays as they are, torch tensors detached."""
    if framework_of(x) == "torch":
        return x.detach()
    return x


def write_host_out(out, result):
    fw = framework_of(out)
    if fw == "numpy":
        np.copyto(out, result)
    elif fw == "torch":
        import torch
        out.copy_(torch.from_numpy(result))
    else:
        out[...] = result
    return out
