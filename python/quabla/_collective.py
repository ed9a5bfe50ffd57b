"""Collectives over named vmap axes: ``jax.lax``'s ``psum``, ``pmean``, ``pmax``, ``pmin``,
``all_gather``, ``axis_index``, ``psum_scatter``, ``ppermute``, ``pshuffle``, ``all_to_all``
and ``axis_size`` inside ``qb.vmap(..., axis_name=...)`` (and ``qb.pmap``).

While ``vmap`` traces its function, its axis is bound here (``_bound``: the name, the
dialect's spelling of it and the batch size). A collective records a ``quabla.psum`` /
``pmax`` / ``pmin`` / ``all_gather`` / ``axis_index`` op naming the axis in the innermost
trace; the ``quabla-vmap`` expansion of the vmap with that ``axis_name`` resolves it over the
batch (passes/src/rules/collective.rs), innermost binding first, as JAX's names shadow. The
rest are compositions of those five. A name bound by no enclosing vmap raises
:class:`UnboundAxisNameError` (JAX's ``NameError``) at trace time.

Differences from JAX: ``axis_index_groups`` must be None; the values of an axis exist only
inside the vmap (there are no devices behind a name).
"""

import re
import threading

import numpy as np

from . import _ops as _o
from . import _trace
from . import dtypes as _dt
from . import tree as _tree
from ._ops import _op, _shape_str
from ._trace import Tracer, is_array
from .errors import ArgumentTypeError, InvalidArgumentError, ShapeError, UnboundAxisNameError, UnsupportedOperationError

__all__ = [
    "psum", "pmean", "pmax", "pmin", "all_gather", "axis_index", "axis_size", "psum_scatter", "ppermute",
    "pshuffle", "all_to_all",
]

_LOCAL = threading.local()
_SAFE = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
_INTERNED = {}



# The shard_map (its name) whose body is being traced with check_vma=True, per thread:
# reverse-mode transforms inside it raise (quabla/_shard_map.py: JAX sums the cotangent of a
# replicated input over the mesh, which the vmap emulation does not).
_vma = threading.local()


class checking_vma:
    """Context manager: the body of shard_map ``fname`` (None: not checking) is traced."""

    def __init__(self, fname):
        self.fname = fname

    def __enter__(self):
        self.saved = getattr(_vma, "fname", None)
        _vma.fname = self.fname

    def __exit__(self, *exc):
        _vma.fname = self.saved


def reverse_mode_check(what):
    """Raises UnsupportedOperationError when ``what`` (a reverse-mode transform) is applied
    inside the body of a shard_map that checks replication (check_vma=True)."""
    fname = getattr(_vma, "fname", None)
    if fname is not None:
        raise UnsupportedOperationError(
            f"{what} inside {fname} with check_vma=True: JAX sums the gradient of an input replicated over the mesh "
            "across its instances, which Quabla's shard_map (a vmap over the mesh on one device) does not; take the "
            "gradient outside shard_map (as JAX's documentation does), or pass check_vma=False for per-instance "
            "gradients (then psum or pmean them yourself)",
            op="shard_map",
        )

def _spell(name):
    """The dialect's spelling of axis name ``name`` (any hashable): a short identifier-like
    string as is, anything else interned as ``#<n>``."""
    if isinstance(name, str) and _SAFE.fullmatch(name):
        return name
    key = (type(name), name)
    s = _INTERNED.get(key)
    if s is None:
        s = _INTERNED[key] = f"#{len(_INTERNED)}"
    return s


def _stack():
    st = getattr(_LOCAL, "axes", None)
    if st is None:
        st = _LOCAL.axes = []
    return st


class _bound:
    """Binds vmap axis ``name`` of ``size`` examples while a vmap traces its function (a no-op
    for ``name=None``)."""

    __slots__ = ("entry",)

    def __init__(self, name, size):
        self.entry = None if name is None else (name, _spell(name), int(size))

    def __enter__(self):
        if self.entry is not None:
            _stack().append(self.entry)
        return self

    def __exit__(self, *exc):
        if self.entry is not None:
            st = _stack()
            if st and st[-1] is self.entry:
                st.pop()
            elif self.entry in st:
                st.remove(self.entry)


def _names(fn, axis_name):
    """``axis_name`` (a name or a tuple/list of names) as a tuple of names."""
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    if not names:
        raise InvalidArgumentError(f"{fn}: axis_name is an empty {type(axis_name).__name__}; name at least one axis")
    for n in names:
        try:
            hash(n)
        except TypeError:
            raise ArgumentTypeError(f"{fn}: an axis name must be hashable, got {type(n).__name__}") from None
    return names


