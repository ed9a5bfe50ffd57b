"""Searching sorted arrays, counting into bins and order statistics (``jnp.searchsorted``,
``digitize``, ``bincount``, ``histogram``, ``interp``, ``quantile``, ``percentile``,
``median``).

``searchsorted`` is a binary search of every value at once: ``bit_length(n)`` steps of a
gather of the midpoints and a compare, each step a few elementwise ops over the values
(``jnp.searchsorted``'s 'scan' method); the others are compositions of it with gathers and
row scatters (``x.at[i].add``), and the order statistics gathers from a sort, so they
differentiate, batch and lower as those ops do.
"""

import builtins

import numpy as np

from . import _ops as _o
from . import dtypes as _dt
from ._numpy import argsort as _argsort
from ._numpy import isnan as _isnan
from ._numpy import sort as _sort
from ._conv import cumsum as _cumsum
from ._indexing import take_along_axis as _take_along_axis
from ._trace import Tracer
from .errors import DTypeError, ShapeError, UnsupportedOperationError
from . import errors as _errors

__all__ = ["searchsorted", "digitize", "bincount", "histogram", "interp", "quantile", "percentile", "median"]


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Indices (int32, as JAX's) where the values ``v`` would be inserted into the sorted
    1-D ``a`` to keep it sorted (``jnp.searchsorted``): the first such index with
    ``side='left'``, the last with ``side='right'``. ``a`` and ``v`` are promoted to a common
    dtype first (a Python number in ``v`` is weak), as JAX's.

    Example:
        >>> qb.searchsorted(qb.array([1.0, 2.0, 2.0, 5.0]), qb.array([0.0, 2.0, 6.0])).tolist()
        [0, 1, 4]
        >>> qb.searchsorted(qb.array([1, 3, 5]), 2.5).item()
        1
    """
    name = "searchsorted"
    a = _o._to_array(a)
    if _o._is_scalar(v):
        v = _o._to_array(v, _dt.weak_result(a.dtype, v))
    else:
        v = _o._to_array(v)
    if a.ndim != 1:
        raise ShapeError(f"{name}: a must be 1-D, got shape {a.shape}")
    if side not in ("left", "right"):
        raise ShapeError(f"{name}: side must be 'left' or 'right', got {side!r}")
    if method not in ("scan", "scan_unrolled", "sort", "compare_all"):
        raise ShapeError(f"{name}: method must be 'scan', 'scan_unrolled', 'sort' or 'compare_all', got {method!r}")
    if sorter is not None:
        a = _o.take(a, _o._to_array(sorter))
    if a.dtype is not v.dtype:
        d = _dt.result_type(name, a.dtype, v.dtype)
        a, v = _o.astype(a, d), _o.astype(v, d)
    n = a.shape[0]
    idx = _o.int32 if n < 2**31 - 1 else _o.int64
    lo = _o.zeros(v.shape, idx)
    if n == 0:
        return lo
    hi = _o.full(v.shape, n, idx)
    below = _o.less if side == "left" else _o.less_equal
    for _ in range(n.bit_length()):
        mid = (lo + hi) // 2
        at_mid = _o.take(a, _o.minimum(mid, n - 1))
        go = _o.logical_and(below(at_mid, v), mid < hi)
        lo = _o.where(go, mid + 1, lo)
        hi = _o.where(go, hi, mid)
    return lo


def digitize(x, bins, right=False, *, method=None):
    """The index of the bin of each value of ``x`` among the monotonic 1-D ``bins``
    (``jnp.digitize``; NumPy's semantics for increasing and decreasing bins; ``x`` and
    ``bins`` are promoted to a common dtype; ``method`` is searchsorted's, default 'scan').

    Example:
        >>> qb.digitize(qb.array([0.5, 1.5, 2.5]), qb.array([1.0, 2.0, 3.0])).tolist()
        [0, 1, 2]
    """
    x, bins = _o._to_array(x), _o._to_array(bins)
    if bins.ndim != 1:
        raise ShapeError(f"digitize: bins must be 1-D, got shape {bins.shape}")
    method = "scan" if method is None else method
    side = "left" if right else "right"
    n = bins.shape[0]
    if n == 0:
        return _o.zeros(x.shape, _o.int32)
    up = searchsorted(bins, x, side=side, method=method)
    down = n - searchsorted(bins[::-1], x, side=side, method=method)
    return _o.where(bins[-1] >= bins[0], up, down)


def _concrete(name, x, xname, arg, what):
    """``x`` as a NumPy array, for an argument ``arg=None`` that ``x``'s values decide
    (``what``); a TracerError inside jit."""
    if isinstance(x, Tracer):
        raise _errors.ConcretizationTypeError(f"{name}: {arg}=None needs a concrete {xname} {what}; inside jit pass {arg}")
    return np.asarray(x)


def _count(name, x, length, minlength):
    if x.dtype.kind not in "iub":
        raise DTypeError(f"{name}: x must have an integer dtype, got {x.dtype.name} of shape {x.shape}")
    if x.ndim != 1:
        raise ShapeError(f"{name}: x must be 1-D, got shape {x.shape}")
    minlength = int(minlength)
    if length is None:
        top = int(_concrete(name, x, "x", "length", "to count its bins").max()) + 1 if x.shape[0] else 0
        length = builtins.max(minlength, top)
    return int(length)


def bincount(x, weights=None, minlength=0, *, length=None):
    """The number (or the sum of ``weights``) of each non-negative integer in the 1-D ``x``
    (``jnp.bincount``): ``length`` bins (needed under jit; else ``max(minlength, x.max() + 1)``),
    negative values counted in bin 0 and values past the last bin dropped, as JAX does.

    Example:
        >>> qb.bincount(qb.array([0, 1, 1, 3])).tolist()
        [1, 2, 0, 1]
    """
    x = _o._to_array(x)
    n = _count("bincount", x, length, minlength)
    if weights is None:
        w, dtype = _o.ones(x.shape, _o.int64), _o.int64
    else:
        w = _o._to_array(weights)
        if w.shape != x.shape:
            raise ShapeError(f"bincount: weights must have x's shape {x.shape}, got {w.shape}")
        dtype = w.dtype
    idx = _o.maximum(_o.astype(x, _o.int64), 0)
    return _o.zeros((n,), dtype).at[idx].add(w, mode="drop")


def histogram(a, bins=10, range=None, weights=None, density=None):  # noqa: A002 - NumPy's name
    """Counts of ``a`` (flattened) in ``bins`` bins of equal width over ``range``, or between
    the given edges, and the edges (``jnp.histogram``): each bin holds its left edge, the last
    its right edge too; values outside are not counted. ``density`` divides by the total
    and the widths.

    Example:
        >>> counts, edges = qb.histogram(qb.array([0.0, 0.5, 1.0, 2.0]), bins=2, range=(0.0, 1.0))
        >>> counts.tolist(), edges.tolist()
        ([1.0, 2.0], [0.0, 0.5, 1.0])
    """
    a = _o._floatify(_o.ravel(_o._to_array(a)))
    dtype = a.dtype
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, (bool, np.bool_)):
        if bins < 1:
            raise ShapeError(f"histogram: bins must be >= 1, got {bins}")
        if range is None:
            arr = _concrete("histogram", a, "a", "range", "to find its extent")
            range = (float(arr.min()), float(arr.max())) if arr.size else (0.0, 1.0)
        lo, hi = (float(range[0]), float(range[1]))
        if hi == lo:
            lo, hi = lo - 0.5, hi + 0.5
        edges = _o.linspace(lo, hi, int(bins) + 1, dtype=dtype)
    else:
        edges = _o.astype(_o._to_array(bins), dtype)
        if edges.ndim != 1 or edges.shape[0] < 2:
            raise ShapeError(f"histogram: bins must be a count or a 1-D array of at least 2 edges, got shape {edges.shape}")
    nb = edges.shape[0] - 1
    idx = searchsorted(edges, a, side="right")
    idx = _o.where(a == edges[-1], nb, idx)
    w = _o.ones(a.shape, dtype) if weights is None else _o.astype(_o.ravel(_o._to_array(weights)), dtype)
    if w.shape != a.shape:
        raise ShapeError(f"histogram: weights must have a's size {a.shape[0]}, got shape {w.shape}")
    counts = _o.zeros((nb + 2,), dtype).at[idx].add(w, mode="drop")[1 : nb + 1]
    if density:
        widths = edges[1:] - edges[:-1]
        counts = counts / (_o.sum(counts) * widths)
    return counts, edges


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points ``(xp, fp)`` at ``x`` (``jnp.interp``):
    ``xp`` increasing; ``left`` / ``right`` (default ``fp[0]`` / ``fp[-1]``) outside; with
    ``period``, ``x`` and ``xp`` taken modulo it.

    Example:
        >>> qb.interp(qb.array([0.5, 1.5, 3.0]), qb.array([0.0, 1.0, 2.0]), qb.array([0.0, 10.0, 20.0])).tolist()
        [5.0, 15.0, 20.0]
    """
    x, xp, fp = _o._to_array(x), _o._to_array(xp), _o._to_array(fp)
    if xp.ndim != 1 or fp.ndim != 1 or xp.shape != fp.shape or xp.shape[0] < 1:
        raise ShapeError(f"interp: xp and fp must be 1-D of one length >= 1, got shapes {xp.shape} and {fp.shape}")
    dtype = _dt.to_inexact(_dt.result_type("interp", _dt.result_type("interp", x.dtype, xp.dtype), fp.dtype))
    x, xp, fp = _o.astype(x, dtype), _o.astype(xp, dtype), _o.astype(fp, dtype)
    if period is not None:
        if left is not None or right is not None:
            raise ShapeError("interp: left and right cannot be given with period")
        p = abs(float(period))
        x = x % p
        xp = xp % p
        order = _argsort(xp)
        xp, fp = _o.take(xp, order), _o.take(fp, order)
        xp = _o.concatenate([xp[-1:] - p, xp, xp[:1] + p])
        fp = _o.concatenate([fp[-1:], fp, fp[:1]])
    n = xp.shape[0]
    if n == 1:
        out = _o.broadcast_to(fp[0], x.shape)
    else:
        i = _o.clip(searchsorted(xp, x, side="right"), 1, n - 1)
        x0, x1 = _o.take(xp, i - 1), _o.take(xp, i)
        f0, f1 = _o.take(fp, i - 1), _o.take(fp, i)
        dx = x1 - x0
        t = _o.where(dx == 0, 0.0, (x - x0) / _o.where(dx == 0, 1.0, dx))
        out = f0 + t * (f1 - f0)
    if period is None:
        lv = fp[0] if left is None else left
        rv = fp[-1] if right is None else right
        out = _o.where(x < xp[0], lv, out)
        out = _o.where(x > xp[-1], rv, out)
    return _o.astype(out, dtype)


_QUANTILE_METHODS = ("linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf")


def _quantile_weights(name, a, weights, axis, method):
    """``a`` and ``weights`` in one float dtype, the weights broadcast to ``a`` (JAX's rules:
    only method 'inverted_cdf' takes weights; of ``a``'s shape, or of the reduced axis'
    extent when ``axis`` is given)."""
    if method != "inverted_cdf":
        raise UnsupportedOperationError(f"{name}: method {method!r} does not take weights; only method 'inverted_cdf' does (as JAX)", op=name)
    w = _o._to_array(weights)
    d = _dt.to_inexact(_dt.result_type(name, a.dtype, w.dtype))
    a, w = _o.astype(a, d), _o.astype(w, d)
    if w.shape != a.shape:
        if axis is None:
            raise ShapeError(f"{name}: weights of shape {tuple(w.shape)} must have the shape {tuple(a.shape)} of a when axis is None")
        ax = _o._norm_axis(name, axis, a.ndim, a.shape)
        if w.shape != (a.shape[ax],):
            raise ShapeError(f"{name}: weights of shape {tuple(w.shape)} must have a's shape {tuple(a.shape)} or the reduced axis' ({a.shape[ax]},)")
        w = _o.reshape(w, tuple(a.shape[ax] if d_ == ax else 1 for d_ in range(a.ndim)))
        w = _o.broadcast_to(w, a.shape)
    return a, w


def _to_last(x, ax):
    """``x`` with axis ``ax`` moved last."""
    return _o.transpose(x, tuple(d for d in range(x.ndim) if d != ax) + (ax,))


def _inverted_cdf(a, w, qs, ax, count):
    """The 'inverted_cdf' quantiles of ``a`` along ``ax`` with weights ``w`` (None: ones):
    for each q the first sorted value whose cumulative weight reaches ``q`` times the total
    (weights that are negative, NaN or on a NaN value count as 0); the index is clamped to
    ``count - 1`` (the number of values considered; an int or an array of ``a`` without
    ``ax``). The q dims come first."""
    order = _argsort(a, axis=ax)
    s = _to_last(_take_along_axis(a, order, ax), ax)
    if w is None:
        ws = _o.ones_like(s)
    else:
        ws = _to_last(_take_along_axis(w, order, ax), ax)
        ws = _o.where((ws < 0) | _isnan(ws), 0.0, ws)
    ws = _o.where(_isnan(s), 0.0, ws)
    cw = _cumsum(ws, axis=-1)
    total = cw[..., -1:]
    qe = _o.reshape(qs, qs.shape + (1,) * s.ndim)
    below = _o.expand_dims(cw, 0) < qe * _o.expand_dims(total, 0) if qs.ndim else cw < qs * total
    idx = _o.sum(_o.astype(below, _dt.int64), axis=-1)
    idx = _o.maximum(_o.minimum(idx, _o.astype(_o._to_array(count), _dt.int64) - 1), 0)
    sb = _o.broadcast_to(s, idx.shape + s.shape[-1:])
    return _take_along_axis(sb, _o.expand_dims(idx, -1), -1)[..., 0]


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None):
    """The ``q``-th quantiles (``q`` in [0, 1], a scalar or a 1-D array) of ``a`` along ``axis``
    (None: flattened), as ``jnp.quantile``: the sorted values at ``q * (n - 1)`` by ``method``
    ('linear', 'lower', 'higher', 'nearest', 'midpoint'), or with 'inverted_cdf' the first
    sorted value whose cumulative weight reaches ``q`` of the total; NaN where the values
    hold a NaN. The quantiles' dims come first.

    ``weights`` (JAX's rules: method 'inverted_cdf' only): one weight per value, of ``a``'s
    shape or, with an int ``axis``, of that axis' extent; negative and NaN weights count as 0.

    Example:
        >>> qb.quantile(qb.array([4.0, 1.0, 3.0, 2.0]), 0.5).item()
        2.5
        >>> qb.quantile(qb.array([1.0, 5.0, 2.0]), 0.5, method="inverted_cdf", weights=qb.array([1.0, 3.0, 1.0])).item()
        5.0
    """
    name = "quantile"
    if out is not None:
        raise UnsupportedOperationError(f"{name}: out is not supported (arrays are immutable)", op=name)
    if not isinstance(method, str) or method not in _QUANTILE_METHODS:
        raise _errors.InvalidArgumentError(f"{name}: method must be one of {_QUANTILE_METHODS}, got {method!r}")
    a = _o._to_array(a)
    w = None
    if weights is not None:
        a, w = _quantile_weights(name, a, weights, axis, method)
    a = _o._floatify(a)
    if axis is None:
        shape_keep = (1,) * a.ndim
        a, ax = _o.ravel(a), 0
        w = None if w is None else _o.ravel(w)
    else:
        ax = _o._norm_axis(name, axis, a.ndim, a.shape)
        shape_keep = tuple(1 if d == ax else n for d, n in enumerate(a.shape))
    n = a.shape[ax]
    if n == 0:
        raise ShapeError(f"{name}: the reduced axis is empty (shape {a.shape})")
    qs = _o._to_array(q)
    if qs.ndim > 1:
        raise ShapeError(f"{name}: q must be a scalar or 1-D, got shape {qs.shape}")
    qs = _o.astype(qs, a.dtype)
    if method == "inverted_cdf":
        r = _inverted_cdf(a, w, qs, ax, n)
        r = _o.where(_o.any(_isnan(a), axis=ax), np.nan, r)
        return _o.reshape(r, qs.shape + shape_keep) if keepdims else r
    s = _sort(a, axis=ax)
    pos = qs * (n - 1)
    lo = _o.clip(_o.astype(_o.floor(pos), _o.int64), 0, n - 1)
    hi = _o.clip(_o.astype(_o.ceil(pos), _o.int64), 0, n - 1)
    frac = pos - _o.floor(pos)

    def at(i):
        # The sorted values at indices i (shape q), the q dims first.
        v = _o.take(s, _o.reshape(i, (-1,)) if i.ndim else i, axis=ax)
        if i.ndim and ax:
            v = _o.transpose(v, (ax,) + tuple(d for d in range(v.ndim) if d != ax))
        return v

    def bq(t, like):
        # q-shaped t against the q-first values `like`.
        return _o.reshape(t, t.shape + (1,) * (like.ndim - t.ndim))

    vlo, vhi = at(lo), at(hi)
    if method == "linear":
        r = vlo + bq(frac, vlo) * (vhi - vlo)
    elif method == "lower":
        r = vlo
    elif method == "higher":
        r = vhi
    elif method == "nearest":
        # A tie (a fraction of exactly 0.5) takes the lower value, as jnp.quantile does.
        r = _o.where(bq(frac <= 0.5, vlo), vlo, vhi)
    else:
        r = (vlo + vhi) * 0.5
    nan = _o.any(_isnan(a), axis=ax)
    r = _o.where(nan, np.nan, r)
    if keepdims:
        r = _o.reshape(r, qs.shape + shape_keep)
    return r


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None):
    """``quantile`` with ``q`` in percent (``jnp.percentile``; ``weights`` with method
    'inverted_cdf' only).

    Example:
        >>> qb.percentile(qb.array([1.0, 2.0, 3.0, 4.0, 5.0]), 25.0).item()
        2.0
    """
    return quantile(a, _o._to_array(q) / 100.0, axis=axis, out=out, overwrite_input=overwrite_input, method=method, keepdims=keepdims, weights=weights)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median along ``axis`` (``jnp.median``: the 0.5 quantile by 'midpoint').

    Example:
        >>> qb.median(qb.array([3.0, 1.0, 4.0, 2.0])).item()
        2.5
    """
    return quantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input, method="midpoint", keepdims=keepdims)
