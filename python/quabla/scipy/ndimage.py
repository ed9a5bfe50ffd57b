"""``qb.scipy.ndimage``: ``jax.scipy.ndimage``'s ``map_coordinates``, built from Quabla ops.

Example:
    >>> import quabla.scipy.ndimage as qnd
    >>> qnd.map_coordinates(qb.arange(5.0), [qb.array([1.5])], order=1).tolist()
    [1.5]
"""

import itertools
import math

import numpy as np

from .. import _ops as _o
from .. import dtypes as _dt
from .._math import result_type as _result_type
from .._trace import Tracer
from ..errors import ArgumentTypeError, QuablaError, ShapeError, UnsupportedOperationError

__all__ = ["map_coordinates"]

_MODES = ("constant", "nearest", "wrap", "mirror", "reflect")


def _mirror(i, size):
    """Indices folded into [0, size) by a triangle wave without repeating the edges."""
    if size == 1:
        return _o.zeros_like(i)
    s = size - 1
    return _o.abs((i + s) % (2 * s) - s)


def _reflect(i, size):
    """Indices folded into [0, size) by reflection about the edges (the edge repeated)."""
    return _o.floor_divide(_mirror(2 * i + 1, 2 * size + 1) - 1, 2)


def _fix(mode, i, size):
    if mode == "nearest" or mode == "constant":
        # 'constant' clamps only so that the gather stays in range: its out-of-range nodes
        # are masked with cval.
        return _o.clip(i, 0, size - 1)
    if mode == "wrap":
        return i % size
    if mode == "mirror":
        return _mirror(i, size)
    return _reflect(i, size)


def _round_half_away(c):
    """Rounds ties away from zero (as ``jax.lax.round``'s default)."""
    a = _o.abs(c)
    t = _o.floor(a)
    r = t + _o.astype(a - t >= 0.5, c.dtype)
    return _o.where(c < 0, -r, r)


