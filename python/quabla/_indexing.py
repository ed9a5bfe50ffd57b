"""NumPy/JAX advanced indexing and indexed updates (``x.at[idx]``).

``x[key]`` with integer arrays (NumPy, Tensor or traced; several of them broadcast together),
mixed with ints, slices, ``None`` and ``...``, follows NumPy's rules: the advanced indices'
broadcast shape replaces them in place when they are adjacent, and goes first otherwise
(``None`` counts as a basic index between them). Indices (ints and arrays, static or
traced) wrap once from the end and are then clamped (JAX's default for gathers, also
``mode="clip"`` and ``"promise_in_bounds"``): ``arange(10)[11]`` is 9 and ``[-11]`` is 0;
``mode="fill"`` (or ``"drop"``) gives ``fill_value`` for them instead (NaN for floats, the
most negative integer for signed ints, the largest for unsigned ones, True for bools, as
JAX). Slices are clipped to the axis as Python's. The
gather is one ``quabla.gather`` along the flattened advanced dims; other dims stay whole.

``x.at[key].set/add/multiply/min/max(values, mode=...)``: a key of ints, slices, ``None``,
``...`` and 0-d integer indices (traced or not) selects a box of ``x`` (strided by the
slices' steps), updated as the box's slice of ``x`` combined with the values and written back
with one ``dynamic_update_slice`` (a whole-array box is just the combination); other keys
scatter (``quabla.scatter*``) into the flat positions that ``x[key]`` reads (a key of one
index array on the first axis scatters whole rows along axis 0 instead): duplicates
accumulate (``set``: the last one wins, as XLA on one device), out-of-bounds updates (after
one wrap from the end) are dropped (JAX's default, also for ``"drop"``, ``"fill"`` and
``"promise_in_bounds"``, as XLA's scatter) or clamped (``mode="clip"``); a box at an
out-of-bounds int or 0-d index is dropped likewise.
``.get(mode=, fill_value=)`` is ``x[key]`` with that mode.
"""

import builtins

import numpy as np

from . import _ops as o
from . import dtypes as _dt
from ._trace import Tracer, bind, current, is_array
from .errors import DTypeError, ShapeError, TracerError, UnsupportedOperationError
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
    try:
        arr = np.asarray(k)
    except ValueError:
        raise _errors.InvalidIndexError(f"an index list must be rectangular (a nested list of integers of one shape), got {o._short_repr(k)}") from None
    if arr.dtype == np.bool_:
        raise UnsupportedOperationError("boolean mask indexing gives a data-dependent shape; use qb.where", op="getitem")
    if arr.dtype.kind not in "iu":
        raise _errors.InvalidIndexError(f"only integers, slices, None, ... and integer arrays are valid indices, got {type(k).__name__}")
    return True


def _static_index(i, n):
    """Static int index ``i`` of an axis of extent ``n`` as an int64 NumPy scalar array for
    :func:`_wrapped`: values far out of bounds are brought to ``n`` or ``-n - 1`` (still out
    of bounds on the same side, and representable)."""
    i = builtins.min(builtins.max(int(i), -n - 1), n)
    return np.asarray(i, dtype=np.int64)


def _wrapped(i, n, check):
    """Index array ``i`` of an axis of extent ``n`` wrapped once from the end and clamped into
    it, and (with ``check``) where it was in range (else None)."""
    i = o.where(i < 0, i + n, i)
    ok = ((i >= 0) & (i < n)) if check else None
    return o.clip(i, 0, n - 1), ok


def _and(a, b):
    return b if a is None else a if b is None else a & b


def _is_mask(k):
    """A boolean index: a bool array (Tensor, tracer, NumPy, nested list) or a Python bool."""
    if isinstance(k, (bool, np.bool_)):
        return True
    if is_array(k):
        return k.dtype.is_bool
    if isinstance(k, (list, np.ndarray)):
        try:
            return np.asarray(k).dtype == np.bool_
        except (ValueError, TypeError):
            return False
    return False


