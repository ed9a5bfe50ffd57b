"""NumPy/JAX advanced indexing and indexed updates (``x.at[idx]``).

``x[key]`` with integer arrays (NumPy, Tensor or traced; several of them broadcast together),
mixed with ints, slices, ``None`` and ``...``, follows NumPy's rules: the advanced indices'
broadcast shape replaces them in place when they are adjacent, and goes first otherwise
(``None`` counts as a basic index between them). Array indices wrap once from the end and
are then clamped (JAX's default for gathers); ``mode="fill"`` gives ``fill_value`` for them
instead (NaN for floats, the most negative integer for ints, False for bools, as JAX). The
gather is one ``quabla.gather`` along the flattened advanced dims; other dims stay whole.

``x.at[key].set/add/multiply/min/max(values, mode=...)`` scatter (``quabla.scatter*``) into
the flat positions that ``x[key]`` reads (a key of one index array or int on the first axis
scatters whole rows along axis 0 instead): duplicates accumulate (``set``: the last one
wins, as XLA on one device), out-of-bounds updates are dropped (JAX's default, also for
``"drop"``, ``"fill"`` and ``"promise_in_bounds"``) or clamped (``mode="clip"``).
``.get(mode=, fill_value=)`` is ``x[key]`` with that mode.
"""

import builtins

import numpy as np

from . import _ops as o
from . import dtypes as _dt
from ._trace import Tracer, bind, current, is_array
from .errors import DTypeError, TracerError, UnsupportedOperationError
from . import errors as _errors

_MODES = (None, "clip", "fill", "drop", "promise_in_bounds")


def _check_mode(op, mode):
    # `mode not in _MODES` compares an array elementwise: only None and strings qualify.
    if not (mode is None or isinstance(mode, str)) or mode not in _MODES:
        raise UnsupportedOperationError(f"{op}: mode must be one of 'clip', 'fill', 'drop', 'promise_in_bounds' or None, got {mode!r}", op=op)


def _is_int(k):
    return isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))


def _is_array_index(k):
    """An integer-array (or traced integer) index; raises for bool/float arrays."""
    if _is_int(k) or k is None or k is Ellipsis or isinstance(k, slice):
        return False
    if is_array(k):
        if type(k) is Tracer and not k.dtype.is_int:
            raise TracerError(
                f"indexing with a traced value {k!r} needs an integer index; index with integer arrays "
                "(qb.take, x.at[...]) or select with qb.where"
            )
        if k.dtype.is_bool:
            raise UnsupportedOperationError("boolean mask indexing gives a data-dependent shape; use qb.where", op="getitem")
        if k.dtype.is_float:
            raise DTypeError(f"indices must be integers, got {k.dtype.name} of shape {tuple(k.shape)}")
        return True
    arr = np.asarray(k)
    if arr.dtype == np.bool_:
        raise UnsupportedOperationError("boolean mask indexing gives a data-dependent shape; use qb.where", op="getitem")
    if arr.dtype.kind not in "iu":
        raise _errors.InvalidIndexError(f"only integers, slices, None, ... and integer arrays are valid indices, got {type(k).__name__}")
    return True


def has_advanced(key):
    """Whether ``key`` (a tuple) needs the advanced path (any integer array or traced index)."""
    return builtins.any(_is_array_index(k) for k in key)


def getitem(x, key):
    """``x[key]``: keys with integer arrays or traced indices take :func:`gather`, the rest
    the basic path (:func:`quabla._ops.getitem`)."""
    k = key if isinstance(key, tuple) else (key,)
    if has_advanced(k):
        return gather(x, k)
    return o.getitem(x, k)


def _as_index(k):
    if is_array(k):
        return o.astype(k, _dt.int64) if k.dtype is not _dt.int64 and k.dtype is not _dt.int32 else k
    return o.array(np.asarray(k).astype(np.int64))


def _fill_value(dtype, fill_value):
    if fill_value is not None:
        return fill_value
    if dtype.is_float:
        return float("nan")
    if dtype.is_bool:
        return False
    return int(np.iinfo(dtype.np).min)


