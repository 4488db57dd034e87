"""opt_einsum backend: opt_einsum.contract(..., backend="tnrt") imports the module named by the
string and takes its tensordot, transpose and einsum, so the top-level tnrt module exposes them;
backend="tnrt.opt_einsum_backend" works too."""

from ._core import einsum, tensordot, transpose

__all__ = ["einsum", "tensordot", "transpose"]