def _expand_masks(x, key, op="getitem"):
    """``key`` with each concrete boolean mask replaced by the integer index arrays of its
    True positions (NumPy's and JAX's meaning of ``x[mask]``; a scalar True is a new axis).
    A traced mask raises NonConcreteBooleanIndexError (its result's shape would depend on
    its values); a mask selecting nothing raises ShapeError (no zero-size arrays)."""
    if not builtins.any(_is_mask(k) for k in key):
        return key

    def width(k):
        if k is None or k is Ellipsis:
            return 0
        if _is_mask(k):
            return len(k.shape) if is_array(k) else np.ndim(k)
        return 1

    rest = builtins.sum(width(k) for k in key)
    out, axis = [], 0
    for pos, k in enumerate(key):
        if k is Ellipsis:
            axis += builtins.max(len(x.shape) - rest, 0)
            out.append(k)
            continue
        if not _is_mask(k):
            out.append(k)
            axis += width(k)
            continue
        if type(k) is Tracer:
            raise _errors.NonConcreteBooleanIndexError(
                f"{op}: the boolean index {k!r} at position {pos} is traced; the result's shape would depend on its "
                "values. Inside jit use qb.where(mask, x, other), or qb.nonzero(mask, size=...) for positions"
            )
        m = np.asarray(k, dtype=np.bool_)
        if m.ndim == 0:
            if not m:
                raise ShapeError(f"{op}: the index False selects no element, and Quabla has no zero-size arrays")
            out.append(None)
            continue
        want = tuple(x.shape[axis : axis + m.ndim])
        if tuple(m.shape) != want:
            raise _errors.InvalidIndexError(
                f"{op}: boolean index at position {pos} has shape {tuple(m.shape)}, but the axes it indexes have shape {want} "
                f"(array shape {tuple(x.shape)})"
            )
        hits = np.nonzero(m)
        if hits[0].size == 0:
            raise ShapeError(f"{op}: the boolean index at position {pos} selects no element, and Quabla has no zero-size arrays")
        out.extend(o.array(h.astype(np.int64)) for h in hits)
        axis += m.ndim
    return tuple(out)


def has_advanced(key):
    """Whether ``key`` (a tuple) needs the advanced path (any integer array or traced index)."""
    return builtins.any(_is_array_index(k) for k in key)


def getitem(x, key):
    """``x[key]``: keys with integer arrays or traced indices take :func:`gather`, the rest
    the basic path (:func:`quabla._ops.getitem`)."""
    k = _expand_masks(x, key if isinstance(key, tuple) else (key,))
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
        return True
    info = np.iinfo(dtype.np)
    return int(info.max if info.min == 0 else info.min)


def gather(x, key, mode=None, fill_value=None):
    """``x[key]`` with NumPy advanced indexing (see the module docstring)."""
    _check_mode("getitem", mode)
    x = o._to_array(x)
    if not isinstance(key, tuple):
        key = (key,)
    key = _expand_masks(x, key)
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
            k = _static_index(k, n)
        idx.append(_as_index(k))
    bshape = o._bcast_shapes("getitem", *[tuple(i.shape) for i in idx])
    idx = [o.broadcast_to(i, bshape) for i in idx]
    # Wrap negatives once, note validity, clamp; flatten the advanced dims (row-major).
    valid = None
    flat = None
    for d, i in zip(adv, idx):
        n = shape[d]
        i, ok = _wrapped(i, n, mode in ("fill", "drop"))
        valid = _and(valid, ok)
        flat = i if flat is None else flat * n + i
    # Adjacent advanced dims are merged in place (a reshape) and gathered along that axis,
    # where their result dims go; others are moved first (a transpose), where theirs go.
    # (Moving adjacent ones first and back transposed the whole array twice: x[:, idx] of
    # 4096 x 1024 f32 by 64 columns 1241 us, JAX 352.)
    adjacent = adv == list(range(adv[0], adv[0] + len(adv)))
    a = adv[0] if adjacent else 0
    rest = [d for d in range(len(shape)) if d not in adv]
    xt = x if adjacent else o.transpose(x, tuple(adv) + tuple(rest))
    nflat = int(np.prod([shape[d] for d in adv]))
    before, after = tuple(shape[d] for d in rest[:a]), tuple(shape[d] for d in rest[a:])
    xf = o.reshape(xt, before + (nflat,) + after)
    q = len(bshape)
    if q == 0:
        g = bind(o._op("gather", axis=a), xf, o.reshape(flat, (1,)))
        g = o.reshape(g, before + after)
    else:
        g = bind(o._op("gather", axis=a), xf, flat)
    if valid is not None:
        m = o.reshape(valid, (1,) * len(before) + tuple(bshape) + (1,) * len(after))
        g = o.where(m, g, _fill_value(x.dtype, fill_value))
    return g


