"""``qb.scipy.interpolate``: ``jax.scipy.interpolate``'s ``RegularGridInterpolator``, built
from Quabla ops (a pytree, as JAX's).

Example:
    >>> import quabla.scipy.interpolate as qip
    >>> f = qip.RegularGridInterpolator((qb.array([0.0, 1.0, 2.0]),), qb.array([0.0, 10.0, 40.0]))
    >>> f(qb.array([[0.5], [1.5]])).tolist()
    [5.0, 25.0]
"""

import itertools
import math

import numpy as np

from .. import _ops as _o
from .. import dtypes as _dt
from .. import tree_util as _tree_util
from .._math import result_type as _result_type
from .._search import searchsorted as _searchsorted
from .._trace import Tracer
from ..errors import ArgumentTypeError, InvalidArgumentError, QuablaError, ShapeError, UnsupportedOperationError

__all__ = ["RegularGridInterpolator"]

_METHODS = ("linear", "nearest")


def _array(name, arg, x):
    try:
        return _o._to_array(x)
    except QuablaError as e:
        raise type(e)(f"{name}: {arg}: {e}") from None


def _check_method(name, method):
    if not isinstance(method, str) or method not in _METHODS:
        raise InvalidArgumentError(f"{name}: method {method!r} is not defined (use 'linear' or 'nearest')")


