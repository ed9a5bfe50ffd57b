"""Quabla's exception hierarchy.

Every exception subclasses :class:`QuablaError` and the builtin exception that code catching
``ValueError``/``TypeError`` expects::

    QuablaError(Exception)
    ├── UnsupportedOperationError(QuablaError, ValueError, NotImplementedError)  .op, .device
    ├── TracerError(QuablaError, TypeError)
    ├── RetraceLimitError(QuablaError, ValueError)                               .keys
    ├── ShapeError(QuablaError, ValueError)     shapes that do not fit an op
    │   └── BatchingError(ShapeError)           vmap axes/sizes/structures that do not fit
    └── DTypeError(QuablaError, TypeError)      dtypes an op does not accept or cannot mix

Messages name the op and the offending shapes/dtypes; errors raised while tracing also carry
the user's source location.
"""

__all__ = [
    "QuablaError",
    "UnsupportedOperationError",
    "TracerError",
    "RetraceLimitError",
    "ShapeError",
    "DTypeError",
    "BatchingError",
]


class QuablaError(Exception):
    """Base class of every error Quabla raises."""


class UnsupportedOperationError(QuablaError, ValueError, NotImplementedError):
    """An operation that the selected device (or Quabla) does not support.

    Attributes:
        op: the operation's name.
        device: the device name, or None.
    """

    def __init__(self, message, op=None, device=None):
        super().__init__(message)
        self.op = op
        self.device = device


class TracerError(QuablaError, TypeError):
    """A traced value was used where a concrete value is needed (Python control flow,
    ``float()``, ``.numpy()``, indexing with a tracer), or a tracer escaped its trace."""


class RetraceLimitError(QuablaError, ValueError):
    """A jitted function was called with more distinct signatures than ``max_traces``.

    Attributes:
        keys: the cache keys traced so far, plus the rejected one (last).
    """

    def __init__(self, message, keys=()):
        super().__init__(message)
        self.keys = list(keys)


class ShapeError(QuablaError, ValueError):
    """Shapes that do not fit an op (broadcasting, matmul, reshape, axes, ...)."""


class DTypeError(QuablaError, TypeError):
    """A dtype an op does not accept, or a dtype mix that needs an explicit ``astype``."""


class BatchingError(ShapeError):
    """A ``vmap`` whose ``in_axes``/``out_axes`` do not fit the arguments or results:
    inconsistent mapped sizes, an axis out of range, a structure mismatch, no mapped
    argument, or ``out_axes=None`` for a result that depends on a mapped argument. The
    message names the argument (or result), its shape and the axis."""
