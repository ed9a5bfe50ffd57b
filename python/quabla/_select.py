"""``jax.numpy``'s data-dependent selections with a static ``size=``: ``nonzero``,
``argwhere``, ``flatnonzero``, one-argument ``where``, ``unique`` and its array-API forms, the
set operations, ``lexsort``.

Each result whose length depends on the data has the length ``size`` (the first ``size``
entries, padded with ``fill_value``) and so traces, batches and compiles; without ``size``
the input must be concrete (an eager Tensor or NumPy array: the length is counted from its
values first) and inside ``jit`` a TracerError says to pass ``size``. Quabla arrays have
positive extents, so a selection that finds nothing without ``size`` raises a ShapeError
(JAX returns an empty array). Positions come from one cumulative sum and one scatter (O(n));
``unique`` and the set operations sort once (``quabla.argsort``, stable).
"""

import collections

import numpy as np

from . import _ops as _o
from ._conv import cumsum
from ._indexing import take_along_axis
from ._numpy import argsort, isnan, sort
from ._ops import _int_arg, _norm_axis, _shape_str, _to_array, astype, ravel, reshape, where
from ._search import _concrete, searchsorted
from ._shape import moveaxis
from .dtypes import int64
from .errors import ArgumentTypeError, InvalidArgumentError, ShapeError

__all__ = [
    "where",
    "nonzero",
    "flatnonzero",
    "argwhere",
    "unique",
    "unique_values",
    "unique_counts",
    "unique_inverse",
    "unique_all",
    "isin",
    "union1d",
    "intersect1d",
    "setdiff1d",
    "setxor1d",
    "lexsort",
]

UniqueAllResult = collections.namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = collections.namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = collections.namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def _size(name, size, count):
    """The static result length: ``size`` when given, else the concrete ``count`` (a thunk)."""
    if size is None:
        n = int(count())
        if n <= 0:
            raise ShapeError(f"{name}: nothing selected, and Quabla arrays cannot be empty; pass size= (and fill_value=) for a fixed length")
        return n
    size = _int_arg(name, "size", size)
    if size <= 0:
        raise ShapeError(f"{name}: size must be positive, got {size} (Quabla arrays have positive extents)")
    return size


def _positions(mask, size):
    """The flat positions of the first ``size`` true entries of the 1-D bool ``mask``, padded
    with 0, and how many there are (an int64 scalar)."""
    m = astype(mask, int64)
    n = mask.shape[0]
    total = _o.sum(m)
    slot = where(mask, cumsum(m) - 1, size)
    pos = _o.zeros((size,), int64).at[slot].set(_o.arange(n, dtype=int64), mode="drop")
    return pos, total


def _fill(name, x, valid, fill, what="fill_value"):
    """``x`` where ``valid``, else ``fill`` (cast to ``x``'s dtype)."""
    if fill is None:
        return x
    f = _to_array(fill)
    if f.ndim != 0:
        raise ShapeError(f"{name}: {what} must be a scalar here, got shape {_shape_str(f.shape)}")
    return where(valid, x, astype(f, x.dtype))


def _mask(x):
    return x if x.dtype.is_bool else x != 0