@_tree_util.register_pytree_node_class
class RegularGridInterpolator:
    """Interpolation on a rectilinear grid in any number of dimensions
    (``jax.scipy.interpolate.RegularGridInterpolator``): linear (multilinear between the 2^N
    surrounding grid points) or nearest (ties to the lower point); points outside the grid
    are extrapolated from the edge cells, then set to ``fill_value`` unless it is None.

    A pytree (children ``grid``, ``values``, ``fill_value``; ``method`` and ``bounds_error``
    static), so it can be passed through ``qb.jit`` and differentiated in its values. As
    JAX's, each axis of ``points`` must be strictly increasing (not checked; a decreasing
    axis gives wrong results). Unlike JAX's, ``points`` are checked to be 1-D, with at least
    2 points each and ``values``' extent along their axis (ShapeError), and ``fill_value`` is
    kept in ``values``' dtype (a float32 interpolator stays float32).

    Args:
        points: N strictly increasing 1-D arrays of grid coordinates.
        values: the values on the grid, shape ``(len(points[0]), ..., len(points[N-1]),
            *trailing)`` (integers become their inexact dtype).
        method: 'linear' (default) or 'nearest'.
        bounds_error: must be False (True raises UnsupportedOperationError, as JAX's).
        fill_value: the value outside the grid (default NaN), or None to extrapolate.

    Example:
        >>> import quabla.scipy.interpolate as qip
        >>> pts = (qb.array([1.0, 2.0, 3.0]), qb.array([4.0, 5.0, 6.0]))
        >>> vals = qb.array([[10.0, 20.0, 30.0], [40.0, 50.0, 60.0], [70.0, 80.0, 90.0]])
        >>> [round(v, 6) for v in qip.RegularGridInterpolator(pts, vals)(qb.array([[1.5, 4.5], [2.2, 5.8]])).tolist()]
        [30.0, 64.0]
    """

    __slots__ = ("grid", "values", "fill_value", "method", "bounds_error")

    def __init__(self, points, values, method="linear", bounds_error=False, fill_value=np.nan):
        name = "RegularGridInterpolator"
        _check_method(name, method)
        if isinstance(bounds_error, Tracer):
            raise UnsupportedOperationError(f"{name}: bounds_error must be a Python bool, got a traced value", op=name)
        try:
            bounds_error = bool(bounds_error)
        except (TypeError, ValueError):
            raise ArgumentTypeError(f"{name}: bounds_error must be a bool, got {type(bounds_error).__name__}") from None
        if bounds_error:
            raise UnsupportedOperationError(f"{name}: bounds_error=True is not supported (it cannot take effect under jit, as JAX's)", op=name)
        vals = _o._floatify(_array(name, "values", values))
        if isinstance(points, (str, bytes)) or not isinstance(points, (list, tuple)):
            if hasattr(points, "ndim") and hasattr(points, "shape") and getattr(points, "ndim", 0) >= 1:
                points = [points[k] for k in range(points.shape[0])]
            else:
                raise ArgumentTypeError(f"{name}: points must be a sequence of 1-D arrays, got {type(points).__name__}")
        if len(points) > vals.ndim:
            raise ShapeError(f"{name}: there are {len(points)} point arrays, but values has {vals.ndim} dimensions (shape {_o._shape_str(vals.shape)})")
        if len(points) == 0:
            raise ShapeError(f"{name}: points must hold at least one array of grid coordinates")
        grid = []
        for k, p in enumerate(points):
            g = _array(name, f"points[{k}]", p)
            if g.ndim != 1:
                raise ShapeError(f"{name}: points[{k}] must be 1-D, got shape {_o._shape_str(g.shape)}")
            if g.dtype.is_bool:
                raise ArgumentTypeError(f"{name}: points[{k}] must be numeric, got bool")
            if g.shape[0] != vals.shape[k]:
                raise ShapeError(f"{name}: there are {g.shape[0]} points in dimension {k}, but values has {vals.shape[k]} values in that dimension (shape {_o._shape_str(vals.shape)})")
            if g.shape[0] < 2:
                raise ShapeError(f"{name}: dimension {k} needs at least 2 grid points, got 1")
            grid.append(g)
        if fill_value is not None:
            fv = _array(name, "fill_value", fill_value)
            if fv.ndim != 0 and not (isinstance(fill_value, Tracer)):
                try:
                    np.broadcast_shapes(fv.shape, (1,) + vals.shape[len(points):])
                except ValueError:
                    raise ShapeError(f"{name}: fill_value of shape {_o._shape_str(fv.shape)} does not broadcast against the values' trailing shape {_o._shape_str(vals.shape[len(points):])}") from None
            fill_value = _o.astype(fv, vals.dtype)
        self._set("grid", tuple(grid))
        self._set("values", vals)
        self._set("fill_value", fill_value)
        self._set("method", method)
        self._set("bounds_error", bool(bounds_error))

    def _set(self, name, value):
        object.__setattr__(self, name, value)

    def tree_flatten(self):
        """The children (grid, values, fill_value) and the static (method, bounds_error)."""
        return (self.grid, self.values, self.fill_value), (self.method, self.bounds_error)

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        """Rebuilds an interpolator from :meth:`tree_flatten`'s parts (no checks, so any
        leaves may stand in for the arrays)."""
        obj = cls.__new__(cls)
        grid, values, fill_value = children
        obj._set("grid", tuple(grid))
        obj._set("values", values)
        obj._set("fill_value", fill_value)
        obj._set("method", aux_data[0])
        obj._set("bounds_error", aux_data[1])
        return obj

    def _points(self, name, xi):
        """``xi`` as a (..., N) array (a tuple of N coordinate arrays is broadcast and stacked;
        a 1-D array is read as rows of N)."""
        n = len(self.grid)
        if isinstance(xi, tuple) and len(xi) == 1:
            xi = xi[0]
        if isinstance(xi, tuple):
            parts = [_array(name, f"xi[{k}]", v) for k, v in enumerate(xi)]
            try:
                shape = tuple(np.broadcast_shapes(*[p.shape for p in parts]))
            except ValueError:
                raise ShapeError(f"{name}: the coordinate arrays of xi do not broadcast together: shapes {[p.shape for p in parts]}") from None
            d = _dt.to_inexact(_result_type(*parts))
            xi = _o.stack([_o.broadcast_to(_o.astype(p, d), shape) for p in parts], axis=-1)
        else:
            xi = _array(name, "xi", xi)
            if xi.ndim == 1:
                if xi.shape[0] % n:
                    raise ShapeError(f"{name}: a 1-D xi of length {xi.shape[0]} cannot be read as points of dimension {n}")
                xi = _o.reshape(xi, (-1, n))
        if xi.ndim == 0:
            raise ShapeError(f"{name}: xi must be an array of points (..., {n}), got a 0-d array")
        if xi.dtype.is_bool:
            raise ArgumentTypeError(f"{name}: xi must be numeric, got bool")
        if xi.shape[-1] != n:
            raise ShapeError(f"{name}: the requested sample points xi have dimension {xi.shape[-1]}, but this RegularGridInterpolator has dimension {n} (xi shape {_o._shape_str(xi.shape)})")
        return xi

    def __call__(self, xi, method=None):
        """The interpolated values at the points ``xi``.

        Args:
            xi: the points, shape ``(..., N)`` (or a tuple of N broadcasting coordinate
                arrays, or a 1-D array of consecutive N-tuples).
            method: 'linear' or 'nearest'; None: the interpolator's.

        Returns:
            The values, shape ``xi.shape[:-1] + values.shape[N:]``.

        Example:
            >>> import quabla.scipy.interpolate as qip
            >>> f = qip.RegularGridInterpolator((qb.array([0.0, 1.0]),), qb.array([0.0, 2.0]))
            >>> f(qb.array([[0.25], [0.75]]), method="nearest").tolist()
            [0.0, 2.0]
        """
        name = "RegularGridInterpolator"
        method = self.method if method is None else method
        _check_method(name, method)
        xi = self._points(name, xi)
        n = len(self.grid)
        values = self.values
        cd = _dt.to_inexact(_result_type(values, xi, *self.grid))
        lead = xi.shape[:-1]
        m = math.prod(lead)
        pts = _o.reshape(_o.astype(xi, cd), (m, n))
        trailing = tuple(values.shape[n:])

        idx, dist, oob = [], [], None
        for k, g in enumerate(self.grid):
            g = _o.astype(g, cd)
            x = pts[:, k]
            size = g.shape[0]
            i = _o.clip(_searchsorted(g, x) - 1, 0, size - 2)
            lo, hi = _o.take(g, i), _o.take(g, i + 1)
            idx.append(i)
            dist.append((x - lo) / (hi - lo))
            out = (x < g[0]) | (x > g[size - 1])
            oob = out if oob is None else oob | out

        grid_shape = tuple(values.shape[:n])
        flat = _o.reshape(_o.astype(values, cd), (math.prod(grid_shape),) + trailing)
        strides = [math.prod(grid_shape[k + 1:]) for k in range(n)]
        col = (m,) + (1,) * len(trailing)

        def gather(indices):
            lin = None
            for i, st in zip(indices, strides):
                term = i if st == 1 else i * st
                lin = term if lin is None else lin + term
            return _o.take(flat, lin, axis=0)

        if method == "linear":
            result = None
            for corner in itertools.product((0, 1), repeat=n):
                w = None
                for bit, y in zip(corner, dist):
                    f = y if bit else 1 - y
                    w = f if w is None else w * f
                v = gather([i + 1 if bit else i for bit, i in zip(corner, idx)]) * _o.reshape(w, col)
                result = v if result is None else result + v
        else:
            result = gather([_o.where(y <= 0.5, i, i + 1) for i, y in zip(idx, dist)])
        if self.fill_value is not None:
            result = _o.where(_o.reshape(oob, col), _o.astype(self.fill_value, cd), result)
        return _o.reshape(result, tuple(lead) + trailing)