def gather(x, key, mode=None, fill_value=None):
    """``x[key]`` with NumPy advanced indexing (see the module docstring)."""
    _check_mode("getitem", mode)
    x = o._to_array(x)
    if not isinstance(key, tuple):
        key = (key,)
    # None -> a new size-1 axis of x, indexed by a full slice.
    if builtins.any(k is None for k in key):
        exp0 = o._expand_index(key, x.shape)
        shape, d, k2 = [], 0, []
        for k in exp0:
            if k is None:
                shape.append(1)
                k2.append(slice(None))
            else:
                shape.append(x.shape[d])
                d += 1
                k2.append(k)
        x = o.reshape(x, tuple(shape))
        key = tuple(k2)
    exp = o._expand_index(key, x.shape)
    shape = x.shape
    # Basic slices first (the existing getitem handles slices of any step); ints with arrays
    # are advanced (0-d) indices.
    adv = [d for d, k in enumerate(exp) if not isinstance(k, slice)]
    basic = tuple(k if isinstance(k, slice) else slice(None) for k in exp)
    if builtins.any(k != slice(None) for k in basic):
        x = o.getitem(x, basic)
        shape = x.shape
    if not adv:
        # Slices only (`x.at[::2]`, `x.at[:, 1:3]`): the basic slice is the whole gather.
        return x
    idx = []
    for d in adv:
        k = exp[d]
        n = shape[d]
        if _is_int(k):
            i = int(k)
            if not -n <= i < n:
                raise _errors.InvalidIndexError(f"index {i} is out of bounds for axis {d} with extent {n} (shape {tuple(shape)})")
            k = np.asarray(i + n if i < 0 else i, dtype=np.int64)
        idx.append(_as_index(k))
    bshape = o._bcast_shapes("getitem", *[tuple(i.shape) for i in idx])
    idx = [o.broadcast_to(i, bshape) for i in idx]
    # Wrap negatives once, note validity, clamp; flatten the advanced dims (row-major).
    valid = None
    flat = None
    for d, i in zip(adv, idx):
        n = shape[d]
        i = o.where(i < 0, i + n, i)
        if mode == "fill":
            ok = (i >= 0) & (i < n)
            valid = ok if valid is None else valid & ok
        i = o.clip(i, 0, n - 1)
        flat = i if flat is None else flat * n + i
    rest = [d for d in range(len(shape)) if d not in adv]
    xt = o.transpose(x, tuple(adv) + tuple(rest)) if adv != list(range(len(adv))) else x
    nflat = int(np.prod([shape[d] for d in adv]))
    xf = o.reshape(xt, (nflat,) + tuple(shape[d] for d in rest))
    q = len(bshape)
    if q == 0:
        g = bind(o._op("gather", axis=0), xf, o.reshape(flat, (1,)))
        g = o.reshape(g, tuple(shape[d] for d in rest))
    else:
        g = bind(o._op("gather", axis=0), xf, flat)
    if valid is not None:
        m = o.reshape(valid, tuple(bshape) + (1,) * len(rest))
        g = o.where(m, g, _fill_value(x.dtype, fill_value))
    # Adjacent advanced dims go in place of the first one; otherwise first.
    adjacent = adv == list(range(adv[0], adv[0] + len(adv)))
    if adjacent and adv[0] > 0:
        p = builtins.sum(1 for d in rest if d < adv[0])
        perm = list(range(q, q + p)) + list(range(q)) + list(range(q + p, q + len(rest)))
        g = o.transpose(g, tuple(perm))
    return g


def _flat_positions(x, key, mode):
    """The flat position in ``x`` of each element of ``x[key]`` (-1 where an array index is
    out of bounds, unless ``mode == "clip"``)."""
    pos = o.reshape(o.arange(int(np.prod(x.shape)), dtype=_dt.int64), x.shape)
    if type(x) is Tracer:
        pos = o._fill(0, _dt.int64, (), like=x) + pos
    if mode == "clip":
        return gather(pos, key)
    return gather(pos, key, mode="fill", fill_value=-1)


def _leading_rows(x, key):
    """The indices of a key that is one integer array or int on the first axis (whole
    rows), as an integer array; None for any other key."""
    if len(key) != 1 or x.ndim == 0:
        return None
    k = key[0]
    if not (_is_int(k) or _is_array_index(k)):
        return None
    return _as_index(k)


def scatter(x, key, values, combiner, mode=None):
    """``x.at[key].<combiner>(values)``: a ``quabla.scatter*`` of whole rows along axis 0
    (a key of one index array or int on the first axis) or into the flat positions."""
    name = {"set": "scatter", "add": "scatter_add", "mul": "scatter_mul", "min": "scatter_min", "max": "scatter_max"}[combiner]
    _check_mode(f"at[].{combiner}", mode)
    x = o._to_array(x)
    if not isinstance(key, tuple):
        key = (key,)
    rows = _leading_rows(x, key)
    v = o._to_array(values) if is_array(values) else o._to_array(values, x.dtype)
    if v.dtype is not x.dtype:
        v = o.astype(v, x.dtype)
    if rows is not None:
        # Whole rows (an index array or int on the first axis): a scatter along axis 0 with
        # the row indices (the take-along-axis form, whose updates are the rows: the CPU
        # lowering copies or adds a row per index), out-of-range rows dropped.
        n = x.shape[0]
        i = o.where(rows < 0, rows + n, rows)
        if mode == "clip":
            i = o.clip(i, 0, n - 1)
        i = o.astype(i, _dt.int64)
        if i.ndim == 0:
            i = o.reshape(i, (1,))
        q, r = i.ndim, x.ndim
        v = o.broadcast_to(v, tuple(i.shape) + tuple(x.shape[1:]))
        op = o._op(name, update_window_dims=tuple(range(q, r - 1 + q)), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), index_vector_dim=q)
        return bind(op, x, i, v)
    pos = _flat_positions(x, key, mode)
    v = o.broadcast_to(v, tuple(pos.shape))
    xf = o.reshape(x, (int(np.prod(x.shape)),))
    if pos.ndim == 0:
        pos, v = o.reshape(pos, (1,)), o.reshape(v, (1,))
    q = pos.ndim
    op = o._op(name, update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), index_vector_dim=q)
    return o.reshape(bind(op, xf, pos, v), x.shape)


