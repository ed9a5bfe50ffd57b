"""``qb.scipy.integrate``: ``jax.scipy.integrate``'s ``trapezoid``, built from Quabla ops.

Example:
    >>> import quabla.scipy.integrate as qint
    >>> qint.trapezoid(qb.array([1.0, 2.0, 3.0])).item()
    4.0
"""

from .. import _ops as _o
from .._math import trapezoid as _trapezoid
from .._trace import is_array
from ..errors import ArgumentTypeError, QuablaError, ShapeError

__all__ = ["trapezoid"]


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of ``y`` along ``axis`` by the composite trapezoidal rule
    (``jax.scipy.integrate.trapezoid``, the same as ``qb.numpy.trapezoid``).

    Args:
        y: the sampled values.
        x: the sample points (1-D along ``axis``, or of ``y``'s shape); None: equally spaced
            by ``dx``.
        dx: the spacing when ``x`` is None (a number or an array broadcasting against ``y``).
        axis: the axis to integrate along (default -1).

    Returns:
        The integral, in the inexact dtype of ``y`` (and ``x``), with ``axis`` removed.

    Example:
        >>> import quabla.scipy.integrate as qint
        >>> qint.trapezoid(qb.array([1.0, 2.0, 3.0]), x=qb.array([0.0, 1.0, 3.0])).item()
        6.5
    """
    name = "trapezoid"
    try:
        ya = _o._to_array(y)
    except QuablaError as e:
        raise type(e)(f"{name}: y: {e}") from None
    if ya.ndim == 0:
        raise ShapeError(f"{name}: y must have at least one dimension, got a 0-d array")
    ax = _o._norm_axis(name, axis, ya.ndim, ya.shape)
    n = ya.shape[ax]
    if x is not None:
        try:
            xa = _o._to_array(x)
        except QuablaError as e:
            raise type(e)(f"{name}: x: {e}") from None
        if xa.ndim == 1 and xa.shape[0] != n:
            raise ShapeError(f"{name}: a 1-D x needs one sample point per element of y along axis {ax}: length {n}, got shape {_o._shape_str(xa.shape)}")
        if xa.ndim > 1 and (xa.ndim != ya.ndim or xa.shape[ax] != n):
            raise ShapeError(f"{name}: x must be 1-D or of y's rank with y's extent along axis {ax}, got shapes y {_o._shape_str(ya.shape)} and x {_o._shape_str(xa.shape)}")
        if xa.ndim == 0:
            raise ShapeError(f"{name}: x must be 1-D or of y's rank, got a 0-d array")
        x = xa
    elif not (is_array(dx) or isinstance(dx, (int, float))) or isinstance(dx, bool):
        try:
            dx = _o._to_array(dx)
        except QuablaError as e:
            raise type(e)(f"{name}: dx: {e}") from None
        if dx.dtype.is_bool:
            raise ArgumentTypeError(f"{name}: dx must be a number or a numeric array, got a bool")
    if is_array(dx) and dx.ndim > ya.ndim:
        raise ShapeError(f"{name}: dx of shape {_o._shape_str(dx.shape)} has more dimensions than y of shape {_o._shape_str(ya.shape)}")
    try:
        return _trapezoid(ya, x, dx, ax)
    except QuablaError as e:
        if str(e).startswith(name):
            raise
        raise type(e)(f"{name}: {e}") from None
