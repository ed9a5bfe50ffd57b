"""Types for annotations, as ``jax.typing``: the :class:`Array` ABC that concrete Tensors and
tracers both register with, and the ``ArrayLike`` / ``DTypeLike`` unions accepted by the ops.

Owns: ``qb.Array`` (also ``qb.typing.Array``), ``qb.typing.ArrayLike``,
``qb.typing.DTypeLike``.

Example:
    >>> import quabla.typing
    >>> def scale(x: quabla.typing.ArrayLike) -> qb.Array:
    ...     return qb.asarray(x) * 2
    >>> isinstance(scale(1.5), qb.Array)
    True
"""

import abc
import typing as _typing

import numpy as np

from . import _quabla as _q
from ._trace import Tracer
from .dtypes import DType

__all__ = ["Array", "ArrayLike", "DTypeLike"]


class Array(abc.ABC):
    """The abstract array type: ``isinstance(x, qb.Array)`` is true for concrete
    :class:`Tensor` values and for the tracers that stand for arrays inside ``jit`` and
    the transforms (both register with it), as ``jax.Array``. It is for ``isinstance``
    checks and annotations; it cannot be instantiated.

    Example:
        >>> isinstance(qb.ones(2), qb.Array)
        True
        >>> qb.jit(lambda x: qb.array(isinstance(x, qb.Array)))(qb.ones(2)).item()
        True
        >>> isinstance(1.0, qb.Array)
        False
    """

    __slots__ = ()

    def __new__(cls, *args, **kwargs):
        if cls is Array:
            raise TypeError("qb.Array is abstract: create arrays with qb.array, qb.zeros, ...")
        return super().__new__(cls)


Array.register(_q.Tensor)
Array.register(Tracer)

#: What the ops accept as an array: a Tensor or tracer, a NumPy array or scalar, or a Python
#: number (as ``jax.typing.ArrayLike``).
ArrayLike = _typing.Union[Array, np.ndarray, np.bool_, np.number, bool, int, float]

#: What ``qb.dtype`` accepts: a :class:`DType`, a name (``"float32"``), a NumPy dtype or
#: a Python type.
DTypeLike = _typing.Union[DType, str, np.dtype, type]
