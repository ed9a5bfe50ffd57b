"""More of ``jax.numpy``: array construction, splitting, stacking and layout, index helpers,
selection by condition (built from Quabla ops, so they trace, differentiate and batch).

Index arithmetic that only depends on static arguments (the positions of ``insert`` and
``delete``, ``tril_indices``, a concrete ``compress`` condition) is done on the host with
NumPy and enters the program as a gather of constant indices; everything that depends on
array values is a composition of Quabla ops (gathers, scatters through ``x.at[...]``,
``where``, sorts, ``vmap``). Quabla tensors have positive extents, so a result that would
be empty (deleting every element, an all-zero ``trim_zeros``, an ``array_split`` with more
sections than elements) is a ShapeError where JAX returns an empty array.
"""

import builtins
import functools
import math
import re

import numpy as np

from . import _ops as _o
from . import dtypes as _dt
from ._conv import cumsum as _cumsum
from ._indexing import take_along_axis as _take_along_axis
from ._numpy import argsort as _argsort
from ._numpy import diag as _diag
from ._numpy import flip as _flip
from ._numpy import isnan as _isnan
from ._numpy import meshgrid as _meshgrid
from ._numpy import sort as _sort
from ._numpy import tile as _tile
from ._search import bincount as _bincount
from ._search import searchsorted as _searchsorted
from ._trace import Tracer, is_array
from .errors import (
    ArgumentTypeError,
    DTypeError,
    InvalidArgumentError,
    InvalidIndexError,
    ShapeError,
    UnsupportedOperationError,
)
from . import errors as _errors

__all__ = [
    # layout
    "moveaxis", "rollaxis", "permute_dims", "matrix_transpose", "atleast_3d", "broadcast_arrays", "broadcast_shapes",
    "array_split", "hsplit", "vsplit", "dsplit", "dstack", "block", "append", "insert", "delete", "resize", "rot90",
    "unstack", "trim_zeros",
    # construction
    "empty", "empty_like", "identity", "logspace", "geomspace", "indices", "ix_", "mgrid", "ogrid", "r_", "c_", "s_",
    "index_exp", "fromfunction", "tril_indices", "triu_indices", "tril_indices_from", "triu_indices_from", "diag_indices",
    "diag_indices_from", "diagflat", "fill_diagonal", "mask_indices", "ravel_multi_index", "unravel_index",
    # comparison and selection
    "array_equal", "array_equiv", "select", "choose", "piecewise", "compress", "extract", "put", "put_along_axis", "place",
    "partition", "argpartition", "apply_along_axis", "apply_over_axes", "vectorize",
    # histograms
    "histogram_bin_edges", "histogram2d", "histogramdd",
]

_A = _o._to_array
_shape_str = _o._shape_str


def _axis(name, ax, x):
    return _o._norm_axis(name, ax, x.ndim, x.shape)


def _const_ints(a):
    """A host int64 index array as a Quabla constant."""
    return _o._from_numpy(np.ascontiguousarray(a, dtype=np.int64))


def _concrete(name, x, arg, hint):
    """``x`` as a NumPy array; a TracerError naming ``arg`` and what to do (``hint``) when traced."""
    if isinstance(x, Tracer):
        raise _errors.ConcretizationTypeError(f"{name}: {arg} must be concrete (its values decide the result's shape); {hint}")
    if isinstance(x, _o.Tensor):
        return x.numpy()
    return np.asarray(x)


def _nonempty(name, n, what):
    if n <= 0:
        raise ShapeError(f"{name}: {what} would be empty (quabla tensors have positive extents)")


# ---------------------------------------------------------------------------------------------
# Layout