def _flat_positions(x, key, mode):
    """The flat position in ``x`` of each element of ``x[key]`` (-1 where an array index is
    out of bounds, unless ``mode == "clip"``): the sum over the axes of each one's index times
    its stride, every term spanning only its own dims of the result (``x[key]`` of an iota of
    all of x's positions read the whole of it: ``x.at[:, idx].set(0)`` of 4096 x 1024 f32 by
    64 columns 22 ms, JAX 2.6)."""
    # One item per axis, a new axis (None) an extent-1 axis of stride 0.
    strides = [int(np.prod(x.shape[d + 1:])) for d in range(x.ndim)]
    items, ext, st = [], [], []
    d = 0
    for k in o._expand_index(key, x.shape):
        if k is None:
            items.append(slice(None))
            ext.append(1)
            st.append(0)
            continue
        items.append(k)
        ext.append(x.shape[d])
        st.append(strides[d])
        d += 1
    adv = [a for a, k in enumerate(items) if not isinstance(k, slice)]
    idx = []
    for a in adv:
        k, n = items[a], ext[a]
        if _is_int(k):
            k = _static_index(k, n)
        idx.append(o.astype(_as_index(k), _dt.int64))
    bshape = o._bcast_shapes("at[]", *[tuple(i.shape) for i in idx])
    # The result's dims: the slices' in order, the advanced indices' broadcast dims in place of
    # the first of them when they are adjacent, else first.
    adjacent = adv == list(range(adv[0], adv[0] + len(adv)))
    at = builtins.sum(1 for a in range(adv[0]) if isinstance(items[a], slice)) if adjacent else 0
    q = len(bshape)
    sliced = [a for a, k in enumerate(items) if isinstance(k, slice)]
    rank = len(sliced) + q
    traced = current() is not None
    pos, valid = None, None
    full = [1] * rank
    full[at:at + q] = bshape
    for j, a in enumerate(sliced):
        r = range(*items[a].indices(ext[a]))
        if len(r) == 0:
            raise _errors.InvalidIndexError(f"at[]: index {items[a]} of axis {a} selects no elements")
        k = j if j < at else j + q
        full[k] = len(r)
        shape = [1] * rank
        shape[k] = len(r)
        ar = bind(o._op("iota", dim=0, ty=((len(r),), _dt.int64.code))) if traced else o.array(np.arange(len(r), dtype=np.int64))
        term = o.reshape(ar * (r.step * st[a]) + r.start * st[a], tuple(shape))
        pos = term if pos is None else pos + term
    lead, trail = (1,) * at, (1,) * (len(sliced) - at)
    for a, i in zip(adv, idx):
        i, ok = _wrapped(i, ext[a], mode != "clip")
        valid = _and(valid, ok)
        term = o.reshape(o.broadcast_to(i * st[a], tuple(bshape)), lead + tuple(bshape) + trail)
        pos = term if pos is None else pos + term
    pos = o.broadcast_to(pos, tuple(full))
    if valid is not None:
        pos = o.where(o.broadcast_to(o.reshape(valid, lead + tuple(bshape) + trail), tuple(full)), pos, -1)
    return pos


def _leading_rows(x, key):
    """The indices of a key that is one integer array on the first axis (whole rows); None
    for any other key."""
    if len(key) != 1 or x.ndim == 0 or not _is_array_index(key[0]):
        return None
    return _as_index(key[0])


def _is_scalar_index(k):
    """A 0-d integer index array (traced or concrete): one position of its axis, as an int."""
    return _is_array_index(k) and tuple(k.shape if is_array(k) else np.shape(k)) == ()


def _values_to(v, shape, combiner):
    """The values of ``x.at[key].<combiner>`` broadcast to the indexed ``shape`` (a ShapeError
    naming the update when they do not broadcast)."""
    try:
        np.broadcast_shapes(tuple(v.shape), tuple(shape))
    except ValueError:
        raise o.ShapeError(f"at[].{combiner}: values of shape {tuple(v.shape)} do not broadcast to the indexed shape {tuple(shape)}") from None
    return o.broadcast_to(v, tuple(shape))