def _lookup(fn, name):
    """(spelling, size) of the innermost binding of ``name``."""
    for n, s, size in reversed(_stack()):
        if n == name:
            return s, size
    bound = [n for n, _, _ in _stack()]
    raise UnboundAxisNameError(
        f"{fn}: unbound axis name {name!r}: no enclosing vmap/pmap binds it "
        f"({'bound axes: ' + ', '.join(repr(b) for b in bound) if bound else 'no axis is bound here'}); "
        f"call it inside qb.vmap(..., axis_name={name!r})"
    )


def _groups(fn, axis_index_groups):
    if axis_index_groups is not None:
        raise UnsupportedOperationError(f"{fn}: axis_index_groups is not supported (only None: the whole axis)", op=fn)


def _record(op, *xs):
    """``op`` on ``xs`` recorded in the innermost trace (where the vmap binding the axis, or
    a trace inside it, is in progress)."""
    trace = _trace.current()
    if trace is None:
        raise UnboundAxisNameError("a collective ran outside any trace: no vmap binds its axis")
    ids = [trace.id_of(x) for x in xs]
    r = trace.builder.push(op, ids, _trace.user_loc())[0]
    return Tracer(trace, r[0], tuple(r[1]), _trace.BY_CODE[r[2]])


def _leaf(fn, x):
    """An array leaf of a collective's operand (Python numbers and NumPy arrays converted)."""
    if is_array(x):
        return x
    try:
        return _o.asarray(x)
    except Exception:
        raise ArgumentTypeError(f"{fn}: expected arrays (or a pytree of them), got a leaf of type {type(x).__name__}") from None


def _reduce(kind, x, axis_name, axis_index_groups):
    """``kind`` ("psum", "pmax" or "pmin": the function and the op) of the leaves of ``x``."""
    fn = kind
    _groups(fn, axis_index_groups)
    names = _names(fn, axis_name)
    bound = [_lookup(fn, n) for n in names]

    def one(v):
        if isinstance(v, (int, float, np.number)) and not isinstance(v, bool):
            # A Python number is the same in every example (JAX: psum(1, 'i') is the size).
            n = int(np.prod([s for _, s in bound])) if kind == "psum" else 1
            return v * n
        v = _leaf(fn, v)
        if kind == "psum" and v.dtype.is_bool:
            v = _o.astype(v, _dt.int32)  # a count, int32 as JAX's
        for spelling, _ in bound:
            v = _record(_op(kind, axis_name=spelling), v)
        return v

    return _tree.map(one, x)


def psum(x, axis_name, *, axis_index_groups=None):
    """The sum of ``x`` over the examples of the named vmap axis (every example gets it), as
    ``jax.lax.psum``.

    Args:
        x: an array or a pytree of arrays (a Python number is the same in every example:
            ``psum(1, name)`` is the axis size).
        axis_name: the ``axis_name`` of an enclosing ``qb.vmap``/``qb.pmap``, or a tuple of them
            (the sum over all).
        axis_index_groups: must be None.

    Returns:
        The sums, with ``x``'s structure, shapes and dtypes (booleans are summed as integers).

    Example:
        >>> qb.vmap(lambda v: v / qb.lax.psum(v, "i"), axis_name="i")(qb.array([1.0, 3.0])).tolist()
        [0.25, 0.75]
    """
    return _reduce("psum", x, axis_name, axis_index_groups)


def pmax(x, axis_name, *, axis_index_groups=None):
    """The maximum of ``x`` over the examples of the named vmap axis, as ``jax.lax.pmax``.

    Args:
        x: an array or a pytree of arrays.
        axis_name: the ``axis_name`` of an enclosing vmap, or a tuple of them.
        axis_index_groups: must be None.

    Returns:
        The maxima, with ``x``'s structure. Its derivative passes the tangent of the examples
        attaining the maximum, averaged over ties.

    Example:
        >>> qb.vmap(lambda v: qb.lax.pmax(v, "i"), axis_name="i")(qb.array([1.0, 3.0])).tolist()
        [3.0, 3.0]
    """
    return _reduce("pmax", x, axis_name, axis_index_groups)


