"""Bad inputs raise tnrt's exception classes (each also the matching builtin)."""

import numpy as np
import pytest

import tnrt


class FakeCudaArray:
    """Looks like a CUDA array to tnrt's device check (never contracted)."""
    shape = (4, 5)
    dtype = np.dtype(np.float64)

    def __dlpack__(self, stream=None):
        raise AssertionError("not reached")

    def __dlpack_device__(self):
        return (2, 0)


A = np.ones((3, 4))
B = np.ones((4, 5))


def test_hierarchy():
    assert issubclass(tnrt.ParseError, ValueError) and issubclass(tnrt.ShapeError, ValueError)
    assert issubclass(tnrt.PathError, ValueError) and issubclass(tnrt.DtypeError, TypeError)
    assert issubclass(tnrt.OutOfMemoryError, MemoryError) and issubclass(tnrt.DeviceError, RuntimeError)
    assert issubclass(tnrt.NotSupportedError, NotImplementedError) and issubclass(tnrt.IoError, OSError)
    for cls in (tnrt.ParseError, tnrt.ShapeError, tnrt.PathError, tnrt.DtypeError, tnrt.OutOfMemoryError,
                tnrt.DeviceError, tnrt.NotSupportedError, tnrt.IoError, tnrt.StateError, tnrt.UsageError):
        assert issubclass(cls, tnrt.TnrtError)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float16, np.bool_])
def test_unsupported_dtype(dtype):
    with pytest.raises(tnrt.DtypeError):
        tnrt.einsum("ab,bc->ac", A.astype(dtype), B.astype(dtype))


def test_mixed_dtypes():
    with pytest.raises(tnrt.DtypeError, match="mixed"):
        tnrt.einsum("ab,bc->ac", A.astype(np.float32), B)


def test_shapes():
    with pytest.raises(tnrt.ShapeError):
        tnrt.einsum("ab,bc->ac", A, np.ones((3, 5)))
    with pytest.raises(tnrt.ShapeError):
        tnrt.einsum("abc,bc->a", A, B)
    with pytest.raises(tnrt.ShapeError):
        tnrt.einsum("...ij,...jk", np.ones((2, 3, 4)), np.ones((3, 4, 5)))


def test_expressions():
    with pytest.raises(tnrt.ParseError):
        tnrt.einsum("ab,bc->ax", A, B)  # unknown label in the output
    with pytest.raises(tnrt.ParseError):
        tnrt.einsum("ab,bc->ac->a", A, B)
    with pytest.raises(tnrt.ParseError):
        tnrt.einsum("ab,bc,cd->ad", A, B)
    with pytest.raises(tnrt.ParseError):
        tnrt.einsum("a.b,bc->ac", A, B)
    with pytest.raises(tnrt.TnrtError):
        tnrt.einsum("ab,bc->acc", A, B)
    with pytest.raises(tnrt.ParseError):
        tnrt.einsum("...->", np.ones(2))  # numpy's rule: ellipsis dimensions not summed silently


def test_paths():
    with pytest.raises(tnrt.PathError):
        tnrt.einsum("ab,bc->ac", A, B, optimize=[(0, 2)])
    with pytest.raises(tnrt.PathError):
        tnrt.einsum("ab,bc,cd->ad", A, B, np.ones((5, 2)), optimize=[(0, 1)])
    with pytest.raises(tnrt.UsageError):
        tnrt.einsum("ab,bc->ac", A, B, optimize="no-such-optimizer")
    with pytest.raises(tnrt.UsageError):
        tnrt.einsum("ab,bc->ac", A, B, optimize=3.5)


def test_two_devices():
    with pytest.raises(tnrt.DeviceError, match="different devices"):
        tnrt.einsum("ab,bc->ac", A, FakeCudaArray())


def test_freed_network():
    net = tnrt.Network("ab,bc->ac", A, B)
    net.free()
    for call in (net.contract, net.compile, net.contract_path, lambda: net.reset_operands(A, B)):
        with pytest.raises(tnrt.StateError):
            call()