def map_coordinates(input, coordinates, order, mode="constant", cval=0.0):  # noqa: A002 - JAX's name
    """Values of ``input`` at fractional ``coordinates`` by nearest-neighbour (``order=0``)
    or multilinear (``order=1``) interpolation (``jax.scipy.ndimage.map_coordinates``).

    As JAX's: ``mode`` sets the values outside the input: 'constant' (``cval``; SciPy's
    'grid-constant'), 'nearest' (the edge value), 'wrap' (periodic; SciPy's 'grid-wrap'),
    'mirror' (reflected about the edge samples) or 'reflect' (reflected about the edges,
    the edge sample repeated). Order 0 rounds ties away from zero. Integer inputs round the
    interpolated value half away from zero. The result is differentiable in ``input`` and,
    for ``order=1``, in ``coordinates``.

    Args:
        input: the N-d array to sample.
        coordinates: N arrays (a sequence, or an array with leading axis N) of coordinates,
            one per axis of ``input``, broadcasting against each other.
        order: 0 or 1 (higher orders raise UnsupportedOperationError, as JAX's).
        mode: 'constant' (default), 'nearest', 'wrap', 'mirror' or 'reflect'.
        cval: the value outside the input for 'constant' (default 0.0).

    Returns:
        The sampled values, of the coordinates' broadcast shape and ``input``'s dtype.

    Example:
        >>> import quabla.scipy.ndimage as qnd
        >>> x = qb.arange(12.0).reshape(3, 4)
        >>> qnd.map_coordinates(x, [qb.array([0.5, 1.5]), qb.array([1.5, 2.5])], order=1).tolist()
        [3.5, 8.5]
    """
    name = "map_coordinates"
    try:
        x = _o._to_array(input)
    except QuablaError as e:
        raise type(e)(f"{name}: input: {e}") from None
    if isinstance(coordinates, (str, bytes)) or not (isinstance(coordinates, (list, tuple, np.ndarray)) or hasattr(coordinates, "ndim")):
        raise ArgumentTypeError(f"{name}: coordinates must be a sequence of arrays (one per dimension of input), got {type(coordinates).__name__}")
    if hasattr(coordinates, "ndim") and not isinstance(coordinates, (list, tuple)):
        if coordinates.ndim == 0:
            raise ShapeError(f"{name}: coordinates must be a sequence of length input.ndim = {x.ndim}, got a 0-d array")
        coordinates = [coordinates[k] for k in range(coordinates.shape[0])]
    if len(coordinates) != x.ndim:
        raise ShapeError(f"{name}: coordinates must be a sequence of length input.ndim, but {len(coordinates)} != {x.ndim} (input shape {_o._shape_str(x.shape)})")
    coords = []
    for k, c in enumerate(coordinates):
        try:
            coords.append(_o._to_array(c))
        except QuablaError as e:
            raise type(e)(f"{name}: coordinates[{k}]: {e}") from None
    if not isinstance(mode, str):
        raise ArgumentTypeError(f"{name}: mode must be a string, one of {_MODES}, got {type(mode).__name__}")
    if mode not in _MODES:
        raise UnsupportedOperationError(f"{name}: mode {mode!r} is not supported; the supported modes are {_MODES}", op=name)
    if isinstance(order, bool) or not isinstance(order, (int, np.integer)):
        raise ArgumentTypeError(f"{name}: order must be the int 0 or 1, got {type(order).__name__}")
    if order not in (0, 1):
        raise UnsupportedOperationError(f"{name}: order must be 0 or 1 (higher orders are not supported, as JAX's), got {order}", op=name)
    for k, c in enumerate(coords):
        if c.dtype.is_bool:
            raise ArgumentTypeError(f"{name}: coordinates[{k}] must be integer or float, got bool of shape {_o._shape_str(c.shape)}")
    if isinstance(cval, Tracer) or _o._is_scalar(cval) or isinstance(cval, (np.generic, np.ndarray)) or hasattr(cval, "dtype"):
        try:
            cv = _o._to_array(cval)
        except QuablaError as e:
            raise type(e)(f"{name}: cval: {e}") from None
    else:
        raise ArgumentTypeError(f"{name}: cval must be a number, got {type(cval).__name__}")
    if cv.ndim != 0:
        raise ShapeError(f"{name}: cval must be a scalar, got shape {_o._shape_str(cv.shape)}")
    if x.ndim == 0:
        return x
    try:
        shape = tuple(np.broadcast_shapes(*[c.shape for c in coords]))
    except ValueError:
        raise ShapeError(f"{name}: the coordinate arrays do not broadcast together: shapes {[c.shape for c in coords]}") from None
    coords = [c if c.shape == shape else _o.broadcast_to(c, shape) for c in coords]

    idx_dtype = _dt.int64 if x.size >= 2**31 - 1 else _dt.int32
    # The compute dtype of the weighted sum (JAX: the input's and the coordinates' common
    # dtype); order 0 needs no weights and gathers the input's values as they are.
    cd = _result_type(x, *coords) if order == 1 else x.dtype
    if order == 1 and not cd.is_float and any(c.dtype.is_float for c in coords):
        cd = _dt.to_inexact(cd)
    per_dim = []
    for c, size in zip(coords, x.shape):
        if order == 0:
            i = _o.astype(_round_half_away(c) if c.dtype.is_float else c, idx_dtype)
            nodes = [(i, None)]
        elif c.dtype.is_float:
            lower = _o.floor(c)
            hi = _o.astype(c - lower, cd)
            i = _o.astype(lower, idx_dtype)
            nodes = [(i, 1 - hi), (i + 1, hi)]
        else:
            i = _o.astype(c, idx_dtype)
            nodes = [(i, _o.ones(shape, cd)), (i + 1, _o.zeros(shape, cd))]
        per_dim.append([(_fix(mode, i, size), (i >= 0) & (i < size) if mode == "constant" else None, w) for i, w in nodes])

    flat = _o.reshape(x, (-1,))
    strides = [math.prod(x.shape[k + 1:]) for k in range(x.ndim)]
    cvx = _o.astype(cv, x.dtype)
    total = None
    for items in itertools.product(*per_dim):
        lin = None
        for (i, _, _), st in zip(items, strides):
            term = i if st == 1 else i * st
            lin = term if lin is None else lin + term
        v = _o.take(flat, lin)
        if mode == "constant":
            valid = items[0][1]
            for _, ok, _ in items[1:]:
                valid = valid & ok
            v = _o.where(valid, v, cvx)
        if order == 1:
            w = items[0][2]
            for _, _, wk in items[1:]:
                w = w * wk
            v = _o.astype(v, cd) * w
        total = v if total is None else total + v
    if order == 1 and (x.dtype.is_int or x.dtype.is_unsigned) and total.dtype.is_float:
        total = _round_half_away(total)
    return _o.astype(total, x.dtype)
