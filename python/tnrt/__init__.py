"""tnrt: tensor-network and einsum contraction on NVIDIA GPUs through cuTENSOR, with a CPU reference
engine.

    import tnrt
    r = tnrt.einsum("ab,bc->ac", a, b)      # numpy -> CPU engine, torch/CuPy/JAX CUDA -> GPU
    with tnrt.Network("ab,bc,cd->ad", a, b, c) as net:
        net.contract_path(optimize="greedy"); net.compile(); r = net.contract()

Also the opt_einsum backend (opt_einsum.contract(..., backend="tnrt") uses this module's
einsum, tensordot and transpose) and a cotengra contractor (tnrt.cotengra). Streams and results:
see tnrt._arrays.
"""

import importlib.util
import os


def _point_at_cutensor():
    # The C++ backend dlopens libcutensor.so.2 (src/cuda/cutensor_api.cpp, TNRT_CUTENSOR_PATH first);
    # the cutensor-cu13 wheel's copy sits in site-packages/cutensor/lib.
    if os.environ.get("TNRT_CUTENSOR_PATH"):
        return
    spec = importlib.util.find_spec("cutensor")
    for root in (spec.submodule_search_locations or []) if spec else []:
        lib = os.path.join(root, "lib", "libcutensor.so.2")
        if os.path.isfile(lib):
            os.environ["TNRT_CUTENSOR_PATH"] = lib
            return


_point_at_cutensor()

from . import _tnrt  # noqa: E402
from ._errors import (  # noqa: E402
    DeviceError, DtypeError, IoError, NotSupportedError, OutOfMemoryError, ParseError, PathError,
    ShapeError, StateError, TnrtError, UsageError, _SLOTS,
)

_tnrt._register_errors(list(_SLOTS))

from ._core import Network, context, einsum, load, tensordot, transpose  # noqa: E402

Problem = _tnrt.Problem
__version__ = "0.1.0"
built_with_cuda = _tnrt.built_with_cuda


def unavailable_reason(device=0):
    """"" when CUDA device `device` and cuTENSOR are usable; otherwise why not."""
    return _tnrt.unavailable_reason(device)


def register_cotengra():
    """Makes implementation="tnrt" work in cotengra and quimb (see tnrt.cotengra.register)."""
    from . import cotengra as _ctg
    _ctg.register()


__all__ = [
    "einsum", "Network", "load", "Problem", "tensordot", "transpose", "context", "register_cotengra",
    "unavailable_reason", "built_with_cuda", "TnrtError", "ParseError", "ShapeError", "PathError",
    "DtypeError", "OutOfMemoryError", "DeviceError", "NotSupportedError", "IoError", "UsageError",
    "StateError",
]