def _combine(combiner, old, new):
    """The updated values of ``x.at[...].<combiner>`` from the old ones and the values."""
    if combiner == "set":
        return new
    if combiner == "add":
        return old + new
    if combiner == "mul":
        return old * new
    return (o.minimum if combiner == "min" else o.maximum)(old, new)


def _box_update(x, key, v, combiner, mode):
    """``x.at[key].<combiner>(v)`` for a key of ints, slices, ``None``, ``...`` and 0-d integer
    indices: the box the key selects (each slice's positions from its first to its last,
    stepped; an index one position) is sliced from ``x``, combined with the values (spread
    over the box's stepped positions by an interior pad where a step exceeds 1, the other
    positions kept by a select) and written back by one ``dynamic_update_slice``. A traced
    or static index wraps once from the end; out of bounds, the box is left as it was
    (``mode="clip"`` clamps it instead). One scatter into the flat positions of the
    whole array read an iota of all of them (``x.at[:, 3].set(0)`` of 4096 x 1024 f32: 20 ms,
    JAX 0.8). None for keys with integer arrays of rank >= 1."""
    if not builtins.all(_is_int(k) or k is None or k is Ellipsis or isinstance(k, slice) or _is_scalar_index(k) for k in key):
        return None
    exp = o._expand_index(key, x.shape)
    view, counts, starts, steps, flips = [], [], [], [], []
    ok = None
    dynamic = False
    d = 0
    for k in exp:
        if k is None:
            view.append(1)
            continue
        n = x.shape[d]
        if isinstance(k, slice):
            r = range(*k.indices(n))
            if len(r) == 0:
                return x
            view.append(len(r))
            counts.append(len(r))
            starts.append(min(r[0], r[-1]))
            steps.append(abs(r.step))
            flips.append(r.step < 0)
        else:
            if _is_int(k):
                i = int(k)
                i = i + n if i < 0 else i
                if not 0 <= i < n:
                    if mode != "clip":
                        return x  # the box is out of bounds: dropped
                    i = builtins.min(builtins.max(i, 0), n - 1)
                starts.append(i)
            else:
                i, inside = _wrapped(o.astype(o._to_array(k), _dt.int64), n, mode != "clip")
                starts.append(i)
                ok = _and(ok, inside)
                dynamic = True
            counts.append(1)
            steps.append(1)
            flips.append(False)
        d += 1
    v = o.reshape(_values_to(v, view, combiner), tuple(counts))
    if builtins.any(flips):
        v = o.getitem(v, tuple(slice(None, None, -1) if f else slice(None) for f in flips))
    extents = tuple((c - 1) * s + 1 for c, s in zip(counts, steps))
    if dynamic:
        old = o.dynamic_slice(x, starts, extents, allow_negative_indices=False)
    else:
        old = o.getitem(x, tuple(slice(a, a + e) for a, e in zip(starts, extents)))
    if builtins.any(s > 1 for s in steps):
        pad = {"edge_padding_low": (0,) * x.ndim, "edge_padding_high": (0,) * x.ndim, "interior_padding": tuple(s - 1 for s in steps)}
        zero = o._to_array(False if x.dtype.is_bool else 0, x.dtype)
        spread = bind(o._op("pad", **pad), v, zero)
        mask = bind(o._op("pad", **pad), o._fill(True, _dt.bool_, tuple(counts), like=v), o._to_array(False))
        new = o.where(mask, _combine(combiner, old, spread), old)
    else:
        new = _combine(combiner, old, v)
    if ok is not None:
        new = o.where(ok, new, old)
    if not dynamic and extents == tuple(x.shape):
        return new
    return o.dynamic_update_slice(x, new, starts, allow_negative_indices=False)


