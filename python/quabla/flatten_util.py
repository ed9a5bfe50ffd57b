"""``qb.flatten_util``: ``jax.flatten_util``'s ``ravel_pytree``, which flattens a pytree of
arrays into one 1-D array and gives back the function that rebuilds the pytree.

The flat array has the dtype the leaves' dtypes promote to on JAX's (x64) lattice (Python
scalars count as their default dtypes, float64/int64/bool; float32 with float64 gives
float64). The returned ``unravel`` splits a 1-D array of the same length back into the
leaves' shapes; when the leaves had more than one dtype it casts each piece back to its
leaf's dtype (and requires the flat array to have the promoted dtype), and when they all
shared one dtype it keeps the dtype of the array it is given (JAX's dtype-polymorphic
unravel). Both directions are Quabla ops, so they work eagerly and under ``jit``, ``grad``
and ``vmap``.

Departure from JAX: a pytree without leaves has no flat array here (JAX returns a float32
array of size 0, and Quabla has no zero-size arrays): ``ravel_pytree`` raises
UnsupportedOperationError for it.

Example:
    >>> from quabla.flatten_util import ravel_pytree
    >>> flat, unravel = ravel_pytree({"b": qb.ones(2), "a": 3.0})
    >>> flat.tolist()
    [3.0, 1.0, 1.0]
    >>> unravel(flat * 2)["b"].tolist()
    [2.0, 2.0]
"""

import math

from . import _ops as _o
from . import tree as _tree
from ._math import _join
from ._ops import _shape_str, _to_array
from .errors import ArgumentTypeError, DTypeError, ShapeError, UnsupportedOperationError

__all__ = ["ravel_pytree"]


class _Unravel:
    """``unravel(flat) -> pytree``: the inverse of :func:`ravel_pytree` for one structure
    (hashable and comparable, as JAX's ``HashablePartial``)."""

    __slots__ = ("treedef", "sizes", "shapes", "dtypes", "to_dtype")

    def __init__(self, treedef, sizes, shapes, dtypes, to_dtype):
        self.treedef = treedef
        self.sizes = sizes
        self.shapes = shapes
        self.dtypes = dtypes  # None: every leaf had to_dtype (dtype-polymorphic)
        self.to_dtype = to_dtype

    def _key(self):
        return (self.treedef, self.sizes, self.shapes, None if self.dtypes is None else tuple(d.name for d in self.dtypes))

    def __eq__(self, other):
        return type(other) is _Unravel and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return f"unravel_pytree({self.treedef!r})"

    def __call__(self, flat):
        try:
            flat = _to_array(flat)
        except (ArgumentTypeError, ShapeError) as e:
            raise ArgumentTypeError(f"unravel_pytree: flat must be a 1-D array, got {type(flat).__name__} ({e})") from None
        total = sum(self.sizes)
        if flat.ndim != 1 or flat.shape[0] != total:
            raise ShapeError(f"unravel_pytree: flat must be a 1-D array of {total} elements (the raveled pytree {self.treedef!r}), got shape {_shape_str(flat.shape)}")
        if self.dtypes is not None and flat.dtype != self.to_dtype:
            raise DTypeError(f"unravel_pytree: flat has dtype {flat.dtype.name}, but the pytree was raveled to {self.to_dtype.name} (its leaves have mixed dtypes)")
        if len(self.sizes) == 1:
            chunks = [flat]
        else:
            bounds, acc = [], 0
            for s in self.sizes[:-1]:
                acc += s
                bounds.append(acc)
            chunks = _o.split(flat, bounds)
        leaves = []
        for i, (c, shape) in enumerate(zip(chunks, self.shapes)):
            c = _o.reshape(c, shape)
            if self.dtypes is not None and self.dtypes[i] != c.dtype:
                c = _o.astype(c, self.dtypes[i])
            leaves.append(c)
        return _tree.unflatten(self.treedef, leaves)


def ravel_pytree(pytree):
    """Flattens the leaves of ``pytree`` into one 1-D array (``jax.flatten_util.ravel_pytree``).

    Args:
        pytree: a pytree whose leaves are arrays or Python/NumPy numbers (at least one leaf).

    Returns:
        ``(flat, unravel)``: the leaves raveled and concatenated in ``qb.tree_util`` order,
        in their promoted dtype, and a function mapping a 1-D array of that length back to a
        pytree of the same structure, shapes and (for mixed-dtype leaves) dtypes.

    Raises:
        UnsupportedOperationError: for a pytree without leaves (JAX returns a zero-size
            array, which Quabla does not have).

    Example:
        >>> from quabla.flatten_util import ravel_pytree
        >>> flat, unravel = ravel_pytree([qb.ones((2, 2)), qb.array([5], dtype=qb.int32)])
        >>> flat.dtype, flat.shape, unravel(flat)[1].dtype
        (quabla.float64, (5,), quabla.int32)
    """
    leaves, treedef = _tree.flatten(pytree)
    if not leaves:
        raise UnsupportedOperationError(
            f"ravel_pytree: the pytree {treedef!r} has no leaves; JAX returns an empty float32 array, and Quabla has no zero-size arrays"
        )
    arrays = []
    for i, leaf in enumerate(leaves):
        try:
            arrays.append(_to_array(leaf))
        except (ArgumentTypeError, ShapeError) as e:
            raise ArgumentTypeError(f"ravel_pytree: leaf {i} of the pytree {treedef!r} is not an array or a number ({type(leaf).__name__}): {e}") from None
    dtypes = tuple(a.dtype for a in arrays)
    to_dtype = dtypes[0]
    for d in dtypes[1:]:
        to_dtype = _join(to_dtype, d)
    mixed = any(d != to_dtype for d in dtypes)
    sizes = tuple(math.prod(a.shape) for a in arrays)
    shapes = tuple(tuple(a.shape) for a in arrays)
    parts = []
    for a in arrays:
        if a.dtype != to_dtype:
            a = _o.astype(a, to_dtype)
        parts.append(_o.reshape(a, (-1,)))
    flat = parts[0] if len(parts) == 1 else _o.concatenate(parts, axis=0)
    return flat, _Unravel(treedef, sizes, shapes, dtypes if mixed else None, to_dtype)
