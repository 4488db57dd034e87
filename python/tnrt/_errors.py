"""tnrt's exceptions: one class per C++ error class of include/tnrt/errors.hpp, each also a subclass of
the builtin exception a Python caller would catch for that kind of mistake."""


class TnrtError(Exception):
    """Base of every error tnrt raises; the message is tnrt's one line."""


class ParseError(TnrtError, ValueError):
    """Malformed expression, JSON or path syntax."""


class ShapeError(TnrtError, ValueError):
    """Rank differs from the label count, one label with two extents, operands of the wrong shape."""


class PathError(TnrtError, ValueError):
    """Path index out of range, a path not ending in one operand, an operand used twice or never."""


class DtypeError(TnrtError, TypeError):
    """Unknown or unsupported element type, or mixed element types."""


class OutOfMemoryError(TnrtError, MemoryError):
    """Host or device memory exhausted, or the network does not fit."""


class DeviceError(TnrtError, RuntimeError):
    """No GPU, no cuTENSOR, a CUDA or cuTENSOR failure, or operands on different devices."""


class NotSupportedError(TnrtError, NotImplementedError):
    """A valid request this build or backend cannot do (e.g. negative strides on a GPU)."""


class IoError(TnrtError, OSError):
    """Unreadable or unwritable file, bad or mismatched .npy."""


class UsageError(TnrtError, ValueError):
    """A bad argument (unknown optimizer or option, exhaustive search over too many operands)."""


class StateError(TnrtError, RuntimeError):
    """A Network used after free()."""


# The order tnrt._tnrt._register_errors expects (python/src/module.cpp: error_slot).
_SLOTS = (TnrtError, ParseError, ShapeError, PathError, DtypeError, OutOfMemoryError, DeviceError,
          NotSupportedError, IoError, UsageError)