def pmin(x, axis_name, *, axis_index_groups=None):
    """The minimum of ``x`` over the examples of the named vmap axis, as ``jax.lax.pmin``.

    Args:
        x: an array or a pytree of arrays.
        axis_name: the ``axis_name`` of an enclosing vmap, or a tuple of them.
        axis_index_groups: must be None.

    Returns:
        The minima, with ``x``'s structure.

    Example:
        >>> qb.vmap(lambda v: qb.lax.pmin(v, "i"), axis_name="i")(qb.array([1.0, 3.0])).tolist()
        [1.0, 1.0]
    """
    return _reduce("pmin", x, axis_name, axis_index_groups)


def axis_size(axis_name):
    """The number of examples of the named vmap axis (a Python int), as ``jax.lax.axis_size``.

    Args:
        axis_name: the ``axis_name`` of an enclosing vmap, or a tuple of them (the product).

    Returns:
        The size.

    Example:
        >>> qb.vmap(lambda v: v * qb.lax.axis_size("i"), axis_name="i")(qb.ones(3)).tolist()
        [3.0, 3.0, 3.0]
    """
    return int(np.prod([_lookup("axis_size", n)[1] for n in _names("axis_size", axis_name)]))


def pmean(x, axis_name, *, axis_index_groups=None):
    """The mean of ``x`` over the examples of the named vmap axis, as ``jax.lax.pmean``.

    Args:
        x: an array or a pytree of arrays.
        axis_name: the ``axis_name`` of an enclosing vmap, or a tuple of them.
        axis_index_groups: must be None.

    Returns:
        The means (integer inputs give floats, as JAX's).

    Example:
        >>> qb.vmap(lambda v: v - qb.lax.pmean(v, "i"), axis_name="i")(qb.array([1.0, 3.0])).tolist()
        [-1.0, 1.0]
    """
    n = axis_size(axis_name)
    return _tree.map(lambda s: s / n, psum(x, axis_name, axis_index_groups=axis_index_groups))


def axis_index(axis_name):
    """The index of the current example along the named vmap axis (an ``int32`` scalar), as
    ``jax.lax.axis_index``.

    Args:
        axis_name: the ``axis_name`` of an enclosing vmap, or a tuple of them (the index over
            their product, the first name the most significant).

    Returns:
        An int32 scalar, different in every example.

    Example:
        >>> qb.vmap(lambda v: v + qb.lax.axis_index("i"), axis_name="i")(qb.zeros(3, qb.int32)).tolist()
        [0, 1, 2]
    """
    names = _names("axis_index", axis_name)
    idx = None
    for n in names:
        spelling, size = _lookup("axis_index", n)
        i = _record(_op("axis_index", axis_name=spelling))
        idx = i if idx is None else idx * size + i
    return idx


def _moveaxis(x, src, dst):
    """``x`` with dim ``src`` moved to position ``dst``."""
    perm = [d for d in range(x.ndim) if d != src]
    perm.insert(dst, src)
    return x if perm == list(range(x.ndim)) else _o.transpose(x, perm)


def _gather(fn, x, name):
    spelling, size = _lookup(fn, name)
    return _record(_op("all_gather", axis_name=spelling, axis_size=size), x), size