class _IndexRef:
    """``x.at[key]``: the indexed-update methods (JAX's ``_IndexUpdateRef``)."""

    __slots__ = ("_x", "_key")

    def __init__(self, x, key):
        self._x, self._key = x, key

    def get(self, *, mode=None, fill_value=None, indices_are_sorted=False, unique_indices=False):
        """``x[key]`` (``mode="fill"`` gives ``fill_value`` out of bounds)."""
        key = self._key if isinstance(self._key, tuple) else (self._key,)
        if mode is None and fill_value is None and not has_advanced(key):
            return o.getitem(self._x, key)
        return gather(self._x, key, mode=mode, fill_value=fill_value)

    def set(self, values, *, mode=None, indices_are_sorted=False, unique_indices=False):
        """A copy of ``x`` with ``x[key] = values``."""
        return scatter(self._x, self._key, values, "set", mode)

    def add(self, values, *, mode=None, indices_are_sorted=False, unique_indices=False):
        """A copy of ``x`` with ``x[key] += values`` (duplicates accumulate)."""
        return scatter(self._x, self._key, values, "add", mode)

    def multiply(self, values, *, mode=None, indices_are_sorted=False, unique_indices=False):
        """A copy of ``x`` with ``x[key] *= values``."""
        return scatter(self._x, self._key, values, "mul", mode)

    mul = multiply

    def min(self, values, *, mode=None, indices_are_sorted=False, unique_indices=False):
        """A copy of ``x`` with ``x[key] = minimum(x[key], values)``."""
        return scatter(self._x, self._key, values, "min", mode)

    def max(self, values, *, mode=None, indices_are_sorted=False, unique_indices=False):
        """A copy of ``x`` with ``x[key] = maximum(x[key], values)``."""
        return scatter(self._x, self._key, values, "max", mode)


class _At:
    """``x.at``: ``x.at[key]`` is an :class:`_IndexRef`."""

    __slots__ = ("_x",)

    def __init__(self, x):
        self._x = x

    def __getitem__(self, key):
        return _IndexRef(self._x, key)


def at(x):
    """The ``.at`` property of arrays."""
    return _At(x)


def take_along_axis(arr, indices, axis, mode=None, fill_value=None):
    """Elements of ``arr`` at ``indices`` along ``axis`` (NumPy's/JAX's take_along_axis;
    ``indices`` broadcasts with ``arr`` on the other dims; ``axis=None`` uses the flattened
    array). Out-of-bounds indices give ``fill_value`` (NaN for floats) as JAX's default
    ``mode="fill"``; ``mode="clip"`` clamps.

    Example:
        >>> qb.take_along_axis(qb.array([[1., 2.], [3., 4.]]), np.array([[1], [0]]), axis=1).tolist()
        [[2.0], [3.0]]
    """
    _check_mode("take_along_axis", mode)
    arr = o._to_array(arr)
    if axis is None:
        arr = o.ravel(arr)
        axis = 0
    idx = indices if is_array(indices) else np.asarray(indices)
    if idx.ndim != arr.ndim:
        raise o.ShapeError(f"take_along_axis: indices of rank {idx.ndim} must have the rank of arr {tuple(arr.shape)}")
    a = o._norm_axis("take_along_axis", axis, arr.ndim, arr.shape)
    # Inside a trace the other dims' positions are iotas of the program (computed in the
    # gather's index loop); NumPy ranges there became a constant of the indices' broadcast
    # shape (top_k(8) of 1024 rows: a 1024x8 int64 literal, 64 KB of object code).
    traced = current() is not None
    key = []
    for d in range(arr.ndim):
        if d == a:
            key.append(idx)
        else:
            shape = [1] * arr.ndim
            shape[d] = arr.shape[d]
            pos = bind(o._op("iota", dim=0, ty=((arr.shape[d],), _dt.int64.code))) if traced else np.arange(arr.shape[d])
            key.append(o.reshape(pos, tuple(shape)) if traced else pos.reshape(shape))
    return gather(arr, tuple(key), mode="fill" if mode is None else mode, fill_value=fill_value)