def moveaxis(a, source, destination):
    """Moves the axes ``source`` of ``a`` to the positions ``destination`` (ints or equal-length
    sequences); the other axes keep their order.

    Example:
        >>> qb.moveaxis(qb.zeros((2, 3, 4)), 0, -1).shape
        (3, 4, 2)
    """
    name = "moveaxis"
    a = _A(a)
    src = _o._ints_arg(name, "source", source)
    dst = _o._ints_arg(name, "destination", destination)
    if len(src) != len(dst):
        raise ShapeError(f"{name}: source {src} and destination {dst} must have the same number of axes")
    src = [_axis(name, s, a) for s in src]
    dst = [_axis(name, d, a) for d in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ShapeError(f"{name}: repeated axis in source {tuple(src)} or destination {tuple(dst)} (shape {_shape_str(a.shape)})")
    perm = [i for i in range(a.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return _o.transpose(a, perm)


def rollaxis(a, axis, start=0):
    """Moves ``axis`` of ``a`` to sit before position ``start`` (NumPy's older form of
    ``moveaxis``; ``start`` may be ``a.ndim``).

    Example:
        >>> qb.rollaxis(qb.zeros((2, 3, 4)), 2).shape
        (4, 2, 3)
    """
    a = _A(a)
    ax = _axis("rollaxis", axis, a)
    start = _o._int_arg("rollaxis", "start", start)
    nd = a.ndim
    if not -nd <= start <= nd:
        raise ShapeError(f"rollaxis: start {start} is out of range [-{nd}, {nd}] for a tensor of shape {_shape_str(a.shape)}")
    if start < 0:
        start += nd
    if start > ax:
        start -= 1
    return moveaxis(a, ax, start)


def permute_dims(a, /, axes):
    """Permutes the axes of ``a`` (the array API's ``transpose``: ``axes`` is required).

    Example:
        >>> qb.permute_dims(qb.zeros((2, 3, 4)), (2, 0, 1)).shape
        (4, 2, 3)
    """
    return _o.transpose(a, axes)


def matrix_transpose(x, /):
    """Swaps the last two axes of ``x`` (a stack of matrices; rank >= 2).

    Example:
        >>> qb.matrix_transpose(qb.zeros((5, 2, 3))).shape
        (5, 3, 2)
    """
    x = _A(x)
    if x.ndim < 2:
        raise ShapeError(f"matrix_transpose: x must have rank >= 2, got shape {_shape_str(x.shape)}")
    return _o.swapaxes(x, -1, -2)


def _atleast_3d(x):
    x = _A(x)
    if x.ndim == 0:
        return _o.reshape(x, (1, 1, 1))
    if x.ndim == 1:
        return _o.reshape(x, (1, x.shape[0], 1))
    if x.ndim == 2:
        return _o.reshape(x, x.shape + (1,))
    return x


def atleast_3d(*arys):
    """Each input with at least three axes: a scalar as (1, 1, 1), a vector (n,) as (1, n, 1),
    a matrix (m, n) as (m, n, 1) (a list when several are given).

    Example:
        >>> qb.atleast_3d(qb.ones(3)).shape
        (1, 3, 1)
    """
    r = [_atleast_3d(a) for a in arys]
    return r[0] if len(r) == 1 else r


def broadcast_shapes(*shapes):
    """The shape that NumPy's broadcasting gives operands of ``shapes`` (ints or tuples).

    Example:
        >>> qb.broadcast_shapes((2, 1), (3,))
        (2, 3)
    """
    if not shapes:
        return ()
    shapes = [_o._ints_arg("broadcast_shapes", "shapes", (s,) if isinstance(s, (int, np.integer)) else s) for s in shapes]
    return _o._bcast_shapes("broadcast_shapes", *shapes)


def broadcast_arrays(*args):
    """The arguments broadcast to their common shape (a list).

    Example:
        >>> [x.shape for x in qb.broadcast_arrays(qb.ones((2, 1)), qb.ones(3))]
        [(2, 3), (2, 3)]
    """
    xs = [_A(a) for a in args]
    if not xs:
        return []
    s = _o._bcast_shapes("broadcast_arrays", *[x.shape for x in xs])
    return [_o.broadcast_to(x, s) for x in xs]


def _split(name, ary, indices_or_sections, axis, uneven):
    x = _A(ary)
    a = _axis(name, axis, x)
    n = x.shape[a]
    if isinstance(indices_or_sections, (int, np.integer)) and not isinstance(indices_or_sections, (bool, np.bool_)):
        k = int(indices_or_sections)
        if k <= 0:
            raise ShapeError(f"{name}: the number of sections must be >= 1, got {k}")
        q, r = divmod(n, k)
        if r and not uneven:
            raise ShapeError(f"{name}: axis {a} of extent {n} (shape {_shape_str(x.shape)}) does not split into {k} equal sections")
        if q == 0:
            raise ShapeError(f"{name}: {k} sections of axis {a} of extent {n} would include empty ones (quabla tensors have positive extents)")
        sizes = [q + 1] * r + [q] * (k - r)
        out, lo = [], 0
        for s in sizes:
            out.append(_o._slice_axis(x, a, lo, lo + s, 1))
            lo += s
        return out
    return _o.split(x, indices_or_sections, axis=a)


def array_split(ary, indices_or_sections, axis=0):
    """Splits ``ary`` along ``axis`` into ``indices_or_sections`` sections (an int: the first
    ``n % k`` of them one longer) or at the given indices.

    Example:
        >>> [p.tolist() for p in qb.array_split(qb.arange(5), 2)]
        [[0, 1, 2], [3, 4]]
    """
    return _split("array_split", ary, indices_or_sections, axis, True)


def vsplit(ary, indices_or_sections):
    """``split`` along axis 0 (equal sections or at indices).

    Example:
        >>> [p.shape for p in qb.vsplit(qb.zeros((4, 2)), 2)]
        [(2, 2), (2, 2)]
    """
    return _split("vsplit", ary, indices_or_sections, 0, False)


def hsplit(ary, indices_or_sections):
    """``split`` along axis 1 (axis 0 for a 1-D array).

    Example:
        >>> [p.shape for p in qb.hsplit(qb.zeros((2, 4)), [1])]
        [(2, 1), (2, 3)]
    """
    x = _A(ary)
    return _split("hsplit", x, indices_or_sections, 0 if x.ndim == 1 else 1, False)


def dsplit(ary, indices_or_sections):
    """``split`` along axis 2 (rank >= 3).

    Example:
        >>> [p.shape for p in qb.dsplit(qb.zeros((1, 2, 4)), 2)]
        [(1, 2, 2), (1, 2, 2)]
    """
    return _split("dsplit", ary, indices_or_sections, 2, False)


def dstack(tup, dtype=None):
    """Stacks arrays along the third axis (each through ``atleast_3d`` first).

    Example:
        >>> qb.dstack([qb.ones(3), qb.zeros(3)]).shape
        (1, 3, 2)
    """
    xs = [_atleast_3d(x) for x in _o._arrays_arg("dstack", "tup", tup)]
    r = _o.concatenate(xs, axis=2)
    return r if dtype is None else _o.astype(r, dtype)


def _block(xs):
    if isinstance(xs, tuple):
        raise ArgumentTypeError("block: arrays must be nested lists, not tuples")
    if isinstance(xs, list):
        if not xs:
            raise InvalidArgumentError("block: empty lists are not allowed")
        parts = [_block(x) for x in xs]
        depth = parts[0][1]
        if builtins.any(d != depth for _, d in parts):
            raise ShapeError("block: the nested lists have mismatched depths")
        rank = builtins.max(depth, builtins.max(p.ndim for p, _ in parts))
        arrs = [_o.reshape(p, (1,) * (rank - p.ndim) + p.shape) for p, _ in parts]
        return _o.concatenate(arrs, axis=rank - depth), depth + 1
    return _A(xs), 1


def block(arrays):
    """Assembles an array from nested lists of blocks: the innermost lists join along the
    last axis, the next ones along the one before, and so on (blocks get leading unit axes
    up to the common rank).

    Example:
        >>> qb.block([[qb.ones((2, 2)), qb.zeros((2, 1))], [qb.zeros((1, 3))]]).shape
        (3, 3)
    """
    return _block(arrays)[0]


def append(arr, values, axis=None):
    """``values`` appended to ``arr`` along ``axis`` (None: both flattened).

    Example:
        >>> qb.append(qb.array([1, 2]), qb.array([[3], [4]])).tolist()
        [1, 2, 3, 4]
    """
    arr, values = _o._common("append", [arr, values])  # Python numbers weak, as JAX
    if axis is None:
        return _o.concatenate([_o.ravel(arr), _o.ravel(values)], 0)
    return _o.concatenate([arr, values], axis=axis)


def _static_index_array(name, obj, arg="obj"):
    if isinstance(obj, Tracer):
        raise _errors.ConcretizationTypeError(f"{name}: {arg} must be concrete (static indices); traced positions are not supported")
    arr = np.asarray(obj.numpy() if isinstance(obj, _o.Tensor) else obj)
    return arr


def insert(arr, obj, values, axis=None):
    """``values`` inserted into ``arr`` before the positions ``obj`` (an int, a 1-D sequence
    of ints or a slice) along ``axis`` (None: the flattened array), as ``jnp.insert``:
    positions are clipped to [0, n], negative ones count from the end, several values at one
    position keep their order; ``values`` take ``arr``'s dtype.

    Quabla needs ``obj`` concrete (JAX also accepts traced positions).

    Example:
        >>> qb.insert(qb.array([1, 2, 3]), 1, 9).tolist()
        [1, 9, 2, 3]
        >>> qb.insert(qb.array([[1, 2], [3, 4]]), [0, 2], qb.array([7, 8]), axis=1).tolist()
        [[7, 1, 2, 8], [7, 3, 4, 8]]
    """
    name = "insert"
    a = _A(arr)
    if axis is None:
        a, axis = _o.ravel(a), 0
    ax = _axis(name, axis, a)
    n = a.shape[ax]
    if isinstance(obj, slice):
        idx = np.arange(*obj.indices(n), dtype=np.int64)
        scalar = False
    else:
        idx = _static_index_array(name, obj)
        if idx.ndim > 1:
            raise ShapeError(f"{name}: obj must be a scalar, a 1-D sequence or a slice, got shape {idx.shape}")
        if idx.dtype.kind not in "iu":
            raise DTypeError(f"{name}: obj must hold integers, got dtype {idx.dtype}")
        scalar = idx.ndim == 0
    v = _o.astype(_A(values), a.dtype)
    if v.ndim < a.ndim:
        v = _o.reshape(v, (1,) * (a.ndim - v.ndim) + v.shape)
    if idx.size == 1:
        if scalar:
            v = moveaxis(v, 0, ax)
        idx = np.full(v.shape[ax], idx.reshape(()), dtype=np.int64)
    _nonempty(name, idx.size, "the inserted values")
    if v.shape[ax] not in (1, idx.size):
        raise ShapeError(f"{name}: {idx.size} positions but values of shape {_shape_str(v.shape)} along axis {ax}")
    k = idx.size
    target = a.shape[:ax] + (k,) + a.shape[ax + 1:]
    try:
        v = _o.broadcast_to(v, target)
    except ShapeError:
        raise ShapeError(
            f"{name}: values of shape {_shape_str(v.shape)} do not broadcast to {_shape_str(target)} (arr {_shape_str(a.shape)}, axis {ax})"
        ) from None
    idx = np.clip(np.where(idx < 0, idx + n, idx), 0, n).astype(np.int64)
    vpos = idx.copy()
    vpos[np.argsort(idx, kind="stable")] += np.arange(k)
    keep = np.ones(n + k, dtype=bool)
    keep[vpos] = False
    perm = np.empty(n + k, dtype=np.int64)
    perm[keep] = np.arange(n)
    perm[vpos] = n + np.arange(k)
    return _o.take(_o.concatenate([a, v], axis=ax), _const_ints(perm), axis=ax)


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """``arr`` without the entries ``obj`` along ``axis`` (None: of the flattened array), as
    ``jnp.delete``: ``obj`` an int, a slice, a sequence of ints (repeats allowed) or a boolean
    mask of the axis' length. With ``assume_unique_indices=True`` the integer positions may
    be traced (they must then be unique; the result is a gather).

    Example:
        >>> qb.delete(qb.array([1, 2, 3, 4]), [0, 2]).tolist()
        [2, 4]
        >>> qb.delete(qb.arange(6).reshape(2, 3), 1, axis=1).tolist()
        [[0, 2], [3, 5]]
    """
    name = "delete"
    a = _A(arr)
    if axis is None:
        a, axis = _o.ravel(a), 0
    ax = _axis(name, axis, a)
    n = a.shape[ax]
    if isinstance(obj, (int, np.integer)) and not isinstance(obj, (bool, np.bool_)):
        i = int(obj)
        if not -n <= i < n:
            raise InvalidIndexError(f"{name}: index {i} is out of bounds for axis {ax} with extent {n} (shape {_shape_str(a.shape)})")
        i %= n
        _nonempty(name, n - 1, f"deleting the only entry of axis {ax}")
        parts = [p for p in (_o._slice_axis(a, ax, 0, i, 1) if i else None, _o._slice_axis(a, ax, i + 1, n, 1) if i + 1 < n else None) if p is not None]
        return parts[0] if len(parts) == 1 else _o.concatenate(parts, axis=ax)
    if isinstance(obj, slice):
        obj, assume_unique_indices = np.arange(n, dtype=np.int64)[obj], True
    traced = isinstance(obj, Tracer)
    if assume_unique_indices and (obj.dtype.is_int if traced else _static_index_array(name, obj).dtype.kind in "iu"):
        # Unique positions (possibly traced): each kept entry's index is its rank plus the
        # number of deleted positions at or before it, as JAX computes it.
        o = _o.ravel(_o.astype(_A(obj), _o.int64))
        m = o.shape[0]
        _nonempty(name, n - m, f"deleting {m} of the {n} entries of axis {ax}")
        o = _o.clip(_o.where(o < 0, o + n, o), 0, n)
        o = _sort(o) - _o.arange(m)
        i = _o.arange(n - m)
        i = i + _o.sum(_o.astype(_o.reshape(i, (1, -1)) >= _o.reshape(o, (-1, 1)), _o.int64), axis=0)
        return _o.take(a, i, axis=ax)
    idx = _static_index_array(name, obj)
    if idx.dtype == np.bool_:
        if idx.shape != (n,):
            raise ShapeError(f"{name}: a boolean obj must have the shape ({n},) of axis {ax}, got {idx.shape}")
        keep = ~idx
    elif idx.dtype.kind in "iu":
        if idx.size and ((idx >= n).any() or (idx < -n).any()):
            raise InvalidIndexError(f"{name}: an index of {idx.tolist()} is out of bounds for axis {ax} with extent {n}")
        keep = np.ones(n, dtype=bool)
        keep[idx] = False
    else:
        raise DTypeError(f"{name}: obj must be integers or booleans, got dtype {idx.dtype}")
    kept = np.nonzero(keep)[0]
    _nonempty(name, kept.size, f"deleting every entry of axis {ax}")
    if kept.size == n:
        return a
    return _o.take(a, _const_ints(kept), axis=ax)


def resize(a, new_shape):
    """``a`` flattened, repeated cyclically and cut to fill ``new_shape``.

    Example:
        >>> qb.resize(qb.array([1, 2, 3]), (2, 4)).tolist()
        [[1, 2, 3, 1], [2, 3, 1, 2]]
    """
    x = _o.ravel(_A(a))
    shape = _o._ints_arg("resize", "new_shape", new_shape)
    if builtins.any(d < 0 for d in shape):
        raise ShapeError(f"resize: new_shape {_shape_str(shape)} has a negative extent")
    size = math.prod(shape)
    _nonempty("resize", size, f"new_shape {_shape_str(shape)}")
    reps = -(-size // x.shape[0])
    x = _tile(x, reps) if reps > 1 else x
    return _o.reshape(_o._slice_axis(x, 0, 0, size, 1), shape)


def rot90(m, k=1, axes=(0, 1)):
    """``m`` rotated by 90 degrees ``k`` times in the plane of ``axes``, from the first axis
    towards the second.

    Example:
        >>> qb.rot90(qb.array([[1, 2], [3, 4]])).tolist()
        [[2, 4], [1, 3]]
    """
    m = _A(m)
    if m.ndim < 2:
        raise ShapeError(f"rot90: m must have rank >= 2, got shape {_shape_str(m.shape)}")
    k = _o._int_arg("rot90", "k", k)
    ax = tuple(axes)
    if len(ax) != 2:
        raise ShapeError(f"rot90: axes must be two axes, got {axes}")
    a1, a2 = _axis("rot90", ax[0], m), _axis("rot90", ax[1], m)
    if a1 == a2:
        raise ShapeError(f"rot90: axes must be different, got {axes}")
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return _flip(_flip(m, a1), a2)
    perm = list(range(m.ndim))
    perm[a1], perm[a2] = perm[a2], perm[a1]
    if k == 1:
        return _o.transpose(_flip(m, a2), perm)
    return _flip(_o.transpose(m, perm), a2)


def unstack(x, /, *, axis=0):
    """The slices of ``x`` along ``axis``, as a tuple.

    Example:
        >>> [r.tolist() for r in qb.unstack(qb.array([[1, 2], [3, 4]]))]
        [[1, 2], [3, 4]]
    """
    x = _A(x)
    if x.ndim == 0:
        raise ShapeError("unstack: x must have rank >= 1, got a scalar")
    a = _axis("unstack", axis, x)
    rest = x.shape[:a] + x.shape[a + 1:]
    return tuple(_o.reshape(_o._slice_axis(x, a, i, i + 1, 1), rest) for i in range(x.shape[a]))


def trim_zeros(filt, trim="fb", axis=None):
    """``filt`` without its leading ('f' in ``trim``) and trailing ('b') zeros, along each
    axis of ``axis`` (None: all; along an axis, a slice is zero when all its entries are).

    The result's shape depends on the values, so ``filt`` must be concrete (a TracerError
    under jit, as JAX's ConcretizationTypeError); an all-zero input is a ShapeError (an
    empty array in JAX).

    Example:
        >>> qb.trim_zeros(qb.array([0, 0, 1, 2, 0])).tolist()
        [1, 2]
    """
    name = "trim_zeros"
    x = _A(filt)
    v = _concrete(name, x, "filt", "trim_zeros cannot be used under jit")
    axes = _o._norm_axes(name, axis, x.shape)
    t = str(trim).lower()
    if not axes or ("f" not in t and "b" not in t):
        return x
    key = []
    for d in range(x.ndim):
        if d not in axes:
            key.append(slice(None))
            continue
        mask = np.any(v != 0, axis=tuple(i for i in range(v.ndim) if i != d))
        if not mask.any():
            raise ShapeError(f"{name}: filt is all zeros along axis {d}: the result would be empty (quabla tensors have positive extents)")
        lo = int(mask.argmax()) if "f" in t else 0
        hi = x.shape[d] - int(mask[::-1].argmax()) if "b" in t else x.shape[d]
        key.append(slice(lo, hi))
    return x[tuple(key)]


# ---------------------------------------------------------------------------------------------
# Construction


def empty(shape, dtype=None, *, device=None, out_sharding=None):
    """An array of ``shape`` (zeros, as JAX's ``empty``; default dtype float64).

    Example:
        >>> qb.empty((2,)).tolist()
        [0.0, 0.0]
    """
    if out_sharding is not None:
        raise UnsupportedOperationError("empty: out_sharding is not supported; use qb.device_put", op="empty")
    r = _o.zeros(shape, dtype)
    return r if device is None else _o.device_put(r, device)


def empty_like(prototype, dtype=None, shape=None, *, device=None):
    """An array with ``prototype``'s shape and dtype (or the given ones): zeros, as JAX.

    Example:
        >>> qb.empty_like(qb.ones((2,), dtype=qb.int32)).tolist()
        [0, 0]
    """
    p = prototype if isinstance(prototype, Tracer) else _A(prototype)
    r = _o.zeros_like(p, dtype) if shape is None else _o.zeros(shape, p.dtype if dtype is None else dtype)
    return r if device is None else _o.device_put(r, device)


def identity(n, dtype=None):
    """The ``n`` x ``n`` identity matrix (default dtype float64).

    Example:
        >>> qb.identity(2).tolist()
        [[1.0, 0.0], [0.0, 1.0]]
    """
    return _o.eye(_o._int_arg("identity", "n", n), dtype=dtype)


def _inexact(name, *vals):
    d = None
    for v in vals:
        vd = v.dtype if is_array(v) else (_dt.dtype(v.dtype) if isinstance(v, np.ndarray) else None)
        if vd is None:
            continue
        d = vd if d is None else _dt.result_type(name, d, vd)
    if d is None or not d.is_float:
        return _o.float64
    return d


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop, num)`` (``num`` values evenly spaced in the exponent).

    Example:
        >>> qb.logspace(0.0, 2.0, 3).tolist()
        [1.0, 10.0, 100.0]
    """
    name = "logspace"
    num = _o._int_arg(name, "num", num)
    out = _dt.dtype(dtype, name) if dtype is not None else _inexact(name, start, stop)
    cdt = out if out.is_float else _o.float64
    s0, s1 = _o.astype(_A(start), cdt), _o.astype(_A(stop), cdt)
    lin = _o.linspace(s0, s1, num, endpoint=endpoint, axis=axis)
    return _o.astype(_o.power(base, lin), out)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``num`` values from ``start`` to ``stop`` evenly spaced on a log scale (a geometric
    progression; both of one sign).

    Example:
        >>> [round(v, 9) for v in qb.geomspace(1.0, 1000.0, 4).tolist()]
        [1.0, 10.0, 100.0, 1000.0]
    """
    name = "geomspace"
    num = _o._int_arg(name, "num", num)
    out = _dt.dtype(dtype, name) if dtype is not None else _inexact(name, start, stop)
    cdt = out if out.is_float else _o.float64
    s0, s1 = _o.astype(_A(start), cdt), _o.astype(_A(stop), cdt)
    sign = _o.sign(s0)
    res = sign * logspace(_o.log(s0 / sign) / math.log(10.0), _o.log(s1 / sign) / math.log(10.0), num, endpoint=endpoint, dtype=cdt, axis=0)
    ax = _o._norm_axis(name, axis, res.ndim, res.shape)
    if ax:
        res = moveaxis(res, 0, ax)
    return _o.astype(res, out)


def indices(dimensions, dtype=None, sparse=False):
    """The index of each position of a grid of shape ``dimensions`` along each axis: an
    array of shape ``(len(dimensions), *dimensions)``, or with ``sparse=True`` a tuple of
    arrays with unit extents but along their own axis (default dtype int64).

    Example:
        >>> qb.indices((2, 3))[1].tolist()
        [[0, 1, 2], [0, 1, 2]]
    """
    dims = _o._shape_arg("indices", dimensions)
    _nonempty("indices", len(dims), "an index grid of no dimensions")
    d = _o.int64 if dtype is None else _dt.dtype(dtype, "indices")
    out = []
    for i, n in enumerate(dims):
        shape = tuple(n if j == i else 1 for j in range(len(dims)))
        v = _o.astype(_o._iota(shape, i), d)
        out.append(v if sparse else _o.broadcast_to(v, dims))
    return tuple(out) if sparse else _o.stack(out)


def ix_(*args):
    """An open mesh from 1-D index sequences: the i-th result has the i-th sequence along
    axis i and unit extents elsewhere, for ``x[qb.ix_(rows, cols)]``-style indexing.

    Example:
        >>> [a.shape for a in qb.ix_(qb.array([0, 1]), qb.array([2, 0, 1]))]
        [(2, 1), (1, 3)]
    """
    out = []
    for i, a in enumerate(args):
        a = _A(a)
        if a.ndim != 1:
            raise ShapeError(f"ix_: every argument must be 1-D, got shape {_shape_str(a.shape)} (argument {i})")
        if a.dtype.is_bool:
            raise UnsupportedOperationError("ix_: boolean arguments are not supported (as JAX)", op="ix_")
        out.append(_o.reshape(a, tuple(a.shape[0] if j == i else 1 for j in range(len(args)))))
    return tuple(out)


def _grid_1d(s, name):
    if not isinstance(s, slice):
        raise ArgumentTypeError(f"{name}: expected slices, got {type(s).__name__} {s!r}")
    for v in (s.start, s.stop, s.step):
        if isinstance(v, Tracer):
            raise _errors.ConcretizationTypeError(f"{name}: slice bounds must be concrete Python numbers, got a traced value")
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if isinstance(step, complex):
        return _o.linspace(start, s.stop, int(abs(step)))
    return _o.arange(start, s.stop, step)


def _promote_all(name, xs):
    d = xs[0].dtype
    for x in xs[1:]:
        d = _dt.result_type(name, d, x.dtype)
    return [_o.astype(x, d) for x in xs]


class _Grid:
    def __init__(self, name, sparse):
        self._name, self._sparse = name, sparse

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _grid_1d(key, self._name)
        xs = _promote_all(self._name, [_grid_1d(k, self._name) for k in key])
        out = _meshgrid(*xs, indexing="ij", sparse=self._sparse)
        return list(out) if self._sparse else _o.stack(out, 0)

    def __repr__(self):
        return f"qb.{self._name}"


mgrid = _Grid("mgrid", False)
mgrid.__doc__ = """A dense mesh from slices: ``qb.mgrid[0:2, 0:3]`` is the stacked (2, 2, 3) index
grid (``jnp.mgrid``); an integer step gives ``arange``, a complex step ``5j`` gives 5 points
from start to stop inclusive (``linspace``); one slice gives a 1-D array.

Example:
    >>> qb.mgrid[0:2, 0:3].shape
    (2, 2, 3)
"""

ogrid = _Grid("ogrid", True)
ogrid.__doc__ = """An open mesh from slices (``jnp.ogrid``): a list of arrays with unit extents
but along their own axis, which broadcast to the dense grid.

Example:
    >>> [a.shape for a in qb.ogrid[0:2, 0:3]]
    [(2, 1), (1, 3)]
"""


class _AxisConcat:
    def __init__(self, name, axis, ndmin, trans1d):
        self._name, self._axis, self._ndmin, self._trans1d = name, axis, ndmin, trans1d

    def __getitem__(self, key):
        name = self._name
        items = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d, matrix = self._axis, self._ndmin, self._trans1d, -1
        if items and isinstance(items[0], str):
            directive, items = items[0], items[1:]
            if directive == "r":
                matrix = 0
            elif directive == "c":
                matrix = 1
            else:
                vec = directive.split(",")
                params = [axis, ndmin, trans1d]
                try:
                    vals = [int(v) for v in vec[:3]]
                except ValueError:
                    raise InvalidArgumentError(f"{name}: could not understand the directive {directive!r}") from None
                axis, ndmin, trans1d = vals + params[len(vals):]
        out = []
        for it in items:
            if isinstance(it, slice):
                x, item_nd = _grid_1d(it, name), 0
            elif isinstance(it, str):
                raise InvalidArgumentError(f"{name}: a string directive must come first, got {it!r} later")
            else:
                x = _A(it)
                item_nd = x.ndim
            if x.ndim < ndmin:
                x = _o.reshape(x, (1,) * (ndmin - x.ndim) + x.shape)
            if trans1d != -1 and ndmin - item_nd > 0:
                order = tuple(range(ndmin))
                shifts = ndmin - abs(ndmin + trans1d + 1) % ndmin
                x = _o.transpose(x, order[shifts:] + order[:shifts])
            out.append(x)
        if not out:
            raise InvalidArgumentError(f"{name}: nothing to concatenate")
        res = _o.concatenate(_promote_all(name, [_A(x) for x in out]), axis=axis)
        if matrix != -1 and res.ndim == 1:
            res = _o.expand_dims(res, matrix)
        return res

    def __len__(self):
        return 0

    def __repr__(self):
        return f"qb.{self._name}"


r_ = _AxisConcat("r_", 0, 1, -1)
r_.__doc__ = """Concatenation by index syntax along the first axis (``jnp.r_``): arrays and
scalars as they are, slices as ``arange`` (or ``linspace`` with a complex step ``5j``). A
first string item is NumPy's directive: ``'r'`` / ``'c'`` (a row / column matrix of a 1-D
result) or ``'axis[,ndmin[,trans1d]]'`` (join along ``axis``, each item with at least
``ndmin`` axes, a short item's axes placed by ``trans1d``), all of them supported.

Example:
    >>> qb.r_[qb.array([1, 2]), 0, 4:6].tolist()
    [1, 2, 0, 4, 5]
    >>> qb.r_["0,2", qb.array([1, 2]), qb.array([3, 4])].tolist()
    [[1, 2], [3, 4]]
"""

c_ = _AxisConcat("c_", -1, 2, 0)
c_.__doc__ = """Concatenation by index syntax along the last axis, 1-D items as columns
(``jnp.c_``: ``r_`` with the directive ``'-1,2,0'``).

Example:
    >>> qb.c_[qb.array([1, 2]), qb.array([3, 4])].tolist()
    [[1, 3], [2, 4]]
"""

class _IndexExpression:
    def __init__(self, name, maketuple):
        self._name, self._maketuple = name, maketuple

    def __getitem__(self, item):
        return (item,) if self._maketuple and not isinstance(item, tuple) else item

    def __repr__(self):
        return f"qb.{self._name}"


s_ = _IndexExpression("s_", False)
s_.__doc__ = """Index objects by index syntax (NumPy's ``s_``, which ``jnp.s_`` is): ``qb.s_[1:3, ::2]``
is the tuple ``(slice(1, 3), slice(None, None, 2))``, a single item stays itself; pass the
result to ``x[...]`` or ``x.at[...]``.

Example:
    >>> qb.s_[1:3, ::2]
    (slice(1, 3, None), slice(None, None, 2))
    >>> qb.array([1, 2, 3, 4])[qb.s_[::2]].tolist()
    [1, 3]
"""

index_exp = _IndexExpression("index_exp", True)
index_exp.__doc__ = """``s_`` that always gives a tuple (NumPy's ``index_exp``).

Example:
    >>> qb.index_exp[2]
    (2,)
"""


def _callable(name, arg, f):
    if not callable(f):
        raise ArgumentTypeError(f"{name}: {arg} must be callable, got {type(f).__name__}")


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """``function`` evaluated at each index of a grid of ``shape``: it is called through
    ``vmap`` over every axis with the (scalar) indices of ``dtype`` (default float64), as
    ``jnp.fromfunction``. The keyword arguments are passed unchanged (not mapped).

    Example:
        >>> qb.fromfunction(lambda i, j: i + 10 * j, (2, 3), dtype=int).tolist()
        [[0, 10, 20], [1, 11, 21]]
    """
    _callable("fromfunction", "function", function)
    shape = _o._shape_arg("fromfunction", shape)
    f = functools.partial(function, **kwargs) if kwargs else function
    nd = len(shape)
    for i in range(nd):
        f = _vmap_axes(f, tuple(0 if j == nd - 1 - i else None for j in range(nd)))
    return f(*(_o.arange(s, dtype=dtype) for s in shape))


def _vmap_axes(f, in_axes, out_axes=0):
    from ._transforms import vmap

    return vmap(f, in_axes=in_axes, out_axes=out_axes)


def _tri_indices(name, n, k, m, lower):
    n = _o._int_arg(name, "n", n)
    k = _o._int_arg(name, "k", k)
    m = n if m is None else _o._int_arg(name, "m", m)
    if n < 0 or m < 0:
        raise ShapeError(f"{name}: n={n} and m={m} must be >= 0")
    i, j = (np.tril_indices if lower else np.triu_indices)(n, k, m)
    _nonempty(name, i.size, f"the index set for n={n}, k={k}, m={m}")
    return _const_ints(i), _const_ints(j)


def tril_indices(n, k=0, m=None):
    """The (row, column) indices of the lower triangle (at and below diagonal ``k``) of an
    ``n`` x ``m`` matrix, row by row.

    Example:
        >>> [a.tolist() for a in qb.tril_indices(3)]
        [[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]]
    """
    return _tri_indices("tril_indices", n, k, m, True)


def triu_indices(n, k=0, m=None):
    """The (row, column) indices of the upper triangle (at and above diagonal ``k``) of an
    ``n`` x ``m`` matrix, row by row.

    Example:
        >>> [a.tolist() for a in qb.triu_indices(3, 1)]
        [[0, 0, 1], [1, 2, 2]]
    """
    return _tri_indices("triu_indices", n, k, m, False)


def _shape_of(name, arr):
    s = arr.shape if hasattr(arr, "shape") else _A(arr).shape
    s = tuple(int(d) for d in s)
    if len(s) != 2:
        raise ShapeError(f"{name}: arr must be 2-D, got shape {_shape_str(s)}")
    return s


def tril_indices_from(arr, k=0):
    """``tril_indices`` for the shape of the 2-D ``arr``.

    Example:
        >>> [a.tolist() for a in qb.tril_indices_from(qb.zeros((2, 3)))]
        [[0, 1, 1], [0, 0, 1]]
    """
    n, m = _shape_of("tril_indices_from", arr)
    return _tri_indices("tril_indices_from", n, k, m, True)


def triu_indices_from(arr, k=0):
    """``triu_indices`` for the shape of the 2-D ``arr``.

    Example:
        >>> [a.tolist() for a in qb.triu_indices_from(qb.zeros((2, 3)))]
        [[0, 0, 0, 1, 1], [0, 1, 2, 1, 2]]
    """
    n, m = _shape_of("triu_indices_from", arr)
    return _tri_indices("triu_indices_from", n, k, m, False)


def diag_indices(n, ndim=2):
    """The indices of the main diagonal of an ``ndim``-dimensional cube of side ``n``: the
    same ``arange(n)`` for every axis.

    Example:
        >>> [a.tolist() for a in qb.diag_indices(3)]
        [[0, 1, 2], [0, 1, 2]]
    """
    n = _o._int_arg("diag_indices", "n", n)
    ndim = _o._int_arg("diag_indices", "ndim", ndim)
    if n < 0 or ndim < 0:
        raise InvalidArgumentError(f"diag_indices: n={n} and ndim={ndim} must be >= 0")
    _nonempty("diag_indices", n, "the diagonal of side 0")
    return (_o._iota((n,), 0),) * ndim


def diag_indices_from(arr):
    """``diag_indices`` for ``arr``, whose axes (at least two) have one extent.

    Example:
        >>> len(qb.diag_indices_from(qb.zeros((2, 2, 2))))
        3
    """
    s = tuple(_A(arr).shape) if not hasattr(arr, "shape") else tuple(arr.shape)
    if len(s) < 2:
        raise ShapeError(f"diag_indices_from: arr must have rank >= 2, got shape {_shape_str(s)}")
    if len(set(s)) != 1:
        raise ShapeError(f"diag_indices_from: all axes of arr must have one extent, got shape {_shape_str(s)}")
    return diag_indices(s[0], len(s))


def diagflat(v, k=0):
    """A 2-D array with the flattened ``v`` on diagonal ``k`` and zeros elsewhere.

    Example:
        >>> qb.diagflat(qb.array([[1, 2]])).tolist()
        [[1, 0], [0, 2]]
    """
    return _diag(_o.ravel(_A(v)), _o._int_arg("diagflat", "k", k))


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """``a`` with its main diagonal set to ``val`` (a scalar, or values repeated cyclically
    along the diagonal). Arrays are immutable, so ``inplace=False`` is required (as JAX)
    and a new array is returned; ``wrap=True`` is not supported (as JAX).

    Example:
        >>> qb.fill_diagonal(qb.zeros((2, 3)), 5.0, inplace=False).tolist()
        [[5.0, 0.0, 0.0], [0.0, 5.0, 0.0]]
    """
    name = "fill_diagonal"
    if inplace:
        raise UnsupportedOperationError(f"{name}: arrays are immutable; pass inplace=False to get the updated array", op=name)
    if wrap:
        raise UnsupportedOperationError(f"{name}: wrap=True is not supported (as JAX)", op=name)
    a, val = _A(a), _A(val)
    if a.ndim < 2:
        raise ShapeError(f"{name}: a must have rank >= 2, got shape {_shape_str(a.shape)}")
    if a.ndim > 2 and len(set(a.shape)) != 1:
        raise ShapeError(f"{name}: all axes of a rank > 2 array must have one extent, got shape {_shape_str(a.shape)}")
    n = builtins.min(a.shape)
    v = _o.astype(val, a.dtype)
    if v.ndim:
        v = _tile_to(_o.ravel(v), n)
    return a.at[diag_indices(n, a.ndim)].set(v)


def _tile_to(v, n):
    """The 1-D ``v`` repeated cyclically to length ``n``."""
    m = v.shape[0]
    if m == n:
        return v
    reps = -(-n // m)
    return _o._slice_axis(_tile(v, reps) if reps > 1 else v, 0, 0, n, 1)


def _nonzero_flat(mask, size):
    """The flat positions (int64, in order) of the first ``size`` True entries of the bool
    ``mask``, padded with 0: a prefix sum of the mask scatters each position to its rank."""
    flat = _o.ravel(mask)
    rank = _cumsum(_o.astype(flat, _o.int64)) - 1
    dest = _o.where(flat, rank, size)
    pos = _o._iota(flat.shape, 0)
    return _o.zeros((size,), _o.int64).at[dest].set(pos, mode="drop"), _o.sum(_o.astype(flat, _o.int64))


def mask_indices(n, mask_func, k=0, *, size=None):
    """The (row, column) indices where ``mask_func(ones((n, n)), k)`` is nonzero (e.g.
    ``mask_func=qb.triu``), row by row; ``size`` fixes the count (padded with 0), which a
    traced mask needs.

    Example:
        >>> [a.tolist() for a in qb.mask_indices(2, qb.triu)]
        [[0, 0, 1], [0, 1, 1]]
    """
    name = "mask_indices"
    n = _o._int_arg(name, "n", n)
    m = _A(mask_func(_o.ones((n, n)), k))
    if m.shape != (n, n):
        raise ShapeError(f"{name}: mask_func must return an ({n}, {n}) array, got shape {_shape_str(m.shape)}")
    mb = m if m.dtype.is_bool else m != 0
    if size is None:
        v = _concrete(name, mb, "the mask", "pass size= under jit")
        i, j = np.nonzero(v)
        _nonempty(name, i.size, "the index set")
        return _const_ints(i), _const_ints(j)
    size = _o._int_arg(name, "size", size)
    _nonempty(name, size, "size=0")
    flat, _ = _nonzero_flat(mb, size)
    return flat // n, flat % n


def ravel_multi_index(multi_index, dims, mode="raise", order="C", *, dtype=None):
    """Flat indices into an array of shape ``dims`` from a tuple of index arrays (one per
    axis), in C (row-major) or F ``order``; ``mode`` 'raise' (indices must be concrete and in
    range), 'wrap', 'clip' or 'ignore'. The result has the indices' common dtype unless
    ``dtype`` is given, as JAX's.

    Example:
        >>> qb.ravel_multi_index((qb.array([0, 1]), qb.array([2, 0])), (2, 3)).tolist()
        [2, 3]
    """
    name = "ravel_multi_index"
    dims = _o._ints_arg(name, "dims", dims)
    idx = [_A(i) for i in _o._arrays_arg(name, "multi_index", multi_index)]
    if len(idx) != len(dims):
        raise ShapeError(f"{name}: {len(idx)} index arrays for {len(dims)} dims {dims}")
    for i in idx:
        if not i.dtype.is_int:
            raise DTypeError(f"{name}: the indices must be integers, got {i.dtype.name} of shape {_shape_str(i.shape)}")
    if dtype is None:
        d = idx[0].dtype if idx else _o.int64
        for i in idx[1:]:
            d = _dt.result_type(name, d, i.dtype)
    else:
        d = _dt.dtype(dtype, name)
    if not d.is_int:
        raise DTypeError(f"{name}: dtype must be an integer type, got {d.name}")
    if mode == "raise":
        for i, n in zip(idx, dims):
            v = _concrete(name, i, "multi_index", "with mode='raise'; use mode='wrap' or 'clip' under jit")
            if (v < 0).any() or (v >= n).any():
                raise InvalidIndexError(f"{name}: an index is out of range [0, {n}) (dims {dims})")
    elif mode == "clip":
        idx = [_o.clip(i, 0, n - 1) for i, n in zip(idx, dims)]
    elif mode == "wrap":
        idx = [i % n for i, n in zip(idx, dims)]
    elif mode != "ignore":
        raise InvalidArgumentError(f"{name}: mode must be 'raise', 'wrap', 'clip' or 'ignore', got {mode!r}")
    if order == "C":
        strides = np.cumprod((1,) + dims[1:][::-1])[::-1]
    elif order == "F":
        strides = np.cumprod((1,) + dims[:-1])
    else:
        raise InvalidArgumentError(f"{name}: order must be 'C' or 'F', got {order!r}")
    r = None
    for i, s in zip(idx, strides):
        t = _o.astype(i, d) * int(s)
        r = t if r is None else r + t
    return r


def unravel_index(indices, shape):
    """The per-axis indices (a tuple) of the flat ``indices`` into an array of ``shape``;
    out-of-range flat indices are clamped to the first / last position, as JAX (negative
    ``-1`` is the last position).

    Example:
        >>> [a.tolist() for a in qb.unravel_index(qb.array([2, 5]), (2, 3))]
        [[0, 1], [2, 2]]
    """
    name = "unravel_index"
    i = _A(indices)
    if not i.dtype.is_int:
        raise DTypeError(f"{name}: indices must be integers, got {i.dtype.name} of shape {_shape_str(i.shape)}")
    shape = _o._ints_arg(name, "shape", shape)
    out = [None] * len(shape)
    for k in range(len(shape) - 1, -1, -1):
        i, out[k] = _o.floor_divide(i, shape[k]), _o.remainder(i, shape[k])
    pos = i > 0
    neg = i < -1 if not i.dtype.is_unsigned else _o.zeros_like(pos)
    return tuple(_o.where(pos, s - 1, _o.where(neg, 0, r)) for s, r in zip(shape, out))


# The examples of the index-syntax objects, for doctest (it finds functions' docstrings only).
__test__ = {n: globals()[n].__doc__ for n in ("mgrid", "ogrid", "r_", "c_", "s_", "index_exp")}


# ---------------------------------------------------------------------------------------------
# Comparison and selection


def _common_float(name, a, b):
    """``a`` and ``b`` in one dtype (two float widths meet in float64, as JAX promotes)."""
    if a.dtype is not b.dtype and a.dtype.is_float and b.dtype.is_float:
        return _o.astype(a, _o.float64), _o.astype(b, _o.float64)
    return a, b


def array_equal(a1, a2, equal_nan=False):
    """Whether ``a1`` and ``a2`` have one shape and equal elements (a bool scalar array);
    with ``equal_nan``, NaNs in the same places count as equal.

    Example:
        >>> qb.array_equal(qb.array([1.0, 2.0]), qb.array([1.0, 2.0])).item()
        True
    """
    a1, a2 = _common_float("array_equal", _A(a1), _A(a2))
    if a1.shape != a2.shape:
        return _A(False)
    eq = a1 == a2
    if equal_nan:
        eq = _o.logical_or(eq, _o.logical_and(_isnan(a1), _isnan(a2)))
    return _o.all(eq)


def array_equiv(a1, a2):
    """Whether ``a1`` and ``a2`` broadcast together and are equal everywhere (a bool scalar
    array).

    Example:
        >>> qb.array_equiv(qb.array([1, 2]), qb.array([[1, 2], [1, 2]])).item()
        True
    """
    a1, a2 = _common_float("array_equiv", _A(a1), _A(a2))
    try:
        _o._bcast_shapes("array_equiv", a1.shape, a2.shape)
    except ShapeError:
        return _A(False)
    return _o.all(a1 == a2)


def _choice_dtype(name, choices, default=None):
    """The common dtype of the arrays ``choices`` and a (weak if a Python scalar) ``default``."""
    d = choices[0].dtype
    for c in choices[1:]:
        d = _dt.result_type(name, d, c.dtype)
    if default is not None:
        d = _dt.weak_result(d, default) if _o._is_scalar(default) else _dt.result_type(name, d, _A(default).dtype)
    return d


def select(condlist, choicelist, default=0):
    """Elementwise the value of ``choicelist[i]`` for the first ``condlist[i]`` that holds,
    else ``default`` (all broadcast together).

    Example:
        >>> x = qb.array([-1.0, 0.5, 3.0])
        >>> qb.select([x < 0, x > 1], [-x, x * 10], default=0.0).tolist()
        [1.0, 0.0, 30.0]
    """
    name = "select"
    condlist, choicelist = _o._arrays_arg(name, "condlist", condlist), _o._arrays_arg(name, "choicelist", choicelist)
    if len(condlist) != len(choicelist):
        raise ShapeError(f"{name}: condlist and choicelist must have one length, got {len(condlist)} and {len(choicelist)}")
    if not condlist:
        raise InvalidArgumentError(f"{name}: condlist must be non-empty")
    conds = [_A(c) for c in condlist]
    for c in conds:
        if not c.dtype.is_bool:
            raise DTypeError(f"{name}: the conditions must be booleans, got {c.dtype.name} of shape {_shape_str(c.shape)}")
    choices = [_A(c) for c in choicelist]
    d = _choice_dtype(name, choices, default)
    shape = _o._bcast_shapes(name, *[x.shape for x in conds + choices], () if _o._is_scalar(default) else _A(default).shape)
    out = _o.broadcast_to(_o.astype(_A(default), d), shape)
    for c, v in zip(reversed(conds), reversed(choices)):
        out = _o.where(c, _o.astype(v, d), out)
    return _o.broadcast_to(out, shape)


def choose(a, choices, out=None, mode="raise"):
    """Elementwise ``choices[a]``: the integer ``a`` picks among the broadcast ``choices``.
    ``mode`` 'raise' (``a`` concrete and in range), 'wrap' (modulo) or 'clip'.

    Example:
        >>> qb.choose(qb.array([0, 1, 0]), [qb.array([1, 2, 3]), qb.array([10, 20, 30])]).tolist()
        [1, 20, 3]
    """
    name = "choose"
    _o._no_out(name, out)
    a = _A(a)
    if not a.dtype.is_int:
        raise DTypeError(f"{name}: a must have an integer dtype, got {a.dtype.name} of shape {_shape_str(a.shape)}")
    cs = [_A(c) for c in _o._arrays_arg(name, "choices", choices)]
    n = len(cs)
    if mode == "raise":
        v = _concrete(name, a, "a", "with mode='raise'; use mode='wrap' or 'clip' under jit")
        if (v < 0).any() or (v >= n).any():
            raise InvalidIndexError(f"{name}: an entry of a is outside [0, {n}) ({n} choices)")
    elif mode == "wrap":
        a = a % n
    elif mode == "clip":
        a = _o.clip(a, 0, n - 1)
    else:
        raise InvalidArgumentError(f"{name}: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    d = _choice_dtype(name, cs)
    parts = broadcast_arrays(a, *[_o.astype(c, d) for c in cs])
    a, stacked = parts[0], _o.stack(parts[1:])
    return _o.reshape(_take_along_axis(stacked, _o.reshape(_o.astype(a, _o.int64), (1,) + a.shape), axis=0), a.shape)


def piecewise(x, condlist, funclist, *args, **kw):
    """``funclist[i](x, *args, **kw)`` where ``condlist[i]`` holds (a later condition wins),
    else the extra last function (or 0); entries of ``funclist`` may be constants. Results
    take ``x``'s dtype.

    Every function is evaluated on the whole of ``x`` and the results selected (JAX calls
    each on the scalar elements through ``vectorize``): the functions must be elementwise.

    Example:
        >>> x = qb.array([-2.0, 1.0])
        >>> qb.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v * 3]).tolist()
        [2.0, 3.0]
    """
    name = "piecewise"
    x = _A(x)
    if (is_array(condlist) or isinstance(condlist, np.ndarray)) and condlist.ndim == 0:
        raise ShapeError(f"{name}: condlist must be a sequence of conditions (or an array of them along its first axis), got a scalar")
    # As JAX: the conditions are condlist's entries along its first axis (an array of x's
    # shape is len(condlist) conditions, not one as in NumPy).
    conds = [_o.astype(_A(c), _o.bool_) for c in _o._arrays_arg(name, "condlist", condlist)]
    funclist = _o._arrays_arg(name, "funclist", funclist)
    nc, nf = len(conds), len(funclist)
    if nf == nc + 1:
        funcs = [funclist[-1]] + list(funclist[:-1])
    elif nf == nc:
        funcs = [0] + list(funclist)
    else:
        raise ShapeError(f"{name}: with {nc} condition(s), {nc} or {nc + 1} functions are expected, got {nf}")

    def value(f):
        r = f(x, *args, **kw) if callable(f) else f
        return _o.broadcast_to(_o.astype(_A(r), x.dtype), x.shape)

    out = value(funcs[0])
    for c, f in zip(conds, funcs[1:]):
        out = _o.where(_o.broadcast_to(c, x.shape), value(f), out)
    return out


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """The slices of ``a`` along ``axis`` (None: the flattened ``a``) where the 1-D
    ``condition`` holds. The result's length is the number of True entries, so a traced
    condition needs ``size=`` (the first ``size`` selected slices, padded with
    ``fill_value``), as JAX.

    Example:
        >>> qb.compress(qb.array([True, False, True]), qb.array([[1, 2, 3], [4, 5, 6]]), axis=1).tolist()
        [[1, 3], [4, 6]]
        >>> qb.compress(qb.array([False, True, False]), qb.array([1.0, 2.0, 3.0]), size=2, fill_value=-1.0).tolist()
        [2.0, -1.0]
    """
    name = "compress"
    _o._no_out(name, out)
    c = _A(condition)
    if c.ndim != 1:
        raise ShapeError(f"{name}: condition must be 1-D, got shape {_shape_str(c.shape)}")
    arr = _A(a)
    if axis is None:
        arr, ax = _o.ravel(arr), 0
    else:
        ax = _axis(name, axis, arr)
    n = arr.shape[ax]
    c = _o.astype(c, _o.bool_)
    m = c.shape[0]
    if size is None:
        v = _concrete(name, c, "condition", "pass size= (and fill_value=) under jit")
        if v[n:].any():
            raise InvalidIndexError(f"{name}: condition has True entries past the extent {n} of axis {ax}")
        sel = np.nonzero(v[:n])[0]
        _nonempty(name, sel.size, "the selection (no True entries in condition)")
        return _o.take(arr, _const_ints(sel), axis=ax)
    size = _o._int_arg(name, "size", size)
    if not 0 < size <= n:
        raise ShapeError(f"{name}: size must be in [1, {n}] (the extent of axis {ax} of shape {_shape_str(arr.shape)}), got {size}")
    if m > n:
        c = _o._slice_axis(c, 0, 0, n, 1)
    elif m < n:
        arr = _o._slice_axis(arr, ax, 0, m, 1)
        if size > m:
            raise ShapeError(f"{name}: size {size} is larger than the length {m} of condition")
    pos, count = _nonzero_flat(c, size)
    picked = _o.take(arr, pos, axis=ax)
    valid = _o.reshape(_o._iota((size,), 0) < count, tuple(size if d == ax else 1 for d in range(arr.ndim)))
    return _o.where(valid, picked, _o.astype(_A(fill_value), arr.dtype))


def extract(condition, arr, *, size=None, fill_value=0):
    """The elements of the flattened ``arr`` where the flattened ``condition`` holds
    (``compress`` of both raveled; ``size=`` under jit).

    Example:
        >>> qb.extract(qb.array([[True, False], [False, True]]), qb.array([[1, 2], [3, 4]])).tolist()
        [1, 4]
    """
    return compress(_o.ravel(_A(condition)), _o.ravel(_A(arr)), size=size, fill_value=fill_value)


def put(a, ind, v, mode=None, *, inplace=True):
    """``a`` with the entries at the flat indices ``ind`` set to ``v`` (repeated cyclically);
    ``mode`` None (JAX's: the flat indices unraveled with clamping, then out-of-range ones
    dropped), 'clip' or 'wrap'. Arrays are immutable: ``inplace=False`` is required and the
    new array is returned.

    Example:
        >>> qb.put(qb.zeros(4), qb.array([0, 2]), qb.array([5.0, 6.0]), inplace=False).tolist()
        [5.0, 0.0, 6.0, 0.0]
    """
    name = "put"
    if inplace:
        raise UnsupportedOperationError(f"{name}: arrays are immutable; pass inplace=False to get the updated array", op=name)
    a = _A(a)
    i = _o.ravel(_A(ind))
    if not i.dtype.is_int:
        raise DTypeError(f"{name}: ind must be integers, got {i.dtype.name}")
    val = _tile_to(_o.ravel(_o.astype(_A(v), a.dtype)), i.shape[0])
    if mode is None:
        smode = "drop"
    elif mode == "clip":
        i, smode = _o.clip(i, 0, a.size - 1), None
    elif mode == "wrap":
        i, smode = i % a.size, None
    elif mode == "raise":
        raise UnsupportedOperationError(f"{name}: mode='raise' is not supported (as JAX)", op=name)
    else:
        raise InvalidArgumentError(f"{name}: mode must be None, 'clip' or 'wrap', got {mode!r}")
    return a.at[unravel_index(i, a.shape)].set(val, mode=smode)


def place(arr, mask, vals, *, inplace=True):
    """``arr`` with the entries where ``mask`` is true replaced by the values ``vals`` in
    order (repeated cyclically: the k-th true entry, in row-major order, takes ``vals[k %
    len(vals)]``), as ``jnp.place``. Arrays are immutable: ``inplace=False`` is required (as
    JAX's) and the new array is returned. ``mask`` may be traced (a select, no data-dependent
    shape).

    Args:
        arr: the array.
        mask: an array of ``arr``'s size (any shape), converted to bool.
        vals: the values (flattened; converted to ``arr``'s dtype).
        inplace: must be False.

    Returns:
        The updated array of ``arr``'s shape and dtype.

    Example:
        >>> x = qb.arange(6.0)
        >>> qb.place(x, x > 2, qb.array([10.0, 20.0]), inplace=False).tolist()
        [0.0, 1.0, 2.0, 10.0, 20.0, 10.0]
    """
    name = "place"
    if inplace:
        raise InvalidArgumentError(f"{name}: arrays are immutable and cannot be modified in place; pass inplace=False to get the updated array")
    a = _A(arr)
    m = _A(mask)
    if m.size != a.size:
        raise ShapeError(f"{name}: arr and mask must have the same size, got shapes {_shape_str(a.shape)} and {_shape_str(m.shape)}")
    if not m.dtype.is_bool:
        m = m != 0
    v = _o.ravel(_o.astype(_A(vals), a.dtype))
    flat = _o.ravel(m)
    k = _cumsum(_o.astype(flat, _dt.int64)) - 1  # the rank of each true entry
    picked = _o.take(v, _o.maximum(k, 0) % v.shape[0])
    return _o.reshape(_o.where(flat, picked, _o.ravel(a)), a.shape)


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    """``arr`` with the entries at ``indices`` along ``axis`` set to ``values`` (the scatter
    counterpart of ``take_along_axis``; None: the flattened ``arr``). ``inplace=False`` is
    required (arrays are immutable).

    Example:
        >>> qb.put_along_axis(qb.zeros((2, 3)), qb.array([[1], [2]]), 7.0, axis=1, inplace=False).tolist()
        [[0.0, 7.0, 0.0], [0.0, 0.0, 7.0]]
    """
    name = "put_along_axis"
    if inplace:
        raise UnsupportedOperationError(f"{name}: arrays are immutable; pass inplace=False to get the updated array", op=name)
    a = _A(arr)
    shape0 = a.shape
    idx = _A(indices)
    if axis is None:
        a, ax = _o.ravel(a), 0
    else:
        ax = _axis(name, axis, a)
    if a.ndim != idx.ndim:
        raise ShapeError(f"{name}: arr and indices must have one rank, got shapes {_shape_str(a.shape)} and {_shape_str(idx.shape)}")
    if not idx.dtype.is_int:
        raise DTypeError(f"{name}: indices must be integers, got {idx.dtype.name}")
    vals = _A(values)
    try:
        vals = _o.broadcast_to(_o.astype(vals, a.dtype), idx.shape)
    except ShapeError:
        raise ShapeError(f"{name}: values of shape {_shape_str(vals.shape)} do not broadcast to the indices' shape {_shape_str(idx.shape)}") from None
    key = tuple(idx if d == ax else _o._iota(tuple(a.shape[d] if e == d else 1 for e in range(a.ndim)), d) for d in range(a.ndim))
    r = a.at[key].set(vals, mode=mode)
    return _o.reshape(r, shape0) if axis is None else r


def _partition_parts(name, a, kth, axis):
    a = _A(a)
    ax = _axis(name, axis, a)
    n = a.shape[ax]
    k = _o._int_arg(name, "kth", kth)
    if not -n <= k < n:
        raise InvalidIndexError(f"{name}: kth={k} is out of bounds for axis {ax} with extent {n}")
    return a, ax, n, k % n


def partition(a, kth, axis=-1):
    """``a`` rearranged along ``axis`` so that position ``kth`` holds the value it would have
    sorted, the smaller ones before it and the larger ones after. Quabla gives JAX's exact
    output: the ``kth + 1`` smallest in ascending order, then the rest in descending order.

    Example:
        >>> qb.partition(qb.array([5, 1, 4, 2, 3]), 1).tolist()
        [1, 2, 5, 4, 3]
    """
    a, ax, n, k = _partition_parts("partition", a, kth, axis)
    s = _sort(a, axis=ax)
    if k == n - 1:
        return s
    return _o.concatenate([_o._slice_axis(s, ax, 0, k + 1, 1), _flip(_o._slice_axis(s, ax, k + 1, n, 1), ax)], axis=ax)


def argpartition(a, kth, axis=-1):
    """The indices that ``partition`` ``a`` along ``axis`` (JAX's exact output: the indices of
    the ``kth + 1`` smallest in ascending order of value, ties by index, then the other
    indices in increasing order), int32 as JAX's (its top_k indices).

    Example:
        >>> qb.argpartition(qb.array([5, 1, 4, 2, 3]), 1).tolist()
        [1, 3, 0, 2, 4]
    """
    a, ax, n, k = _partition_parts("argpartition", a, kth, axis)
    order = _argsort(a, axis=ax)
    if k == n - 1:
        return _o.astype(order, _o.int32)
    rank = _argsort(order, axis=ax)
    rest = _argsort(_o.astype(rank <= k, _o.int32), axis=ax)
    r = _o.concatenate([_o._slice_axis(order, ax, 0, k + 1, 1), _o._slice_axis(rest, ax, 0, n - k - 1, 1)], axis=ax)
    return _o.astype(r, _o.int32)


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``func1d(v, *args, **kwargs)`` applied to every 1-D slice ``v`` of ``arr`` along
    ``axis`` (through ``vmap``); the result's axes replace ``axis``.

    Example:
        >>> qb.apply_along_axis(lambda v: v[0] + v[-1], 1, qb.array([[1, 2, 3], [4, 5, 6]])).tolist()
        [4, 10]
    """
    a = _A(arr)
    ax = _axis("apply_along_axis", axis, a)

    def func(v):
        return func1d(v, *args, **kwargs)

    for i in range(1, a.ndim - ax):
        func = _vmap_axes(func, i, -1)
    for _ in range(ax):
        func = _vmap_axes(func, 0, 0)
    return func(a)


def apply_over_axes(func, a, axes):
    """``func(a, axis)`` applied for each of ``axes`` in turn, each result keeping ``a``'s rank
    (a result with one axis fewer gets it back as extent 1).

    Example:
        >>> qb.apply_over_axes(qb.sum, qb.ones((2, 3, 4)), [0, 2]).shape
        (1, 3, 1)
    """
    _callable("apply_over_axes", "func", func)
    x = _A(a)
    for ax in ([axes] if isinstance(axes, (int, np.integer)) else _o._ints_arg("apply_over_axes", "axes", axes)):
        b = _A(func(x, ax))
        if b.ndim == x.ndim - 1:
            b = _o.expand_dims(b, ax)
        elif b.ndim != x.ndim:
            raise ShapeError(f"apply_over_axes: func returned shape {_shape_str(b.shape)} for an input of shape {_shape_str(x.shape)}")
        x = b
    return x


_DIM = r"\w+"
_CORE = rf"(?:{_DIM}(?:,{_DIM})*)?"
_ARG = rf"\({_CORE}\)"
_ARGLIST = rf"{_ARG}(?:,{_ARG})*"
_SIGNATURE = rf"^{_ARGLIST}->{_ARGLIST}$"


def _parse_signature(signature):
    sig = signature.replace(" ", "")
    if not re.match(_SIGNATURE, sig):
        raise InvalidArgumentError(f"vectorize: not a valid gufunc signature: {signature!r}")
    ins, outs = sig.split("->")
    parse = lambda s: [tuple(re.findall(_DIM, a)) for a in re.findall(_ARG, s)]  # noqa: E731
    return parse(ins), parse(outs)


def _match_core(sizes, shape, core, what):
    if len(shape) < len(core):
        raise ShapeError(f"vectorize: {what} of shape {_shape_str(shape)} has fewer axes than its core dims {core}")
    for dim, n in zip(core, shape[len(shape) - len(core):]):
        if sizes.setdefault(dim, n) != n:
            raise ShapeError(f"vectorize: inconsistent size for core dim {dim!r}: {sizes[dim]} and {n} ({what} of shape {_shape_str(shape)})")


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """A version of ``pyfunc`` that maps over the leading (loop) axes of its array arguments
    with NumPy's broadcasting, built on ``qb.vmap`` (as ``jnp.vectorize``): ``excluded``
    names positional indices or keywords passed through unchanged; ``signature`` (a gufunc
    signature such as ``'(n),(n)->()'``) gives each argument's trailing core dims, which
    ``pyfunc`` sees whole (their sizes are checked, outputs too). A keyword argument not in
    ``excluded`` is an error (JAX drops it silently).

    Example:
        >>> dot = qb.vectorize(lambda a, b: qb.sum(a * b), signature="(n),(n)->()")
        >>> dot(qb.ones((3, 2)), qb.array([1.0, 2.0])).tolist()
        [3.0, 3.0, 3.0]
    """
    excluded = frozenset(excluded)
    for e in excluded:
        if not isinstance(e, (str, int)) or isinstance(e, bool):
            raise ArgumentTypeError(f"vectorize: excluded must hold ints or strings, got {e!r}")
        if isinstance(e, int) and e < 0:
            raise InvalidArgumentError(f"vectorize: excluded={set(excluded)} has a negative position")
    parsed = _parse_signature(signature) if signature is not None else None

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        static = {i: args[i] for i in excluded if isinstance(i, int) and i < len(args)}
        static_kw = {k: v for k, v in kwargs.items() if k in excluded}
        dyn = [a for i, a in enumerate(args) if i not in static]
        dyn_kw = {k: v for k, v in kwargs.items() if k not in excluded}
        in_core, out_core = parsed if parsed is not None else ([()] * len(dyn), None)
        none_at = {i for i, a in enumerate(dyn) if a is None}
        if none_at:
            if builtins.any(in_core[i] != () for i in none_at if i < len(in_core)):
                raise InvalidArgumentError(f"vectorize: None passed at positions {sorted(none_at)} with core dims (signature {signature!r})")
            in_core = [c for i, c in enumerate(in_core) if i not in none_at]
        if dyn_kw:
            raise UnsupportedOperationError("vectorize: keyword arguments must be listed in excluded (as JAX)", op="vectorize")
        mapped = [a for i, a in enumerate(dyn) if i not in none_at]
        if len(mapped) != len(in_core):
            raise ArgumentTypeError(f"vectorize: expected {len(in_core)} positional arguments (signature {signature!r}), got {len(mapped)}")
        mapped = [_A(a) for a in mapped]
        sizes = {}
        loops = []
        for x, core in zip(mapped, in_core):
            _match_core(sizes, x.shape, core, "an argument")
            loops.append(x.shape[: x.ndim - len(core)])
        bshape = _o._bcast_shapes("vectorize", *loops) if loops else ()

        def call(*xs):
            it = iter(xs)
            full = []
            di = 0
            for i in range(len(args)):
                if i in static:
                    full.append(static[i])
                else:
                    full.append(None if di in none_at else next(it))
                    di += 1
            out = pyfunc(*full, **static_kw)
            if out_core is not None:
                outs = out if isinstance(out, tuple) else (out,)
                if len(out_core) > 1 and not isinstance(out, tuple):
                    raise ArgumentTypeError(f"vectorize: pyfunc must return a tuple of {len(out_core)} outputs (signature {signature!r})")
                if len(outs) != len(out_core):
                    raise ArgumentTypeError(f"vectorize: pyfunc returned {len(outs)} outputs, the signature {signature!r} has {len(out_core)}")
                s = dict(sizes)
                for o, core in zip(outs, out_core):
                    _match_core(s, tuple(_A(o).shape), core, "an output")
            return out

        squeezed, rev = [], []
        for x, loop in zip(mapped, loops):
            rev.append(((1,) * (len(bshape) - len(loop)) + loop)[::-1])
            unit = tuple(i for i, n in enumerate(loop) if n == 1)
            squeezed.append(_o.squeeze(x, unit) if unit else x)
        f = call
        expand = []
        for neg, col in enumerate(zip(*rev)):
            in_axes = tuple(None if n == 1 else 0 for n in col)
            if builtins.all(a is None for a in in_axes):
                expand.append(len(bshape) - 1 - neg)
            else:
                f = _vmap_axes(f, in_axes)
        result = f(*squeezed)
        if not expand:
            return result
        if isinstance(result, tuple):
            return tuple(_o.expand_dims(r, tuple(expand)) for r in result)
        return _o.expand_dims(result, tuple(expand))

    return wrapped


# ---------------------------------------------------------------------------------------------
# Histograms


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002 - NumPy's name
    """The edges of ``histogram``'s bins: ``bins`` + 1 evenly spaced edges over ``range``
    (default: ``a``'s min and max, which may be traced; an empty span widened by 0.5 each
    side), or the given 1-D edges; float dtype of ``a``.

    Example:
        >>> qb.histogram_bin_edges(qb.array([1.0, 3.0]), bins=4).tolist()
        [1.0, 1.5, 2.0, 2.5, 3.0]
    """
    name = "histogram_bin_edges"
    if isinstance(bins, str):
        raise UnsupportedOperationError(f"{name}: string bins are not supported (as JAX)", op=name)
    x = _A(a)
    dt = _dt.to_inexact(x.dtype)
    if not (isinstance(bins, (int, np.integer)) and not isinstance(bins, (bool, np.bool_))):
        e = _o.astype(_A(bins), dt)
        if e.ndim != 1:
            raise ShapeError(f"{name}: bins must be a count or 1-D edges, got shape {_shape_str(e.shape)}")
        return e
    nb = int(bins)
    if nb < 1:
        raise ShapeError(f"{name}: bins must be >= 1, got {nb}")
    if range is None:
        lo, hi = _o.astype(_o.min(x), dt), _o.astype(_o.max(x), dt)
    else:
        if len(range) != 2:
            raise ShapeError(f"{name}: range must be None or a pair (lo, hi), got {range!r}")
        lo, hi = _o.astype(_A(range[0]), dt), _o.astype(_A(range[1]), dt)
    same = hi == lo
    lo, hi = _o.where(same, lo - 0.5, lo), _o.where(same, hi + 0.5, hi)
    return _o.linspace(lo, hi, nb + 1, dtype=dt)


def histogramdd(sample, bins=10, range=None, weights=None, density=None):  # noqa: A002 - NumPy's name
    """The D-dimensional histogram of the (N, D) ``sample``: counts (or summed ``weights``)
    of shape (bins per dimension) and the list of each dimension's edges, as
    ``jnp.histogramdd`` (each bin holds its left edge, the last its right edge too; values
    outside are not counted; ``density`` normalizes by the total and the bin volumes).

    Example:
        >>> h, edges = qb.histogramdd(qb.array([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0]]), bins=2)
        >>> h.tolist()
        [[1, 0], [1, 1]]
    """
    name = "histogramdd"
    s = _A(sample)
    if s.ndim != 2:
        raise ShapeError(f"{name}: sample must be 2-D (N, D), got shape {_shape_str(s.shape)}")
    dt = _dt.to_inexact(s.dtype)
    if weights is not None:
        w = _A(weights)
        if w.shape != s.shape[:1]:
            raise ShapeError(f"{name}: weights must have shape ({s.shape[0]},) (one per sample), got {_shape_str(w.shape)}")
        if w.dtype.is_float and w.dtype is not dt:
            dt = _o.float64
        w = _o.astype(w, dt)
    s = _o.astype(s, dt)
    n, dims = s.shape
    if range is not None and (len(range) != dims or builtins.any(r is not None and len(r) != 2 for r in range)):
        raise ShapeError(f"{name}: range must be {dims} pairs or Nones for a sample of shape {_shape_str(s.shape)}, got {range!r}")
    if isinstance(bins, (int, np.integer)) or is_array(bins) and bins.ndim == 0:
        per_dim = [bins] * dims
    else:
        per_dim = list(bins)
        if len(per_dim) != dims:
            raise ShapeError(f"{name}: bins must have one entry per dimension ({dims}), got {len(per_dim)}")
    idx, edges = [], []
    for d in builtins.range(dims):
        col = _o.reshape(_o._slice_axis(s, 1, d, d + 1, 1), (n,))
        e = histogram_bin_edges(col, per_dim[d], None if range is None else range[d])
        i = _searchsorted(e, col, side="right")
        idx.append(_o.where(col == e[-1], i - 1, i))
        edges.append(e)
    nbins = tuple(e.shape[0] + 1 for e in edges)
    flat = ravel_multi_index(tuple(idx), nbins, mode="clip")
    hist = _o.reshape(_bincount(flat, None if weights is None else w, length=math.prod(nbins)), nbins)
    hist = hist[(slice(1, -1),) * dims]
    if density:
        hist = _o.astype(hist, dt)
        hist = hist / _o.sum(hist)
        for norm in ix_(*[e[1:] - e[:-1] for e in edges]):
            hist = hist / norm
    return hist, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):  # noqa: A002 - NumPy's name
    """The 2-D histogram of the points (``x``, ``y``): counts, x edges, y edges
    (``histogramdd`` of the stacked coordinates; ``bins`` a count, a pair, or one edge
    array for both).

    Example:
        >>> h, ex, ey = qb.histogram2d(qb.array([0.0, 1.0, 1.0]), qb.array([0.0, 1.0, 0.0]), bins=2)
        >>> h.tolist()
        [[1, 0], [1, 1]]
    """
    x, y = _A(x), _A(y)
    if x.ndim != 1 or x.shape != y.shape:
        raise ShapeError(f"histogram2d: x and y must be 1-D of one length, got shapes {_shape_str(x.shape)} and {_shape_str(y.shape)}")
    if isinstance(bins, (int, np.integer)):
        nb = 1
    else:
        try:
            nb = len(bins)
        except TypeError:
            nb = 1
    if nb not in (1, 2):
        bins = [bins, bins]
    x, y = _common_float("histogram2d", x, y)
    hist, edges = histogramdd(_o.stack([x, y], axis=1), bins, range, weights, density)
    return hist, edges[0], edges[1]