def test_reset_operands_checks():
    net = tnrt.Network("ab,bc->ac", A, B)
    with pytest.raises(tnrt.ShapeError):
        net.reset_operands(A, np.ones((4, 6)))
    with pytest.raises(tnrt.ShapeError):
        net.reset_operands(A)
    net.reset_operands(A.astype(np.float32), B.astype(np.float32))
    with pytest.raises(tnrt.DtypeError):
        net.contract()


def test_io_and_parse_of_files(tmp_path):
    with pytest.raises(tnrt.IoError):
        tnrt.load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(tnrt.ParseError):
        tnrt.load(bad)


def test_stream_argument_type():
    with pytest.raises(TypeError):
        tnrt.einsum("ab->ba", FakeCudaArray(), stream="default")


def test_message_is_one_line():
    with pytest.raises(tnrt.ShapeError) as e:
        tnrt.einsum("ab,bc->ac", A, np.ones((3, 5)))
    assert "\n" not in str(e.value) and str(e.value)


def test_context_options_are_checked():
    """Kernel-choice options take 'never', 'always' or 'automatic'; anything else, or an unknown
    option, is a UsageError (a ValueError) naming it, and no context is made."""
    from tnrt import _tnrt

    for key in ("tiled_kernel", "algo_timing", "gemm", "gemm_copies", "gemm_check", "grid_steps", "chains", "branches"):
        with pytest.raises(tnrt.UsageError, match=key):
            _tnrt.Context(-1, {key: "sometimes"})
        _tnrt.Context(-1, {key: "never"})
    _tnrt.Context(-1, {"time_layouts": False})
    for value in ("auto", "column", "row", "follow", "planned"):
        _tnrt.Context(-1, {"layout": value})
    with pytest.raises(tnrt.UsageError, match="layout"):
        _tnrt.Context(-1, {"layout": "diagonal"})
    # how compiled times a step alone: the GPU's time, or the enqueue's (the CLI's --step-timing)
    for value in ("device", "enqueue"):
        _tnrt.Context(-1, {"step_timing": value})
    with pytest.raises(tnrt.UsageError, match="step_timing"):
        _tnrt.Context(-1, {"step_timing": "host"})
    # cuTENSOR's runner-up kernels (opt-in): 0 to 64, as the CLI's --kernel-ranks
    for value in (0, 3, 64):
        _tnrt.Context(-1, {"kernel_ranks": value})
    for value in (-1, 65):
        with pytest.raises(tnrt.UsageError, match="kernel_ranks"):
            _tnrt.Context(-1, {"kernel_ranks": value})
    # cuBLASLt's algorithms timed per GEMM step: 0 to 64, as the CLI's --gemm-algos
    for value in (0, 8, 64):
        _tnrt.Context(-1, {"gemm_algos": value})
    for value in (-1, 65):
        with pytest.raises(tnrt.UsageError, match="gemm_algos"):
            _tnrt.Context(-1, {"gemm_algos": value})
    # the full-contraction kernel, as the CLI's --dot (auto|on|off)
    for value in ("never", "always", "automatic"):
        _tnrt.Context(-1, {"full_dot": value})
    with pytest.raises(tnrt.UsageError, match="full_dot"):
        _tnrt.Context(-1, {"full_dot": "on"})
    _tnrt.Context(-1, {"fuse_stage": False})
    _tnrt.Context(-1, {"fuse_levels": False})  # the fused launch's levels (CLI --fuse-levels)
    _tnrt.Context(-1, {"tiled_table": False})  # the tiled kernel's table plans (CLI --tiled-table)
    for value in ("full", "tf32", "tf32x3"):
        _tnrt.Context(-1, {"precision": value})
    with pytest.raises(tnrt.UsageError, match="precision"):
        _tnrt.Context(-1, {"precision": "half"})
    with pytest.raises(tnrt.UsageError, match="no_such_option"):
        _tnrt.Context(-1, {"no_such_option": 1})