def _axis_arg(fn, arg, axis, rank):
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise ArgumentTypeError(f"{fn}: {arg} must be an int, got {type(axis).__name__}")
    a = int(axis)
    if not -rank <= a < rank:
        raise InvalidArgumentError(f"{fn}: {arg}={a} is out of range for rank {rank}")
    return a + rank if a < 0 else a


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    """The values of ``x`` in every example of the named vmap axis, stacked (every example gets
    the stack), as ``jax.lax.all_gather``.

    Args:
        x: an array or a pytree of arrays.
        axis_name: the ``axis_name`` of an enclosing vmap (one name).
        axis_index_groups: must be None.
        axis: where the new axis of the examples goes.
        tiled: concatenate along ``axis`` instead of stacking on a new one.

    Returns:
        Per leaf: shape ``x.shape`` with the axis size inserted at ``axis`` (or, tiled, dim
        ``axis`` multiplied by it).

    Example:
        >>> qb.vmap(lambda v: qb.lax.all_gather(v, "i"), axis_name="i")(qb.array([1.0, 2.0]))[0].tolist()
        [1.0, 2.0]
    """
    _groups("all_gather", axis_index_groups)
    names = _names("all_gather", axis_name)
    if len(names) != 1:
        raise UnsupportedOperationError("all_gather: gathering over several axes at once is not supported (nest the calls)", op="all_gather")

    def one(v):
        v = _leaf("all_gather", v)
        a = _axis_arg("all_gather", "axis", axis, v.ndim + (0 if tiled else 1))
        g, size = _gather("all_gather", v, names[0])
        g = _moveaxis(g, 0, a)
        if tiled:
            if v.ndim == 0:
                raise ShapeError("all_gather: tiled=True needs an operand of rank >= 1, got a scalar")
            s = list(v.shape)
            s[a] *= size
            g = _o.reshape(g, tuple(s))
        return g

    return _tree.map(one, x)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """The sum of ``x`` over the named vmap axis, scattered: example ``i`` gets block ``i`` of
    it along ``scatter_dimension``, as ``jax.lax.psum_scatter``.

    Args:
        x: an array or a pytree of arrays; dim ``scatter_dimension`` equals the axis size
            (or, tiled, is a multiple of it).
        axis_name: the ``axis_name`` of an enclosing vmap (one name).
        scatter_dimension: the dim split over the examples.
        axis_index_groups: must be None.
        tiled: keep the split dim (as a block) instead of removing it.

    Returns:
        Per leaf: the example's block of the sum.

    Example:
        >>> f = qb.vmap(lambda v: qb.lax.psum_scatter(v, "i"), axis_name="i")
        >>> f(qb.array([[1.0, 2.0], [3.0, 4.0]])).tolist()
        [4.0, 6.0]
    """
    _groups("psum_scatter", axis_index_groups)
    names = _names("psum_scatter", axis_name)
    if len(names) != 1:
        raise UnsupportedOperationError("psum_scatter: several axes at once are not supported", op="psum_scatter")
    name = names[0]
    size = _lookup("psum_scatter", name)[1]

    def one(v):
        v = _leaf("psum_scatter", v)
        if v.ndim == 0:
            raise ShapeError("psum_scatter: the operand must have rank >= 1, got a scalar")
        d = _axis_arg("psum_scatter", "scatter_dimension", scatter_dimension, v.ndim)
        n = v.shape[d]
        if (tiled and n % size) or (not tiled and n != size):
            want = f"a multiple of the axis size {size}" if tiled else f"the axis size {size}"
            raise ShapeError(f"psum_scatter: dim {d} of the operand of shape {_shape_str(v.shape)} has extent {n}, not {want}")
        s = psum(v, name)
        i = axis_index(name)
        block = n // size
        starts = [0] * v.ndim
        starts[d] = i * block
        sizes = list(v.shape)
        sizes[d] = block
        r = _o.dynamic_slice(s, starts, sizes)
        return r if tiled else _o.squeeze(r, d)

    return _tree.map(one, x)


def _perm_table(fn, perm, size):
    try:
        pairs = [(int(s), int(d)) for s, d in perm]
    except (TypeError, ValueError):
        raise ArgumentTypeError(f"{fn}: perm must be a sequence of (source, destination) index pairs") from None
    src = [-1] * size
    seen = set()
    for s, d in pairs:
        if not (0 <= s < size and 0 <= d < size):
            raise InvalidArgumentError(f"{fn}: the pair ({s}, {d}) of perm is out of range for an axis of size {size}")
        if s in seen or src[d] != -1:
            raise InvalidArgumentError(f"{fn}: perm must name each source and each destination at most once, got {pairs}")
        seen.add(s)
        src[d] = s
    return src


def ppermute(x, axis_name, perm):
    """Sends each example's ``x`` to another example of the named vmap axis, as
    ``jax.lax.ppermute``: for each pair ``(source, destination)`` of ``perm``, example
    ``destination`` gets ``source``'s value; examples that receive nothing get zeros.

    Args:
        x: an array or a pytree of arrays.
        axis_name: the ``axis_name`` of an enclosing vmap (one name).
        perm: (source, destination) pairs, each source and destination at most once.

    Returns:
        The received values, with ``x``'s structure.

    Example:
        >>> f = qb.vmap(lambda v: qb.lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 0)]), axis_name="i")
        >>> f(qb.array([1.0, 2.0, 3.0])).tolist()
        [3.0, 1.0, 2.0]
    """
    names = _names("ppermute", axis_name)
    if len(names) != 1:
        raise UnsupportedOperationError("ppermute: several axes at once are not supported", op="ppermute")
    size = _lookup("ppermute", names[0])[1]
    table = _perm_table("ppermute", perm, size)

    def one(v):
        v = _leaf("ppermute", v)
        g, _ = _gather("ppermute", v, names[0])
        s = _o.asarray(np.array(table, np.int32))[axis_index(names[0])]
        got = g[_o.maximum(s, 0)]
        return _o.where(s >= 0, got, _o.zeros_like(got))

    return _tree.map(one, x)