def scatter(x, key, values, combiner, mode=None):
    """``x.at[key].<combiner>(values)``: the box update of a key without index arrays
    (:func:`_box_update`), else a ``quabla.scatter*`` of whole rows along axis 0 (a key of
    one index array on the first axis) or into the flat positions."""
    name = {"set": "scatter", "add": "scatter_add", "mul": "scatter_mul", "min": "scatter_min", "max": "scatter_max"}[combiner]
    _check_mode(f"at[].{combiner}", mode)
    x = o._to_array(x)
    if not isinstance(key, tuple):
        key = (key,)
    key = _expand_masks(x, key, f"at[].{combiner}")
    v = o._to_array(values) if is_array(values) else o._to_array(values, x.dtype)
    if v.dtype is not x.dtype:
        v = o.astype(v, x.dtype)
    box = _box_update(x, key, v, combiner, mode)
    if box is not None:
        return box
    rows = _leading_rows(x, key)
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
        v = _values_to(v, tuple(i.shape) + tuple(x.shape[1:]), combiner)
        op = o._op(name, update_window_dims=tuple(range(q, r - 1 + q)), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), index_vector_dim=q)
        return bind(op, x, i, v)
    pos = _flat_positions(x, key, mode)
    v = _values_to(v, pos.shape, combiner)
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
        """``x[key]``: out-of-bounds indices clamped (None, ``"clip"``,
        ``"promise_in_bounds"``), or ``fill_value`` there (``"fill"``, ``"drop"``; default NaN,
        the most negative signed int, the largest unsigned int, True), as JAX's."""
        key = _expand_masks(self._x, self._key if isinstance(self._key, tuple) else (self._key,), "at[].get")
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


def take(a, indices, axis=None, out=None, mode=None, unique_indices=False, indices_are_sorted=False, fill_value=None):
    """Elements of ``a`` at integer ``indices`` along ``axis`` (None: of the flattened array),
    as ``jax.numpy.take``: the result shape is ``a.shape[:axis] + indices.shape +
    a.shape[axis+1:]``. ``mode``: ``"fill"`` (the default) wraps negative indices once and
    gives ``fill_value`` out of range (default NaN for floats, the most negative integer for
    signed ones, the largest for unsigned ones, True for bools, as JAX); ``"clip"`` clamps
    into range (no wrapping); ``"wrap"`` takes indices modulo the extent; ``"raise"`` (JAX
    has none) raises IndexError for concrete out-of-range indices. ``unique_indices`` and
    ``indices_are_sorted`` are accepted and ignored.

    Example:
        >>> qb.take(qb.array([10.0, 20.0, 30.0]), qb.array([2, -1, 3])).tolist()
        [30.0, 30.0, nan]
        >>> qb.take(qb.array([10, 20, 30]), qb.array([4, -1]), mode="wrap").tolist()
        [20, 30]
    """
    del unique_indices, indices_are_sorted
    if out is not None:
        raise UnsupportedOperationError("take: out= is not supported (arrays are immutable)", op="take")
    x = o._to_array(a)
    if axis is None:
        x = o.ravel(x)
        axis = 0
    ax = o._norm_axis("take", axis, x.ndim, x.shape)
    n = x.shape[ax]
    if not (mode is None or isinstance(mode, str)) or mode not in (None, "fill", "clip", "wrap", "raise"):
        raise UnsupportedOperationError(f"take: mode must be 'fill', 'clip', 'wrap', 'raise' or None, got {mode!r}", op="take")
    if type(indices) is Tracer:
        idx = indices
        if idx.dtype.is_float or idx.dtype.is_bool:
            raise DTypeError(f"take: indices must be integers, got {idx.dtype.name} of shape {o._shape_str(idx.shape)}")
        if mode == "raise":
            raise UnsupportedOperationError("take: mode='raise' needs concrete indices (a traced index cannot raise)", op="take")
    else:
        try:
            arr = np.asarray(indices)
        except ValueError:
            raise _errors.ArgumentTypeError(f"take: indices must be an array of integers, got a ragged {type(indices).__name__} {o._short_repr(indices)}") from None
        if arr.dtype.kind not in "iu":
            raise DTypeError(f"take: indices must be integers, got dtype {arr.dtype} of shape {o._shape_str(arr.shape)}")
        if arr.size == 0:
            raise _errors.ShapeError("take: empty index arrays are not supported (zero-extent result)")
        if mode == "raise" and ((arr >= n).any() or (arr < -n).any()):
            raise _errors.InvalidIndexError(f"take: index out of range for axis {ax} of extent {n} (shape {o._shape_str(x.shape)})")
        idx = o._from_numpy(arr.astype(np.int64))
    if mode == "clip":
        idx, mode = o.clip(idx, 0, n - 1), None
    elif mode == "wrap":
        idx, mode = idx % n, None
    elif mode == "raise":
        mode = None
    else:
        mode = "fill"
    return gather(x, (slice(None),) * ax + (idx,), mode=mode, fill_value=fill_value)