def nonzero(a, *, size=None, fill_value=None):
    """The indices of the nonzero entries of ``a``, one int64 array per axis, in row-major
    order (as ``jax.numpy.nonzero``). With ``size``, each has exactly ``size`` entries: the
    first ``size`` found, padded with ``fill_value`` (default 0; a scalar or one per axis).
    Without ``size`` ``a`` must be concrete (TracerError under ``jit``), and finding nothing
    is a ShapeError (Quabla arrays are never empty).

    Example:
        >>> [i.tolist() for i in qb.nonzero(qb.array([[0, 1], [2, 0]]))]
        [[0, 1], [1, 0]]
        >>> qb.nonzero(qb.array([0.0, 3.0, 0.0]), size=3, fill_value=-1)[0].tolist()
        [1, -1, -1]
    """
    x = _to_array(a)
    if x.ndim == 0:
        raise ShapeError("nonzero: a 0-d array has no axes to index; use qb.atleast_1d(a) first")
    flat = ravel(_mask(x))
    size = _size("nonzero", size, lambda: _concrete("nonzero", _o.sum(astype(flat, int64)), "a", "size", "to count its nonzero entries").item())
    pos, total = _positions(flat, size)
    if isinstance(fill_value, (tuple, list)):
        if len(fill_value) != x.ndim:
            raise ShapeError(f"nonzero: fill_value has {len(fill_value)} entries for an array of rank {x.ndim} (shape {_shape_str(x.shape)})")
        fills = list(fill_value)
    else:
        fills = [fill_value] * x.ndim
    valid = _o.arange(size, dtype=int64) < total
    out, stride = [], 1
    strides = []
    for d in reversed(x.shape):
        strides.append(stride)
        stride *= d
    for axis, (d, s) in enumerate(zip(x.shape, reversed(strides))):
        coord = (pos // s) % d if x.ndim > 1 else pos
        out.append(_fill("nonzero", coord, valid, fills[axis]))
    return tuple(out)


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """Elementwise ``x`` where ``condition`` else ``y`` (broadcasting all three; a
    non-bool condition means ``condition != 0``). With ``condition`` alone it is
    ``qb.nonzero(condition, size=size, fill_value=fill_value)``, as ``jax.numpy.where``.

    Example:
        >>> qb.where(qb.array([True, False]), 1.0, qb.array([5.0, 6.0])).tolist()
        [1.0, 6.0]
        >>> qb.where(qb.array([0, 3, 4]))[0].tolist()
        [1, 2]
    """
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ArgumentTypeError("where: pass both x and y, or neither (the indices of the nonzero entries)")
    if size is not None or fill_value is not None:
        raise ArgumentTypeError("where: size= and fill_value= go with the one-argument form where(condition)")
    return _o.where(condition, x, y)


def flatnonzero(a, *, size=None, fill_value=None):
    """The indices of the nonzero entries of the flattened ``a`` (``nonzero(ravel(a))[0]``,
    as ``jax.numpy.flatnonzero``; ``size``/``fill_value`` as ``nonzero``).

    Example:
        >>> qb.flatnonzero(qb.array([[0, 5], [7, 0]])).tolist()
        [1, 2]
    """
    return nonzero(ravel(_to_array(a)), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """The indices of the nonzero entries of ``a`` as a ``(count, a.ndim)`` int64 array (one
    row per entry, as ``jax.numpy.argwhere``; ``size``/``fill_value`` as ``nonzero``). A 0-d
    ``a`` is a ShapeError (its result has no columns).

    Example:
        >>> qb.argwhere(qb.array([[0, 1], [2, 0]])).tolist()
        [[0, 1], [1, 0]]
    """
    x = _to_array(a)
    if x.ndim == 0:
        raise ShapeError("argwhere: a 0-d array gives a result without columns, which Quabla arrays cannot have")
    return _o.stack(nonzero(x, size=size, fill_value=fill_value), axis=1)


def _sorted_runs(x, equal_nan):
    """``x`` (n rows, each a 1-D or wider slice) sorted lexicographically, its permutation
    and the bool mask of the first row of each run of equal rows."""
    n = x.shape[0]
    if x.ndim == 1:
        perm = argsort(x)
    else:
        cols = reshape(x, (n, -1))
        perm = lexsort([cols[:, j] for j in reversed(range(cols.shape[1]))])
    aux = _o.take(x, perm, axis=0)
    if n == 1:
        return aux, perm, _o.ones((1,), _o.bool_)
    new, old = aux[1:], aux[:-1]
    ne = new != old
    if equal_nan and x.dtype.is_float:
        ne = _o.logical_and(ne, _o.logical_not(_o.logical_and(isnan(new), isnan(old))))
    if x.ndim > 1:
        ne = _o.any(ne, axis=tuple(range(1, x.ndim)))
    return aux, perm, _o.concatenate([_o.ones((1,), _o.bool_), ne])


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True, size=None, fill_value=None, sorted=True):  # noqa: A002 - JAX's name
    """The sorted unique values of ``ar`` (flattened, or the unique slices along ``axis``),
    as ``jax.numpy.unique``: optionally the index of each one's first occurrence, the index
    of each entry's value among them (``inverse``: shape ``ar.shape`` without ``axis``, else
    ``(ar.shape[axis],)``) and their counts. NaNs are one value with ``equal_nan``. With
    ``size`` the results have exactly ``size`` values: padded with ``fill_value`` (default
    the smallest value), their indices with the first's and counts with 0; without it ``ar``
    must be concrete. ``sorted`` is accepted (results are always sorted, as JAX's).

    Example:
        >>> qb.unique(qb.array([3, 1, 3, 2])).tolist()
        [1, 2, 3]
        >>> v, c = qb.unique(qb.array([3.0, 1.0, 3.0]), return_counts=True, size=3, fill_value=0.0)
        >>> v.tolist(), c.tolist()
        ([1.0, 3.0, 0.0], [1, 2, 0])
    """
    del sorted
    for arg, v in (("return_index", return_index), ("return_inverse", return_inverse), ("return_counts", return_counts), ("equal_nan", equal_nan)):
        if not isinstance(v, (bool, np.bool_, int)):
            raise ArgumentTypeError(f"unique: {arg} must be a bool, got {type(v).__name__}")
    x = _to_array(ar)
    if axis is None:
        shape = x.shape
        x = ravel(x)
        ax = 0
    else:
        if x.ndim == 0:
            raise ShapeError("unique: axis given for a 0-d array")
        ax = _norm_axis("unique", axis, x.ndim, x.shape)
        shape = None
        x = moveaxis(x, ax, 0)
    aux, perm, mask = _sorted_runs(x, equal_nan)
    n = x.shape[0]
    size_given = size is not None
    size = _size("unique", size, lambda: _concrete("unique", _o.sum(astype(mask, int64)), "ar", "size", "to count its unique values").item())
    ind, total = _positions(mask, size)
    vals = _o.take(aux, ind, axis=0)
    if size_given and fill_value is not None:
        valid = _o.arange(size, dtype=int64) < total
        if vals.ndim > 1:
            valid = reshape(valid, (size,) + (1,) * (vals.ndim - 1))
        vals = _fill("unique", vals, valid, fill_value)
    if axis is not None:
        vals = moveaxis(vals, 0, ax)
    out = [vals]
    if return_index:
        out.append(_o.take(perm, ind))
    if return_inverse:
        runs = cumsum(astype(mask, int64)) - 1
        inv = _o.zeros((n,), int64).at[perm].set(runs)
        out.append(reshape(inv, shape) if shape is not None and len(shape) > 1 else inv)
    if return_counts:
        # Each run's start and the next's (n past the last run, and in the padding).
        starts, _ = _positions(mask, size + 1)
        bounds = _o.concatenate([starts[:1], where(starts[1:] != 0, starts[1:], n)])
        out.append(bounds[1:] - bounds[:-1])
    return out[0] if len(out) == 1 else tuple(out)


def unique_values(x, /, *, size=None, fill_value=None):
    """The sorted unique values of ``x`` flattened (``unique(x)``; the array API's name).

    Example:
        >>> qb.unique_values(qb.array([[2, 1], [2, 2]])).tolist()
        [1, 2]
    """
    return unique(x, size=size, fill_value=fill_value)


def unique_counts(x, /, *, size=None, fill_value=None):
    """``(values, counts)`` of ``x`` flattened, a named tuple (the array API's
    ``unique_counts``).

    Example:
        >>> qb.unique_counts(qb.array([2, 1, 2])).counts.tolist()
        [1, 2]
    """
    return UniqueCountsResult(*unique(x, return_counts=True, size=size, fill_value=fill_value))


def unique_inverse(x, /, *, size=None, fill_value=None):
    """``(values, inverse_indices)`` of ``x``, a named tuple (the array API's
    ``unique_inverse``; the inverse has ``x``'s shape).

    Example:
        >>> qb.unique_inverse(qb.array([2, 1, 2])).inverse_indices.tolist()
        [1, 0, 1]
    """
    return UniqueInverseResult(*unique(x, return_inverse=True, size=size, fill_value=fill_value))


def unique_all(x, /, *, size=None, fill_value=None):
    """``(values, indices, inverse_indices, counts)`` of ``x``, a named tuple (the array
    API's ``unique_all``).

    Example:
        >>> r = qb.unique_all(qb.array([2, 1, 2]))
        >>> r.values.tolist(), r.indices.tolist(), r.counts.tolist()
        ([1, 2], [1, 0], [1, 2])
    """
    return UniqueAllResult(*unique(x, return_index=True, return_inverse=True, return_counts=True, size=size, fill_value=fill_value))


# Membership by comparing every pair up to this many pairs; beyond, by binary search.
_COMPARE_ALL_MAX = 1 << 20


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    """True where an entry of ``element`` is among ``test_elements`` (as
    ``jax.numpy.isin``; the result has ``element``'s shape). ``method``: ``"compare_all"``
    (every pair), ``"binary_search"`` or ``"sort"`` (a search in the sorted test elements),
    ``"auto"`` (every pair up to 2^20 pairs).

    Example:
        >>> qb.isin(qb.array([1, 2, 3]), qb.array([3, 1])).tolist()
        [True, False, True]
    """
    del assume_unique
    e, t = _o._common("isin", [element, test_elements])
    shape = e.shape
    fe, ft = ravel(e), ravel(t)
    if method not in ("auto", "compare_all", "binary_search", "sort"):
        raise InvalidArgumentError(f"isin: method must be 'auto', 'compare_all', 'binary_search' or 'sort', got {method!r}")
    pairs = fe.shape[0] * ft.shape[0]
    if method == "compare_all" or (method == "auto" and pairs <= _COMPARE_ALL_MAX):
        hit = _o.any(reshape(fe, (-1, 1)) == reshape(ft, (1, -1)), axis=1)
    else:
        st = sort(ft)
        i = _o.minimum(searchsorted(st, fe), ft.shape[0] - 1)
        hit = _o.take(st, i) == fe
    hit = _o.logical_not(hit) if invert else hit
    return reshape(hit, shape) if len(shape) != 1 else hit


def _flat_pair(name, ar1, ar2):
    a, b = _o._common(name, [ar1, ar2])
    return ravel(a), ravel(b)


def _compact(name, values, keep, size, fill_value, default_fill=None):
    """The first ``size`` entries of ``values`` where ``keep``, padded with ``fill_value``
    (or ``default_fill(values)``)."""
    size = _size(name, size, lambda: _concrete(name, _o.sum(astype(keep, int64)), "input", "size", "to count its result").item())
    pos, total = _positions(keep, size)
    out = _o.take(values, pos)
    valid = _o.arange(size, dtype=int64) < total
    if fill_value is None and default_fill is not None:
        return where(valid, out, default_fill(values))
    return _fill(name, out, valid, fill_value)


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """The sorted unique values found in either array (``unique`` of both flattened, as
    ``jax.numpy.union1d``; ``size``/``fill_value`` as ``unique``).

    Example:
        >>> qb.union1d(qb.array([3, 1]), qb.array([2, 1])).tolist()
        [1, 2, 3]
    """
    a, b = _flat_pair("union1d", ar1, ar2)
    return unique(_o.concatenate([a, b]), size=size, fill_value=fill_value)


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None, fill_value=None):
    """The sorted unique values found in both arrays (as ``jax.numpy.intersect1d``), with
    ``return_indices`` also the index of each one's first occurrence in ``ar1`` and in
    ``ar2``. With ``size``: padded with ``fill_value`` (default the smallest value found) and
    the indices with the arrays' lengths. ``assume_unique`` is accepted (the values are
    found the same way).

    Example:
        >>> qb.intersect1d(qb.array([4, 1, 3, 1]), qb.array([3, 1, 5])).tolist()
        [1, 3]
    """
    del assume_unique
    a, b = _flat_pair("intersect1d", ar1, ar2)
    aux, perm, first = _sorted_runs(a, True)
    keep = _o.logical_and(first, isin(aux, b))
    size_given = size is not None
    size = _size("intersect1d", size, lambda: _concrete("intersect1d", _o.sum(astype(keep, int64)), "ar1", "size", "to count the common values").item())
    pos, total = _positions(keep, size)
    vals = _o.take(aux, pos)
    valid = _o.arange(size, dtype=int64) < total
    if size_given:
        vals = where(valid, vals, _o.take(vals, _o.zeros((), int64)) if fill_value is None else astype(_to_array(fill_value), vals.dtype))
    if not return_indices:
        return vals
    i1 = _o.take(perm, pos)
    sb = argsort(b)
    j = _o.minimum(searchsorted(_o.take(b, sb), vals), b.shape[0] - 1)
    i2 = _o.take(sb, j)
    if size_given:
        i1 = where(valid, i1, a.shape[0])
        i2 = where(valid, i2, b.shape[0])
    return vals, i1, i2


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted unique values of ``ar1`` not in ``ar2`` (as ``jax.numpy.setdiff1d``; with
    ``assume_unique`` ``ar1``'s values in their order). With ``size``: padded with
    ``fill_value`` (default 0, as JAX).

    Example:
        >>> qb.setdiff1d(qb.array([4, 1, 3, 1]), qb.array([3, 5])).tolist()
        [1, 4]
    """
    a, b = _flat_pair("setdiff1d", ar1, ar2)
    if assume_unique:
        aux, first = a, _o.ones(a.shape, _o.bool_)
    else:
        aux, _, first = _sorted_runs(a, True)
    keep = _o.logical_and(first, isin(aux, b, invert=True))
    return _compact("setdiff1d", aux, keep, size, 0 if fill_value is None and size is not None else fill_value)


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted unique values in exactly one of the arrays (as ``jax.numpy.setxor1d``).
    With ``size``: padded with ``fill_value`` (default the smallest value found).

    Example:
        >>> qb.setxor1d(qb.array([1, 2, 3]), qb.array([2, 3, 4])).tolist()
        [1, 4]
    """
    del assume_unique
    a, b = _flat_pair("setxor1d", ar1, ar2)
    aux, _, first = _sorted_runs(_o.concatenate([a, b]), True)
    keep = _o.logical_and(first, isin(aux, a) != isin(aux, b))
    return _compact("setxor1d", aux, keep, size, fill_value, default_fill=lambda v: _o.min(where(keep, v, _o.max(v))))


def lexsort(keys, axis=-1):
    """The indices (int64) that sort by several keys: the last key is the primary one, ties
    broken by the one before, and so on (as ``jax.numpy.lexsort``; stable). ``keys``: a
    sequence of arrays of one shape, or a 2-D+ array whose first axis enumerates them.

    Example:
        >>> qb.lexsort([qb.array([1, 2, 1, 2]), qb.array([1, 0, 0, 1])]).tolist()
        [2, 1, 0, 3]
    """
    if isinstance(keys, (tuple, list)):
        ks = [_to_array(k) for k in keys]
    else:
        k = _to_array(keys)
        if k.ndim == 0:
            raise ShapeError("lexsort: keys must be a sequence of arrays or an array of rank >= 1")
        ks = [k[i] for i in range(k.shape[0])]
    if not ks:
        raise ArgumentTypeError("lexsort: needs at least one key")
    shape = ks[0].shape
    for i, k in enumerate(ks):
        if k.shape != shape:
            raise ShapeError(f"lexsort: key {i} has shape {_shape_str(k.shape)}, key 0 has {_shape_str(shape)}")
    if not shape:
        raise ShapeError("lexsort: keys must have rank >= 1")
    ax = _norm_axis("lexsort", axis, len(shape), shape)
    # Stable sorts from the least significant key to the most: each keeps the order the
    # previous ones made among its ties.
    perm = argsort(ks[0], axis=ax)
    for k in ks[1:]:
        p = argsort(take_along_axis(k, perm, axis=ax), axis=ax)
        perm = take_along_axis(perm, p, axis=ax)
    return perm