def pshuffle(x, axis_name, perm):
    """Example ``i`` of the named vmap axis gets example ``perm[i]``'s ``x``, as
    ``jax.lax.pshuffle``.

    Args:
        x: an array or a pytree of arrays.
        axis_name: the ``axis_name`` of an enclosing vmap (one name).
        perm: a permutation of ``range(axis size)``.

    Returns:
        The shuffled values.

    Example:
        >>> qb.vmap(lambda v: qb.lax.pshuffle(v, "i", [2, 0, 1]), axis_name="i")(qb.array([1.0, 2.0, 3.0])).tolist()
        [3.0, 1.0, 2.0]
    """
    names = _names("pshuffle", axis_name)
    size = _lookup("pshuffle", names[0])[1] if len(names) == 1 else None
    try:
        p = [int(i) for i in perm]
    except (TypeError, ValueError):
        raise ArgumentTypeError("pshuffle: perm must be a sequence of ints") from None
    if size is not None and sorted(p) != list(range(size)):
        raise InvalidArgumentError(f"pshuffle: perm must be a permutation of range({size}), got {p}")
    return ppermute(x, axis_name, [(s, d) for d, s in enumerate(p)])


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False):
    """Each example of the named vmap axis splits ``x`` along ``split_axis`` into one block per
    example and sends block ``j`` to example ``j``; each concatenates what it receives along
    ``concat_axis``, as ``jax.lax.all_to_all``.

    Args:
        x: an array or a pytree of arrays; dim ``split_axis`` equals the axis size (or,
            tiled, is a multiple of it).
        axis_name: the ``axis_name`` of an enclosing vmap (one name).
        split_axis: the dim split into blocks.
        concat_axis: where the received blocks go (untiled: a new dim there, the split dim
            removed; tiled: concatenated along that dim).
        axis_index_groups: must be None.
        tiled: blocks instead of single slices.

    Returns:
        The exchanged values.

    Example:
        >>> f = qb.vmap(lambda v: qb.lax.all_to_all(v, "i", 0, 0), axis_name="i")
        >>> f(qb.array([[1.0, 2.0], [3.0, 4.0]])).tolist()
        [[1.0, 3.0], [2.0, 4.0]]
    """
    _groups("all_to_all", axis_index_groups)
    names = _names("all_to_all", axis_name)
    if len(names) != 1:
        raise UnsupportedOperationError("all_to_all: several axes at once are not supported", op="all_to_all")
    size = _lookup("all_to_all", names[0])[1]

    def one(v):
        v = _leaf("all_to_all", v)
        if v.ndim == 0:
            raise ShapeError("all_to_all: the operand must have rank >= 1, got a scalar")
        sa = _axis_arg("all_to_all", "split_axis", split_axis, v.ndim)
        n = v.shape[sa]
        if (tiled and n % size) or (not tiled and n != size):
            want = f"a multiple of the axis size {size}" if tiled else f"the axis size {size}"
            raise ShapeError(f"all_to_all: dim {sa} of the operand of shape {_shape_str(v.shape)} has extent {n}, not {want}")
        block = n // size
        g, _ = _gather("all_to_all", v, names[0])  # [size (senders), ...x.shape]
        i = axis_index(names[0])
        starts = [0] * g.ndim
        starts[sa + 1] = i * block
        sizes = list(g.shape)
        sizes[sa + 1] = block
        mine = _o.dynamic_slice(g, starts, sizes)  # [senders, ..., block at sa + 1, ...]
        if tiled:
            ca = _axis_arg("all_to_all", "concat_axis", concat_axis, v.ndim)
            r = _moveaxis(mine, 0, ca)  # senders just before the (block) dim at ca
            s = list(v.shape)
            s[sa] = block
            s[ca] *= size
            return _o.reshape(r, tuple(s))
        r = _o.squeeze(mine, sa + 1)  # [senders, ...x.shape without sa]
        ca = _axis_arg("all_to_all", "concat_axis", concat_axis, v.ndim)
        return _moveaxis(r, 0, ca)

    return _tree.map(one, x)
