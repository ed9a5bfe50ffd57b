"""``jax.numpy.nextafter`` and ``jax.numpy.spacing``: the NumPy-level wrappers (promotion of
the operands to a common float dtype) over :func:`quabla.lax.nextafter`, which computes the
next float from float arithmetic (Quabla has no bitcast). Their own module because ``lax``
imports the modules that hold the other NumPy functions (python/quabla/_math.py).

Subnormal numbers are flushed to zero by Quabla's float ops (as XLA on CPU): a subnormal
input counts as 0, and ``spacing`` of a number whose gap to the next float is subnormal
(the smallest normals) is the smallest subnormal only at 0.
"""

import math

import numpy as np

from . import _ops as _o
from . import lax as _lax
from ._trace import is_array

__all__ = ["nextafter", "spacing"]


def _float_pair(name, x, y):
    """``x`` and ``y`` promoted to one float dtype (weak Python scalars; integers and bools
    made inexact as JAX's ``to_inexact_dtype``) and broadcast."""
    x, y = _o._binary_operands(name, x, y)
    if not x.dtype.is_float:
        x, y = _o._floatify(x), _o._floatify(y)
    return x, y


def nextafter(x, y, /):
    """The next representable float after ``x`` in the direction of ``y``, elementwise
    (``jnp.nextafter``, C's ``nextafter``): ``y`` where they are equal, NaN where either is
    NaN; the operands are promoted to a common float dtype first (integers and bools to
    their inexact dtype: int64 -> float64, narrower ones -> float32).

    Args:
        x: an array or a Python number.
        y: an array or a Python number (broadcast with ``x``).

    Returns:
        The float array of the broadcast shape.

    Example:
        >>> qb.numpy.nextafter(1.0, 2.0).item() - 1.0 == 2.0 ** -52
        True
    """
    a, b = _float_pair("nextafter", x, y)
    return _lax.nextafter(a, b)


def spacing(x, /):
    """The distance from ``x`` to the next float away from zero (NumPy's ``spacing``, as
    ``jnp.spacing``): negative for negative ``x``; NaN for infinities and NaN; at 0 the
    smallest subnormal of the zero's sign. Integers and bools are made inexact first (int64 -> float64,
    narrower ones -> float32).

    Args:
        x: an array or a Python number.

    Returns:
        The float array of ``x``'s shape.

    Example:
        >>> qb.numpy.spacing(1.0).item() == 2.0 ** -52
        True
    """
    a = _o._floatify(x if is_array(x) else _o._to_array(x))
    away = _o.where(a < 0, _o.full_like(a, -math.inf), _o.full_like(a, math.inf))
    gap = _lax.nextafter(a, away) - a
    # At 0 the gap is the smallest subnormal, which the subtraction flushes: taken as is,
    # with the zero's sign (1 / -0 is -inf), as NumPy and JAX.
    tiny = float(np.finfo(a.dtype.np).smallest_subnormal)
    t = _o.full_like(a, tiny)
    gap = _o.where(a == 0, _o.where(1.0 / a < 0, -t, t), gap)
    return _o.where(_o.isfinite(a), gap, math.nan)
