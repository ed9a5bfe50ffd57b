"""The BCOO (batched coordinate) sparse array and its operations, built from Quabla's gathers
(``take``) and scatter-adds (``x.at[rows].add``): every operation is a fixed sequence of
array ops over all stored elements at once, so it traces under ``jit``, differentiates with
respect to ``data`` (and dense operands) and batches under ``vmap``.

Layout, as JAX's: ``shape = batch + sparse + dense``; ``data`` has shape ``batch + (nse,) +
dense`` and ``indices`` ``batch + (nse, n_sparse)`` (either may have size 1 in a batch
dimension, broadcast). An index outside ``[0, size)`` of its sparse dimension (after one wrap
of negative values, as ``x.at[]`` does) marks padding: it contributes nothing.
"""

import math
import warnings

import numpy as np

from ... import _ops as _o
from ... import tree as _tree
from ..._conv import cumsum as _cumsum
from ..._indexing import take_along_axis as _take_along_axis
from ..._numpy import argsort as _argsort
from ... import lax as _lax
from ..._trace import Tracer, is_array
from ...dtypes import int64, bool_
from ...dtypes import dtype as _dtype
from ...errors import (ArgumentTypeError, BatchingError, ConcretizationTypeError, DTypeError, InvalidArgumentError, ShapeError,
                       UnsupportedOperationError)


class SparseEfficiencyError(InvalidArgumentError):
    """A layout change that would store many explicit zeros (``jax.experimental.sparse.SparseEfficiencyError``)."""


class SparseEfficiencyWarning(UserWarning):
    """The warning form of :class:`SparseEfficiencyError`."""


# ---------------------------------------------------------------------------------------------
# Small helpers


def _prod(xs):
    return int(math.prod(int(x) for x in xs))


def _arr(name, what, x):
    """``x`` as a Quabla array, or an ArgumentTypeError naming ``name`` and ``what``."""
    if is_array(x):
        return x
    try:
        return _o._to_array(x)
    except Exception as e:  # noqa: BLE001 - any failure to convert is the caller's bad argument
        raise ArgumentTypeError(f"{name}: {what} must be an array, got {type(x).__name__}") from e


def _static_int(name, what, v, lo=None):
    if isinstance(v, Tracer):
        raise ConcretizationTypeError(f"{name}: {what} must be a concrete Python int (it decides a shape), got a traced value")
    v = _o._int_arg(name, what, v)
    if lo is not None and v < lo:
        raise InvalidArgumentError(f"{name}: {what} must be >= {lo}, got {v}")
    return v


def _shape_tuple(name, shape):
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
        raise ArgumentTypeError(f"{name}: shape must be a sequence of ints, got {type(shape).__name__}")
    return _o._shape_arg(name, shape)


def _index_dtype(name, d):
    try:
        dt = _dtype(d)
    except Exception as e:  # noqa: BLE001
        raise DTypeError(f"{name}: index_dtype must be an integer dtype, got {d!r}") from e
    if dt.kind not in "iu":
        raise DTypeError(f"{name}: index_dtype must be an integer dtype, got {dt.name}")
    return dt


def _check_bcoo(name, mat, what="mat"):
    if not isinstance(mat, BCOO):
        raise ArgumentTypeError(f"{name}: {what} must be a BCOO array, got {type(mat).__name__}")
    return mat


def _full_bufs(mat):
    """``mat``'s data and indices with their batch dimensions broadcast to the full batch shape."""
    nb = mat.n_batch
    batch = tuple(mat.shape[:nb])
    data, idx = mat.data, mat.indices
    if tuple(data.shape[:nb]) != batch:
        data = _o.broadcast_to(data, batch + tuple(data.shape[nb:]))
    if tuple(idx.shape[:nb]) != batch:
        idx = _o.broadcast_to(idx, batch + tuple(idx.shape[nb:]))
    return data, idx


def _wrap(idx, sizes):
    """int64 indices with negative values wrapped once, and the mask of in-bounds rows (all of
    the last axis's coordinates inside ``sizes``)."""
    i = _o.astype(idx, int64)
    dims = _o.array(np.asarray(sizes, np.int64))
    i = _o.where(i < 0, i + dims, i)
    valid = _o.all((i >= 0) & (i < dims), axis=-1)
    return i, valid


def _linear(i, sizes, cols=None):
    """The row-major position of the coordinates ``i[..., cols]`` in an array of ``sizes``
    (int64; 0 when there are none)."""
    cols = list(range(len(sizes))) if cols is None else list(cols)
    out = None
    stride = 1
    for c, s in reversed(list(zip(cols, [sizes[c] for c in cols]))):
        term = i[..., c] * stride if stride != 1 else i[..., c]
        out = term if out is None else out + term
        stride *= int(s)
    if out is None:
        return _o.zeros(tuple(i.shape[:-1]), int64)
    return out


def _unravel(lin, sizes):
    """Coordinates (int64, last axis) of the row-major positions ``lin`` in ``sizes``."""
    cols = []
    stride = _prod(sizes)
    for s in sizes:
        stride //= int(s)
        cols.append((lin // stride) % int(s) if stride != 1 else lin % int(s))
    return _o.stack(cols, axis=-1)


def _batch_iota(bt, n):
    """An int64 (bt, 1) column 0..bt-1 (the flat batch position of each row)."""
    return _o.array(np.arange(bt, dtype=np.int64).reshape(bt, 1))


def _compact(mask, size):
    """The positions of the first ``size`` true entries of each row of the 2-D bool ``mask``
    (rows, n), in order, padded with ``n``: an int64 (rows, size) array and its validity mask.
    One cumulative sum and one scatter."""
    rows, n = mask.shape
    c = _cumsum(_o.astype(mask, int64), axis=1) - 1
    b = _batch_iota(rows, n)
    slot = _o.where(mask & (c < size), b * size + c, rows * size)
    src = _o.broadcast_to(_o.arange(n, dtype=int64), (rows, n))
    flat = _o.full((rows * size,), n, int64).at[_o.ravel(slot)].set(_o.ravel(src), mode="drop")
    pos = _o.reshape(flat, (rows, size))
    return pos, pos < n


def _fill_indices(coords, valid, sizes, dtype):
    """Coordinates where ``valid``, else the sparse shape (JAX's padding), cast to ``dtype``."""
    fill = _o.array(np.asarray(sizes, np.int64))
    return _o.astype(_o.where(valid[..., None], coords, fill), dtype)


def _concrete_max(name, x, hint):
    if isinstance(x, Tracer):
        raise ConcretizationTypeError(f"{name}: nse must be a concrete int under jit and other transformations: {hint}")
    return int(np.asarray(x.numpy()).max())


def _is_sparse(x):
    return isinstance(x, JAXSparse)


# ---------------------------------------------------------------------------------------------
# Base class and BCOO


class JAXSparse:
    """Base class of Quabla's sparse arrays (``jax.experimental.sparse.JAXSparse``).

    Example:
        >>> import quabla.experimental.sparse as qs
        >>> isinstance(qs.BCOO.fromdense(qb.eye(2)), qs.JAXSparse)
        True
    """

    __hash__ = None
    # NumPy arrays and scalars defer to the sparse operators (x @ M, 2 * M).
    __array_priority__ = 2000
    __array_ufunc__ = None

    # Dims of ``indices`` after its batch dims: ``(nse, n_sparse)`` for BCOO, ``(nse,)`` for BCSR.
    _INDEX_TAIL = 2

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def nse(self):
        return int(self.indices.shape[-self._INDEX_TAIL])

    @property
    def n_batch(self):
        nd = getattr(self.indices, "ndim", None)
        return nd - self._INDEX_TAIL if nd is not None else self.__dict__.get("_nb", 0)

    @property
    def n_dense(self):
        return len(self.shape) - self.n_batch - self.n_sparse

    @property
    def size(self):
        return _prod(self.shape)

    @property
    def ndim(self):
        return len(self.shape)

    def __len__(self):
        return self.shape[0]

    @property
    def T(self):
        return self.transpose()

    def block_until_ready(self):
        return self


def _derive_shape(shape, nb_old, data, indices, nb_new):
    """The shape of a sparse array rebuilt from leaves with ``nb_new`` batch dimensions where
    its structure had ``nb_old``: under ``vmap`` the leaves lose (or, stacked, gain) one batch
    dimension, and the shape follows them."""
    if nb_new == nb_old:
        return shape
    if nb_new < 0:
        raise BatchingError(f"vmap over a sparse array of shape {shape} with n_batch={nb_old}: in_axes/out_axes of a sparse array must name one of its batch dimensions")
    lb = []
    for k in range(nb_new):
        d = int(data.shape[k]) if data.ndim > k else 1
        lb.append(max(d, int(indices.shape[k])))
    ob = list(shape[:nb_old])
    rest = list(shape[nb_old:])
    fits = lambda a, b: all(x in (1, y) for x, y in zip(a, b))  # noqa: E731
    exact = lambda a, b: list(a) == list(b)  # noqa: E731
    if nb_new == nb_old - 1:
        cands = [ob[:k] + ob[k + 1:] for k in range(nb_old)]
        for test in (exact, fits):
            for c in cands:
                if test(lb, c):
                    return tuple(c + rest)
        return tuple(lb + rest)
    if nb_new == nb_old + 1:
        for test in (exact, fits):
            for k in range(nb_new):
                if test(lb[:k] + lb[k + 1:], ob):
                    return tuple(ob[:k] + [lb[k]] + ob[k:] + rest)
        return tuple(lb + rest)
    return shape


class BCOO(JAXSparse):
    """A batched-coordinate sparse array (``jax.experimental.sparse.BCOO``).

    Args:
        args: ``(data, indices)``: ``data`` of shape ``batch + (nse,) + dense`` and integer
            ``indices`` of shape ``batch + (nse, n_sparse)``; duplicate indices add up.
        shape: the array's shape, ``batch + sparse + dense``.
        indices_sorted, unique_indices: promises about ``indices`` (kept, as JAX's flags).

    Returns:
        The sparse array; a pytree of ``(data, indices)``, so it passes through ``jit``,
        ``grad`` (with respect to ``data``) and ``vmap`` (over its batch dimensions).

    Example:
        >>> import quabla.experimental.sparse as qs
        >>> M = qs.BCOO((qb.array([1.0, 2.0]), qb.array([[0, 1], [1, 0]])), shape=(2, 2))
        >>> M.todense().tolist()
        [[0.0, 1.0], [2.0, 0.0]]
    """

    def __init__(self, args, *, shape, indices_sorted=False, unique_indices=False):
        if not isinstance(args, (tuple, list)) or len(args) != 2:
            raise ArgumentTypeError(f"BCOO: args must be a (data, indices) pair, got {type(args).__name__}")
        data = _arr("BCOO", "data", args[0])
        indices = _arr("BCOO", "indices", args[1])
        shape = _shape_tuple("BCOO", shape)
        if not indices.dtype.is_int:
            raise DTypeError(f"BCOO: indices must be integers, got {indices.dtype.name} of shape {tuple(indices.shape)}")
        if indices.ndim < 2:
            raise ShapeError(f"BCOO: indices must have shape batch + (nse, n_sparse), got shape {tuple(indices.shape)}")
        nb = indices.ndim - 2
        nse, ns = int(indices.shape[-2]), int(indices.shape[-1])
        nd = len(shape) - nb - ns
        if nd < 0:
            raise ShapeError(f"BCOO: indices of shape {tuple(indices.shape)} (n_batch={nb}, n_sparse={ns}) do not fit shape {shape}")
        if any(i not in (1, s) for i, s in zip(indices.shape[:nb], shape[:nb])):
            raise ShapeError(f"BCOO: indices batch dimensions {tuple(indices.shape[:nb])} do not fit shape {shape}")
        if data.ndim != nb + 1 + nd or any(d not in (1, s) for d, s in zip(data.shape[:nb], shape[:nb])) or \
                tuple(data.shape[nb:]) != (nse,) + tuple(shape[nb + ns:]):
            raise ShapeError(f"BCOO: data of shape {tuple(data.shape)} does not fit nse={nse}, n_batch={nb}, n_dense={nd} and shape {shape} "
                             f"(expected batch + {(nse,) + tuple(shape[nb + ns:])})")
        self.data, self.indices, self.shape = data, indices, shape
        self.indices_sorted, self.unique_indices = bool(indices_sorted), bool(unique_indices)

    # -- structure
    @property
    def n_sparse(self):
        return int(self.indices.shape[-1])

    def __repr__(self):
        try:
            extra = f", nse={self.nse}"
            if self.n_batch:
                extra += f", n_batch={self.n_batch}"
            if self.n_dense:
                extra += f", n_dense={self.n_dense}"
            r = f"BCOO({self.dtype.name}{list(self.shape)}{extra})"
        except Exception:  # noqa: BLE001 - a repr never raises
            r = "BCOO(<invalid>)"
        return f"Tracer[{r}]" if isinstance(self.data, Tracer) else r

    def tree_flatten(self):
        return (self.data, self.indices), (self.shape, self.n_batch, self.indices_sorted, self.unique_indices)

    @classmethod
    def tree_unflatten(cls, aux, children):
        shape, nb, srt, unq = aux
        data, indices = children
        obj = object.__new__(cls)
        if is_array(indices) and is_array(data):
            shape = _derive_shape(shape, nb, data, indices, indices.ndim - 2)
        obj.data, obj.indices, obj.shape, obj._nb = data, indices, tuple(shape), nb
        obj.indices_sorted, obj.unique_indices = srt, unq
        return obj

    # -- conversions
    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype="int32", n_dense=0, n_batch=0):
        """``bcoo_fromdense`` as a constructor (``BCOO.fromdense``).

        Example:
            >>> import quabla.experimental.sparse as qs
            >>> qs.BCOO.fromdense(qb.array([[0.0, 2.0], [3.0, 0.0]])).nse
            2
        """
        return bcoo_fromdense(mat, nse=nse, n_batch=n_batch, n_dense=n_dense, index_dtype=index_dtype)

    @classmethod
    def from_scipy_sparse(cls, mat, *, index_dtype=None, n_dense=0, n_batch=0):
        """A BCOO from a ``scipy.sparse`` matrix (its COO form; n_batch = n_dense = 0).

        Example:
            >>> import scipy.sparse, quabla.experimental.sparse as qs
            >>> qs.BCOO.from_scipy_sparse(scipy.sparse.eye(2)).todense().tolist()
            [[1.0, 0.0], [0.0, 1.0]]
        """
        if n_dense != 0 or n_batch != 0:
            raise UnsupportedOperationError("BCOO.from_scipy_sparse: only n_dense=0 and n_batch=0", op="BCOO.from_scipy_sparse")
        if not hasattr(mat, "tocoo"):
            raise ArgumentTypeError(f"BCOO.from_scipy_sparse: mat must be a scipy.sparse matrix, got {type(mat).__name__}")
        m = mat.tocoo()
        idt = _index_dtype("BCOO.from_scipy_sparse", index_dtype or "int32")
        idx = np.stack([np.asarray(m.row), np.asarray(m.col)], axis=1).astype(idt.np)
        return cls((_o.array(np.asarray(m.data)), _o.array(idx)), shape=m.shape)

    def todense(self):
        """The dense array (``bcoo_todense``).

        Example:
            >>> import quabla.experimental.sparse as qs
            >>> qs.BCOO.fromdense(qb.array([0.0, 5.0])).todense().tolist()
            [0.0, 5.0]
        """
        return bcoo_todense(self)

    def sum_duplicates(self, nse=None, remove_zeros=True):
        """Duplicates summed, indices sorted, and (``remove_zeros``) explicit zeros dropped.

        Example:
            >>> import quabla.experimental.sparse as qs
            >>> M = qs.BCOO((qb.array([1.0, 2.0]), qb.array([[0], [0]])), shape=(3,))
            >>> M.sum_duplicates().data.tolist()
            [3.0]
        """
        if remove_zeros:
            return bcoo_sum_duplicates(_eliminate_zeros(self), nse=nse)
        return bcoo_sum_duplicates(self, nse=nse)

    def sort_indices(self):
        """Indices sorted lexicographically within each batch (``bcoo_sort_indices``).

        Example:
            >>> import quabla.experimental.sparse as qs
            >>> M = qs.BCOO((qb.array([1.0, 2.0]), qb.array([[2], [0]])), shape=(3,))
            >>> M.sort_indices().indices.tolist()
            [[0], [2]]
        """
        return bcoo_sort_indices(self)

    def transpose(self, axes=None):
        """Axes permuted (reversed by default); batch, sparse and dense axes stay in their group.

        Example:
            >>> import quabla.experimental.sparse as qs
            >>> qs.BCOO.fromdense(qb.array([[0.0, 1.0], [0.0, 0.0]])).T.todense().tolist()
            [[0.0, 0.0], [1.0, 0.0]]
        """
        perm = tuple(range(self.ndim))[::-1] if axes is None else axes
        return bcoo_transpose(self, permutation=perm)

    def reshape(self, *args, **kwargs):
        """A new shape (as ``jnp.reshape``; -1 allowed); batch, sparse and dense sizes may not mix.

        Example:
            >>> import quabla.experimental.sparse as qs
            >>> qs.BCOO.fromdense(qb.array([[0.0, 1.0], [2.0, 0.0]])).reshape(4).todense().tolist()
            [0.0, 1.0, 2.0, 0.0]
        """
        if kwargs.keys() - {"shape", "newshape", "order"}:
            raise ArgumentTypeError(f"BCOO.reshape: unexpected keyword arguments {sorted(kwargs.keys() - {'shape', 'newshape', 'order'})}")
        if kwargs.get("order", "C") != "C":
            raise UnsupportedOperationError("BCOO.reshape: only order='C'", op="BCOO.reshape")
        shape = kwargs.get("shape", kwargs.get("newshape"))
        if shape is None:
            shape = args[0] if len(args) == 1 else args
        shape = (shape,) if isinstance(shape, (int, np.integer)) else shape
        shape = _resolve_minus_one("BCOO.reshape", shape, self.size)
        return bcoo_reshape(self, new_sizes=shape)

    def astype(self, dtype):
        """The data cast to ``dtype`` (indices unchanged).

        Example:
            >>> import quabla.experimental.sparse as qs
            >>> qs.BCOO.fromdense(qb.array([0.0, 2.0])).astype("int32").dtype.name
            'int32'
        """
        return BCOO((_o.astype(self.data, dtype), self.indices), shape=self.shape, indices_sorted=self.indices_sorted,
                    unique_indices=self.unique_indices)

    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        """The sum over ``axis`` (all by default): a BCOO, or a dense scalar for a full sum (as JAX).

        Example:
            >>> import quabla.experimental.sparse as qs
            >>> qs.BCOO.fromdense(qb.array([[1.0, 0.0], [2.0, 3.0]])).sum(0).todense().tolist()
            [3.0, 3.0]
        """
        return _sum(self, axis, dtype, out, keepdims)

    def update_layout(self, *, n_batch=None, n_dense=None, on_inefficient="error"):
        """The same array with ``n_batch`` batch and ``n_dense`` dense dimensions (``bcoo_update_layout``).

        Example:
            >>> import quabla.experimental.sparse as qs
            >>> M = qs.BCOO.fromdense(qb.array([[1.0, 0.0], [2.0, 3.0]]), n_batch=1)
            >>> M.update_layout(n_batch=0).todense().tolist()
            [[1.0, 0.0], [2.0, 3.0]]
        """
        return bcoo_update_layout(self, n_batch=n_batch, n_dense=n_dense, on_inefficient=on_inefficient)

    # -- operators
    def __matmul__(self, other):
        return _matmul(self, other)

    def __rmatmul__(self, other):
        return _matmul(other, self)

    def __mul__(self, other):
        return _multiply(self, other)

    def __rmul__(self, other):
        return _multiply(other, self)

    def __truediv__(self, other):
        return _divide(self, other)

    def __rtruediv__(self, other):
        return _divide(other, self)

    def __add__(self, other):
        return _add(self, other)

    def __radd__(self, other):
        return _add(other, self)

    def __sub__(self, other):
        return _subtract(self, other)

    def __rsub__(self, other):
        return _subtract(other, self)

    def __neg__(self):
        return _unary_linear(self, _o.negative)

    def __pos__(self):
        return self

    def __abs__(self):
        return _unary_nonlinear(self, _o.abs)

    def __pow__(self, y):
        if not isinstance(y, (int, np.integer)) or isinstance(y, bool) or y <= 0:
            raise UnsupportedOperationError(f"BCOO.__pow__: only positive integer powers keep zeros, got {y!r}", op="BCOO.__pow__")
        return _unary_nonlinear(self, lambda d: _o.power(d, int(y)))


_tree.register_pytree_node(BCOO, lambda m: m.tree_flatten(), BCOO.tree_unflatten)


def _resolve_minus_one(name, shape, size):
    if isinstance(shape, (str, bytes)) or not isinstance(shape, (tuple, list)) or \
            not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in shape):
        raise ArgumentTypeError(f"{name}: shape must be an int or a sequence of ints, got {type(shape).__name__}")
    shape = tuple(int(s) for s in shape)
    if shape.count(-1) > 1:
        raise ShapeError(f"{name}: at most one -1 in shape {shape}")
    if -1 in shape:
        known = _prod(s for s in shape if s != -1)
        if known <= 0 or size % known:
            raise ShapeError(f"{name}: cannot reshape {size} elements into {shape}")
        shape = tuple(size // known if s == -1 else s for s in shape)
    return shape


# ---------------------------------------------------------------------------------------------
# todense / fromdense / extract


def bcoo_todense(mat):
    """The dense array of a BCOO (``jax.experimental.sparse.bcoo_todense``): one scatter-add of
    the stored elements; padding (out-of-bounds indices) is dropped.

    Args:
        mat: a BCOO array.

    Returns:
        Array of ``mat.shape`` and ``mat.dtype``.

    Example:
        >>> import quabla.experimental.sparse as qs
        >>> M = qs.BCOO((qb.array([1.0, 2.0, 3.0]), qb.array([[0], [2], [0]])), shape=(3,))
        >>> qs.bcoo_todense(M).tolist()
        [4.0, 0.0, 2.0]
    """
    _check_bcoo("bcoo_todense", mat)
    nb, ns = mat.n_batch, mat.n_sparse
    data, idx = _full_bufs(mat)
    batch, sparse, dense = mat.shape[:nb], mat.shape[nb:nb + ns], mat.shape[nb + ns:]
    bt, s, nse = _prod(batch), _prod(sparse), mat.nse
    i, valid = _wrap(idx, sparse)
    lin = _o.reshape(_linear(i, sparse), (bt, nse))
    rows = _o.where(_o.reshape(valid, (bt, nse)), _batch_iota(bt, nse) * s + lin, bt * s)
    vals = _o.reshape(data, (bt * nse,) + tuple(dense))
    out = _o.zeros((bt * s,) + tuple(dense), mat.dtype).at[_o.ravel(rows)].add(vals, mode="drop")
    return _o.reshape(out, mat.shape)


def bcoo_fromdense(mat, *, nse=None, n_batch=0, n_dense=0, index_dtype="int32"):
    """A BCOO holding the nonzero entries of a dense array (``jax.experimental.sparse.bcoo_fromdense``),
    in row-major order within each batch, padded to ``nse`` with zeros at out-of-bounds indices.

    Args:
        mat: dense array.
        nse: stored elements per batch; None counts them (the largest count over the batches),
            which needs a concrete ``mat`` (a ConcretizationTypeError under ``jit``). Quabla
            arrays cannot be empty, so an all-zero ``mat`` gets nse=1 (JAX: 0).
        n_batch: leading batch dimensions; n_dense: trailing dense dimensions (at least one
            sparse dimension must remain: a Quabla limit).
        index_dtype: dtype of the indices (int32).

    Returns:
        A BCOO with ``indices_sorted`` and ``unique_indices`` set.

    Example:
        >>> import quabla.experimental.sparse as qs
        >>> M = qs.bcoo_fromdense(qb.array([[0.0, 2.0], [3.0, 0.0]]))
        >>> M.data.tolist(), M.indices.tolist()
        ([2.0, 3.0], [[0, 1], [1, 0]])
    """
    name = "bcoo_fromdense"
    if _is_sparse(mat):
        raise ArgumentTypeError(f"{name}: mat must be a dense array, got {type(mat).__name__}")
    x = _arr(name, "mat", mat)
    nb = _static_int(name, "n_batch", n_batch, 0)
    nd = _static_int(name, "n_dense", n_dense, 0)
    idt = _index_dtype(name, index_dtype)
    ns = x.ndim - nb - nd
    if ns < 1:
        raise ShapeError(f"{name}: n_batch={nb} and n_dense={nd} leave no sparse dimension for mat of shape {tuple(x.shape)} "
                         "(Quabla needs n_sparse >= 1: arrays cannot have a zero extent)")
    batch, sparse, dense = tuple(x.shape[:nb]), tuple(x.shape[nb:nb + ns]), tuple(x.shape[nb + ns:])
    bt, s = _prod(batch), _prod(sparse)
    mask = x != 0 if not x.dtype.is_bool else x
    if nd:
        mask = _o.any(mask, axis=tuple(range(x.ndim - nd, x.ndim)))
    mask = _o.reshape(mask, (bt, s))
    if nse is None:
        n = _concrete_max(name, _o.sum(_o.astype(mask, int64), axis=1), "pass nse")
        nse = max(n, 1)
    else:
        nse = _static_int(name, "nse", nse, 1)
    pos, valid = _compact(mask, nse)
    coords = _unravel(_o.minimum(pos, s - 1), sparse)
    indices = _fill_indices(coords, valid, sparse, idt)
    rows = _batch_iota(bt, nse) * s + _o.minimum(pos, s - 1)
    flat = _o.reshape(x, (bt * s,) + dense)
    vals = _o.take(flat, _o.ravel(rows), axis=0)
    vmask = _o.reshape(_o.ravel(valid), (bt * nse,) + (1,) * nd)
    vals = _o.where(vmask, vals, _o.zeros((), x.dtype))
    data = _o.reshape(vals, batch + (nse,) + dense)
    indices = _o.reshape(indices, batch + (nse, ns))
    return BCOO((data, indices), shape=tuple(x.shape), indices_sorted=True, unique_indices=True)


def _first_occurrence(lin, bt, nse):
    """For (bt, nse) int64 linear indices: True where an entry repeats an earlier one of its row."""
    order = _argsort(lin, axis=1)
    slin = _tal(lin, order)
    dup_sorted = _o.concatenate([_o.zeros((bt, 1), bool_), slin[:, 1:] == slin[:, :-1]], axis=1)
    pos = _batch_iota(bt, nse) * nse + order
    return _o.reshape(_o.zeros((bt * nse,), bool_).at[_o.ravel(pos)].set(_o.ravel(dup_sorted)), (bt, nse))


def _tal(x, order):
    return _take_along_axis(x, order, axis=1)


def _gather_at(arr, mat_shape, nb, ns, i, valid):
    """``arr`` (of ``mat_shape``) at the full-batch int64 indices ``i`` (batch + (nse, ns)):
    data of shape batch + (nse,) + dense, 0 where not ``valid``."""
    batch, sparse, dense = tuple(mat_shape[:nb]), tuple(mat_shape[nb:nb + ns]), tuple(mat_shape[nb + ns:])
    bt, s = _prod(batch), _prod(sparse)
    nse = int(i.shape[-2])
    lin = _o.reshape(_linear(i, sparse), (bt, nse))
    v2 = _o.reshape(valid, (bt, nse))
    rows = _o.where(v2, _batch_iota(bt, nse) * s + lin, 0)
    vals = _o.take(_o.reshape(arr, (bt * s,) + dense), _o.ravel(rows), axis=0)
    vals = _o.where(_o.reshape(_o.ravel(v2), (bt * nse,) + (1,) * len(dense)), vals, _o.zeros((), vals.dtype))
    return _o.reshape(vals, batch + (nse,) + dense)


def bcoo_extract(sparr, arr, *, assume_unique=None):
    """The entries of the dense ``arr`` at ``sparr``'s indices, as a BCOO with ``sparr``'s
    sparsity pattern (``jax.experimental.sparse.bcoo_extract``).

    Args:
        sparr: BCOO whose indices are used.
        arr: dense array of ``sparr.shape``.
        assume_unique: None uses ``sparr.unique_indices``; False extracts each repeated index
            once (at its first occurrence; 0 at the repeats).

    Returns:
        A BCOO: data from ``arr`` (0 at padding), ``sparr``'s indices.

    Example:
        >>> import quabla.experimental.sparse as qs
        >>> M = qs.BCOO.fromdense(qb.array([[0.0, 1.0], [1.0, 0.0]]))
        >>> qs.bcoo_extract(M, qb.array([[5.0, 6.0], [7.0, 8.0]])).data.tolist()
        [6.0, 7.0]
    """
    name = "bcoo_extract"
    _check_bcoo(name, sparr, "sparr")
    a = _arr(name, "arr", arr)
    if tuple(a.shape) != tuple(sparr.shape):
        raise ShapeError(f"{name}: arr of shape {tuple(a.shape)} does not match sparr.shape {tuple(sparr.shape)}")
    unique = sparr.unique_indices if assume_unique is None else bool(assume_unique)
    nb, ns = sparr.n_batch, sparr.n_sparse
    _, idx = _full_bufs(sparr)
    i, valid = _wrap(idx, sparr.shape[nb:nb + ns])
    data = _gather_at(a, sparr.shape, nb, ns, i, valid)
    if not unique:
        bt, nse = _prod(sparr.shape[:nb]), sparr.nse
        lin = _o.where(_o.reshape(valid, (bt, nse)), _o.reshape(_linear(i, sparr.shape[nb:nb + ns]), (bt, nse)), -1)
        dup = _o.reshape(_first_occurrence(lin, bt, nse), tuple(sparr.shape[:nb]) + (nse,) + (1,) * sparr.n_dense)
        data = _o.where(dup, _o.zeros((), data.dtype), data)
    return BCOO((data, sparr.indices), shape=sparr.shape, indices_sorted=sparr.indices_sorted, unique_indices=sparr.unique_indices)


# ---------------------------------------------------------------------------------------------
# Duplicates and sorting


def _eliminate_zeros(mat):
    """``mat`` with the elements whose data (block) is all zero marked as padding."""
    nb, ns = mat.n_batch, mat.n_sparse
    data, idx = _full_bufs(mat)
    z = data == 0
    if mat.n_dense:
        z = _o.all(z, axis=tuple(range(nb + 1, data.ndim)))
    fill = _o.astype(_o.array(np.asarray(mat.shape[nb:nb + ns], np.int64)), idx.dtype)
    idx = _o.where(z[..., None], fill, idx)
    return BCOO((data, idx), shape=mat.shape)


def bcoo_sum_duplicates(mat, nse=None):
    """Repeated indices summed into one element each, indices sorted lexicographically
    (``jax.experimental.sparse.bcoo_sum_duplicates``); padding goes last.

    Args:
        mat: a BCOO array.
        nse: stored elements of the result per batch (padded, or truncated); None counts the
            distinct indices (needs concrete indices: a ConcretizationTypeError under ``jit``).

    Returns:
        A BCOO with sorted, unique indices.

    Example:
        >>> import quabla.experimental.sparse as qs
        >>> M = qs.BCOO((qb.array([1.0, 2.0, 4.0]), qb.array([[2], [0], [2]])), shape=(3,))
        >>> S = qs.bcoo_sum_duplicates(M)
        >>> S.data.tolist(), S.indices.tolist()
        ([2.0, 5.0], [[0], [2]])
    """
    name = "bcoo_sum_duplicates"
    _check_bcoo(name, mat)
    nb, ns = mat.n_batch, mat.n_sparse
    batch, sparse, dense = tuple(mat.shape[:nb]), tuple(mat.shape[nb:nb + ns]), tuple(mat.shape[nb + ns:])
    bt, s, n = _prod(batch), _prod(sparse), mat.nse
    data, idx = _full_bufs(mat)
    i, valid = _wrap(idx, sparse)
    lin = _o.where(_o.reshape(valid, (bt, n)), _o.reshape(_linear(i, sparse), (bt, n)), s)
    order = _argsort(lin, axis=1)
    slin = _tal(lin, order)
    # Out-of-bounds elements form one last group, as JAX's: with room for it, their data sums
    # into a padding element (which todense drops); nse=None does not count it.
    new = _o.concatenate([_o.ones((bt, 1), bool_), slin[:, 1:] != slin[:, :-1]], axis=1)
    uid = _cumsum(_o.astype(new, int64), axis=1) - 1
    if nse is None:
        out_n = max(_concrete_max(name, _o.sum(_o.astype(new & (slin < s), int64), axis=1), "pass nse"), 1)
    else:
        out_n = _static_int(name, "nse", nse, 1)
    b = _batch_iota(bt, n)
    # The unique indices, in sorted order.
    slot = _o.where(new & (uid < out_n), b * out_n + uid, bt * out_n)
    ulin = _o.full((bt * out_n,), s, int64).at[_o.ravel(slot)].set(_o.ravel(slin), mode="drop")
    ulin = _o.reshape(ulin, (bt, out_n))
    uvalid = ulin < s
    coords = _unravel(_o.minimum(ulin, s - 1), sparse)
    indices = _o.reshape(_fill_indices(coords, uvalid, sparse, mat.indices.dtype), batch + (out_n, ns))
    # Where each original element goes.
    target_sorted = _o.where(uid < out_n, b * out_n + uid, bt * out_n)
    target = _o.zeros((bt * n,), int64).at[_o.ravel(b * n + order)].set(_o.ravel(target_sorted))
    vals = _o.reshape(data, (bt * n,) + dense)
    out = _o.zeros((bt * out_n,) + dense, mat.dtype).at[target].add(vals, mode="drop")
    return BCOO((_o.reshape(out, batch + (out_n,) + dense), indices), shape=mat.shape, indices_sorted=True, unique_indices=True)


def bcoo_sort_indices(mat):
    """The elements reordered so that indices are lexicographically sorted within each batch
    (``jax.experimental.sparse.bcoo_sort_indices``); padding goes last.

    Args:
        mat: a BCOO array.

    Returns:
        A BCOO with ``indices_sorted`` set.

    Example:
        >>> import quabla.experimental.sparse as qs
        >>> M = qs.BCOO((qb.array([1.0, 2.0]), qb.array([[1], [0]])), shape=(2,))
        >>> qs.bcoo_sort_indices(M).data.tolist()
        [2.0, 1.0]
    """
    _check_bcoo("bcoo_sort_indices", mat)
    nb, ns = mat.n_batch, mat.n_sparse
    batch, sparse, dense = tuple(mat.shape[:nb]), tuple(mat.shape[nb:nb + ns]), tuple(mat.shape[nb + ns:])
    bt, s, n = _prod(batch), _prod(sparse), mat.nse
    data, idx = _full_bufs(mat)
    i, valid = _wrap(idx, sparse)
    lin = _o.where(_o.reshape(valid, (bt, n)), _o.reshape(_linear(i, sparse), (bt, n)), s)
    rows = _o.ravel(_batch_iota(bt, n) * n + _argsort(lin, axis=1))
    d = _o.take(_o.reshape(data, (bt * n,) + dense), rows, axis=0)
    ix = _o.take(_o.reshape(idx, (bt * n, ns)), rows, axis=0)
    return BCOO((_o.reshape(d, batch + (n,) + dense), _o.reshape(ix, batch + (n, ns))), shape=mat.shape, indices_sorted=True,
                unique_indices=mat.unique_indices)


# ---------------------------------------------------------------------------------------------
# Transpose, reshape, layout


def _perm_arg(name, permutation, ndim):
    try:
        perm = _o._ints_arg(name, "permutation", permutation)
    except ArgumentTypeError:
        raise
    if sorted(perm) != list(range(ndim)):
        raise ShapeError(f"{name}: permutation {perm} is not a permutation of the {ndim} axes")
    return perm


def bcoo_transpose(mat, *, permutation):
    """The axes of a BCOO permuted (``jax.experimental.sparse.bcoo_transpose``): batch axes
    among themselves, sparse among themselves (a column permutation of the indices) and dense
    among themselves (an UnsupportedOperationError otherwise, as JAX's NotImplementedError).

    Args:
        mat: a BCOO array.
        permutation: a permutation of ``range(mat.ndim)``.

    Returns:
        The transposed BCOO.

    Example:
        >>> import quabla.experimental.sparse as qs
        >>> M = qs.BCOO.fromdense(qb.array([[0.0, 1.0, 0.0], [2.0, 0.0, 0.0]]))
        >>> qs.bcoo_transpose(M, permutation=(1, 0)).todense().tolist()
        [[0.0, 2.0], [1.0, 0.0], [0.0, 0.0]]
    """
    name = "bcoo_transpose"
    _check_bcoo(name, mat)
    perm = _perm_arg(name, permutation, mat.ndim)
    nb, ns, nd = mat.n_batch, mat.n_sparse, mat.n_dense
    bp, sp, dp = perm[:nb], [p - nb for p in perm[nb:nb + ns]], [p - nb - ns for p in perm[nb + ns:]]
    if sorted(bp) != list(range(nb)) or sorted(sp) != list(range(ns)) or sorted(dp) != list(range(nd)):
        raise UnsupportedOperationError(f"{name}: permutation {perm} mixes batch (n_batch={nb}), sparse (n_sparse={ns}) and dense "
                                        f"(n_dense={nd}) axes", op=name)
    out_shape = tuple(mat.shape[p] for p in perm)
    if perm == tuple(range(mat.ndim)):
        return mat
    data, idx = mat.data, mat.indices
    if sp != list(range(ns)):
        idx = _o.take(idx, _o.array(np.asarray(sp, np.int64)), axis=-1)
    if bp != list(range(nb)):
        idx = _o.transpose(idx, tuple(bp) + (nb, nb + 1))
    if bp != list(range(nb)) or dp != list(range(nd)):
        data = _o.transpose(data, tuple(bp) + (nb,) + tuple(d + nb + 1 for d in dp))
    srt = mat.indices_sorted and sp == list(range(ns))
    return BCOO((data, idx), shape=out_shape, indices_sorted=srt, unique_indices=mat.unique_indices)


def bcoo_reshape(mat, *, new_sizes, dimensions=None):
    """A BCOO reshaped (``jax.experimental.sparse.bcoo_reshape``, ``lax.reshape``'s rules): the
    new shape splits into batch, sparse and dense groups of the old groups' sizes; sparse
    indices are re-raveled into the new sparse shape.

    Args:
        mat: a BCOO array.
        new_sizes: the new shape.
        dimensions: optional permutation applied first (within the groups).

    Returns:
        The reshaped BCOO.

    Example:
        >>> import quabla.experimental.sparse as qs
        >>> M = qs.BCOO.fromdense(qb.array([[0.0, 1.0], [2.0, 0.0]]))
        >>> qs.bcoo_reshape(M, new_sizes=(4,)).indices.tolist()
        [[1], [2]]
    """
    name = "bcoo_reshape"
    _check_bcoo(name, mat)
    new_sizes = _o._ints_arg(name, "new_sizes", new_sizes)
    if dimensions is not None:
        mat = bcoo_transpose(mat, permutation=dimensions)
    if _prod(new_sizes) != mat.size or any(d <= 0 for d in new_sizes):
        raise ShapeError(f"{name}: cannot reshape an array of shape {mat.shape} into {new_sizes}")
    nb, ns = mat.n_batch, mat.n_sparse
    batch, sparse, dense = tuple(mat.shape[:nb]), tuple(mat.shape[nb:nb + ns]), tuple(mat.shape[nb + ns:])
    bsz, ssz = _prod(batch), _prod(sparse)
    cum = np.cumprod(np.asarray(new_sizes, dtype=object)).tolist()
    if bsz != 1 and bsz not in cum:
        raise ShapeError(f"{name}: new shape {new_sizes} mixes batch and sparse dimensions of shape {mat.shape} (n_batch={nb})")
    if ssz != 1 and bsz * ssz not in cum:
        raise ShapeError(f"{name}: new shape {new_sizes} mixes sparse and dense dimensions of shape {mat.shape} (n_dense={mat.n_dense})")
    i1 = int(np.searchsorted(np.asarray(cum, dtype=np.float64), bsz, side="right"))
    i2 = int(np.searchsorted(np.asarray(cum, dtype=np.float64), bsz * ssz, side="right"))
    nbatch, nsparse, ndense = new_sizes[:i1], new_sizes[i1:i2], new_sizes[i2:]
    if not nsparse:
        raise UnsupportedOperationError(f"{name}: new shape {new_sizes} leaves no sparse dimension (Quabla needs n_sparse >= 1)", op=name)
    data, idx = _full_bufs(mat)
    data = _o.reshape(data, tuple(nbatch) + (mat.nse,) + tuple(ndense))
    i, valid = _wrap(idx, sparse)
    lin = _linear(i, sparse)
    coords = _unravel(_o.where(valid, lin, 0), nsparse)
    idx = _fill_indices(coords, valid, nsparse, mat.indices.dtype)
    idx = _o.reshape(idx, tuple(nbatch) + (mat.nse, len(nsparse)))
    return BCOO((data, idx), shape=tuple(new_sizes), indices_sorted=mat.indices_sorted, unique_indices=mat.unique_indices)


def bcoo_update_layout(mat, *, n_batch=None, n_dense=None, on_inefficient="error"):
    """The same array stored with ``n_batch`` batch and ``n_dense`` dense dimensions
    (``jax.experimental.sparse.bcoo_update_layout``). Turning sparse dimensions of size > 1
    into batch or dense ones stores explicit zeros: a :class:`SparseEfficiencyError`
    (``on_inefficient='error'``), a warning (``'warn'``) or nothing (None).

    Args:
        mat: a BCOO array.
        n_batch, n_dense: the new counts (None keeps the current ones).
        on_inefficient: 'error', 'warn' or None.

    Returns:
        A BCOO with the same dense value.

    Example:
        >>> import quabla.experimental.sparse as qs
        >>> M = qs.BCOO.fromdense(qb.array([[1.0, 0.0], [0.0, 2.0]]))
        >>> M2 = qs.bcoo_update_layout(M, n_batch=1, on_inefficient=None)
        >>> M2.n_batch, M2.todense().tolist()
        (1, [[1.0, 0.0], [0.0, 2.0]])
    """
    name = "bcoo_update_layout"
    _check_bcoo(name, mat)
    nb = mat.n_batch if n_batch is None else _static_int(name, "n_batch", n_batch, 0)
    nd = mat.n_dense if n_dense is None else _static_int(name, "n_dense", n_dense, 0)
    if on_inefficient not in ("error", "warn", None):
        raise InvalidArgumentError(f"{name}: on_inefficient must be 'error', 'warn' or None, got {on_inefficient!r}")
    if (nb, nd) == (mat.n_batch, mat.n_dense):
        return mat
    ns = mat.ndim - nb - nd
    if ns < 1:
        raise ShapeError(f"{name}: n_batch={nb} and n_dense={nd} leave no sparse dimension of shape {mat.shape} (Quabla needs n_sparse >= 1)")

    def inefficient(msg):
        if on_inefficient == "error":
            raise SparseEfficiencyError(f"{name}: {msg}; pass on_inefficient='warn' or None to allow it")
        if on_inefficient == "warn":
            warnings.warn(f"{name}: {msg}", SparseEfficiencyWarning, stacklevel=3)

    shape = mat.shape
    if nd > mat.n_dense and any(d > 1 for d in shape[mat.ndim - nd:mat.ndim - mat.n_dense]):
        inefficient(f"increasing n_dense from {mat.n_dense} to {nd} for shape {shape} stores explicit zeros")
    if nb > mat.n_batch and any(d > 1 for d in shape[mat.n_batch:nb]):
        inefficient(f"increasing n_batch from {mat.n_batch} to {nb} for shape {shape} stores explicit zeros")
    data, idx = _full_bufs(mat)
    cb, cd = mat.n_batch, mat.n_dense
    idt = idx.dtype
    if nd < cd:
        # The leading (cd - nd) dense dimensions become trailing sparse ones.
        k = cd - nd
        dsz = tuple(data.shape[cb + 1:cb + 1 + k])
        kk = _prod(dsz)
        nse = int(data.shape[cb])
        data = _o.reshape(data, tuple(data.shape[:cb]) + (nse * kk,) + tuple(data.shape[cb + 1 + k:]))
        grid = np.stack(np.unravel_index(np.arange(kk), dsz), axis=-1).astype(np.int64)
        old = _o.broadcast_to(_o.expand_dims(idx, cb + 1), tuple(idx.shape[:cb]) + (nse, kk, int(idx.shape[-1])))
        new = _o.broadcast_to(_o.astype(_o.array(grid), idt), tuple(idx.shape[:cb]) + (nse, kk, k))
        idx = _o.reshape(_o.concatenate([old, new], axis=-1), tuple(idx.shape[:cb]) + (nse * kk, int(idx.shape[-1]) + k))
        cd = nd
    if nb < cb:
        # The trailing (cb - nb) batch dimensions become leading sparse ones.
        k = cb - nb
        bsz = tuple(shape[nb:cb])
        kk = _prod(bsz)
        nse = int(data.shape[cb])
        data = _o.reshape(data, tuple(shape[:nb]) + (kk * nse,) + tuple(data.shape[cb + 1:]))
        grid = np.stack(np.unravel_index(np.arange(kk), bsz), axis=-1).astype(np.int64)
        g = _o.broadcast_to(_o.astype(_o.array(grid.reshape(kk, 1, k)), idt), tuple(shape[:nb]) + (kk, nse, k))
        old = _o.reshape(idx, tuple(shape[:nb]) + (kk, nse, int(idx.shape[-1])))
        idx = _o.reshape(_o.concatenate([g, old], axis=-1), tuple(shape[:nb]) + (kk * nse, int(idx.shape[-1]) + k))
        cb = nb
    if nd > cd:
        # The trailing (nd - cd) sparse dimensions become leading dense ones.
        k = nd - cd
        nsc = int(idx.shape[-1])
        tail = tuple(shape[cb + nsc - k:cb + nsc])
        t = _prod(tail)
        nse = int(data.shape[cb])
        bt = _prod(shape[:cb])
        dense_old = tuple(data.shape[cb + 1:])
        i, valid = _wrap(idx[..., nsc - k:], tail)
        lin = _o.reshape(_o.where(valid, _linear(i, tail), t), (bt * nse,))
        rows = _o.where(lin < t, _o.arange(bt * nse, dtype=int64) * t + lin, bt * nse * t)
        block = _o.zeros((bt * nse * t,) + dense_old, mat.dtype).at[rows].add(_o.reshape(data, (bt * nse,) + dense_old), mode="drop")
        data = _o.reshape(block, tuple(shape[:cb]) + (nse,) + tail + dense_old)
        idx = idx[..., :nsc - k]
        cd = nd
    if nb > cb:
        # The leading (nb - cb) sparse dimensions become trailing batch ones.
        k = nb - cb
        head = tuple(shape[cb:nb])
        h = _prod(head)
        nse = int(data.shape[cb])
        bt = _prod(shape[:cb])
        dense_t = tuple(data.shape[cb + 1:])
        i, valid = _wrap(idx[..., :k], head)
        lin = _o.reshape(_o.where(valid, _linear(i, head), h), (bt, nse))
        b = _batch_iota(bt, nse)
        e = _o.array(np.arange(nse, dtype=np.int64).reshape(1, nse))
        rows = _o.where(lin < h, (b * h + lin) * nse + e, bt * h * nse)
        block = _o.zeros((bt * h * nse,) + dense_t, mat.dtype).at[_o.ravel(rows)].add(_o.reshape(data, (bt * nse,) + dense_t), mode="drop")
        data = _o.reshape(block, tuple(shape[:cb]) + head + (nse,) + dense_t)
        rest = idx[..., k:]
        idx = _o.broadcast_to(_o.expand_dims(rest, tuple(range(cb, cb + k))), tuple(shape[:cb]) + head + tuple(rest.shape[cb:]))
        cb = nb
    return BCOO((data, idx), shape=shape)


# ---------------------------------------------------------------------------------------------
# Reductions and elementwise products


def _as_bcoo_full_layout(dense, nb_keep):
    """A dense result (no sparse dimension left) stored as a BCOO: its last kept batch
    dimension (or its first dense one) becomes the sparse dimension, every entry stored."""
    k = int(dense.shape[nb_keep - 1]) if nb_keep else int(dense.shape[0])
    lead = tuple(dense.shape[:nb_keep - 1]) if nb_keep else ()
    idx = _o.broadcast_to(_o.array(np.arange(k, dtype=np.int32).reshape(k, 1)), lead + (k, 1))
    return BCOO((dense, idx), shape=tuple(dense.shape), indices_sorted=True, unique_indices=True)


def _axes_arg(name, axes, ndim):
    axes = _o._ints_arg(name, "axes", axes)
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ShapeError(f"{name}: axis {a} out of range for an array of rank {ndim}")
        out.append(a % ndim)
    return sorted(set(out))


def bcoo_reduce_sum(mat, *, axes):
    """The sum of a BCOO over ``axes`` (``jax.experimental.sparse.bcoo_reduce_sum``): dense axes
    sum the data, sparse axes drop their index column, batch axes merge into the stored
    elements.

    Args:
        mat: a BCOO array.
        axes: the axes to sum over.

    Returns:
        A BCOO of the remaining shape. Where JAX's result has no sparse dimension left
        (n_sparse=0, which Quabla cannot store), the sum is computed densely and stored with its
        last batch (else first dense) dimension as the sparse one; a full sum (shape ()) is a
        dense 0-d array.

    Example:
        >>> import quabla.experimental.sparse as qs
        >>> M = qs.BCOO.fromdense(qb.array([[1.0, 0.0], [2.0, 3.0]]))
        >>> qs.bcoo_reduce_sum(M, axes=(1,)).todense().tolist()
        [1.0, 5.0]
    """
    name = "bcoo_reduce_sum"
    _check_bcoo(name, mat)
    axes = _axes_arg(name, axes, mat.ndim)
    nb, ns, nd = mat.n_batch, mat.n_sparse, mat.n_dense
    shape = mat.shape
    out_shape = tuple(s for a, s in enumerate(shape) if a not in axes)
    data, idx = _full_bufs(mat)
    dense_axes = tuple(a - ns + 1 for a in axes if a >= nb + ns)
    if dense_axes:
        data = _o.sum(data, axis=dense_axes)
    i, valid = _wrap(idx, shape[nb:nb + ns])
    keep_sparse = [c for c in range(ns) if c + nb not in axes]
    batch_axes = [a for a in axes if a < nb]
    keep_batch = [a for a in range(nb) if a not in batch_axes]
    if not keep_sparse:
        # Every sparse dimension summed: the result holds no sparse dimension.
        vmask = _o.reshape(valid, tuple(valid.shape) + (1,) * (data.ndim - valid.ndim))
        data = _o.where(vmask, data, _o.zeros((), data.dtype))
        dense = _o.sum(data, axis=tuple(batch_axes) + (nb,))
        if not out_shape:
            return dense
        return _as_bcoo_full_layout(dense, len(keep_batch))
    vmask = _o.reshape(valid, tuple(valid.shape) + (1,) * (data.ndim - valid.ndim))
    data = _o.where(vmask, data, _o.zeros((), data.dtype))
    new_sparse = [shape[nb + c] for c in keep_sparse]
    idx = _fill_indices(_o.take(i, _o.array(np.asarray(keep_sparse, np.int64)), axis=-1), valid, new_sparse, mat.indices.dtype)
    if batch_axes:
        perm = keep_batch + batch_axes
        data = _o.transpose(data, tuple(perm) + tuple(range(nb, data.ndim)))
        idx = _o.transpose(idx, tuple(perm) + (nb, nb + 1))
        kb = tuple(shape[a] for a in keep_batch)
        m = _prod(shape[a] for a in batch_axes) * mat.nse
        data = _o.reshape(data, kb + (m,) + tuple(data.shape[nb + 1:]))
        idx = _o.reshape(idx, kb + (m, len(keep_sparse)))
    return BCOO((data, idx), shape=out_shape)


def _sum(mat, axis=None, dtype=None, out=None, keepdims=False):
    name = "BCOO.sum"
    if out is not None:
        raise UnsupportedOperationError(f"{name}: out= is not supported", op=name)
    if keepdims:
        raise UnsupportedOperationError(f"{name}: keepdims=True is not supported for sparse arrays", op=name)
    axes = tuple(range(mat.ndim)) if axis is None else axis
    r = bcoo_reduce_sum(mat, axes=axes)
    if dtype is not None:
        r = r.astype(dtype) if isinstance(r, BCOO) else _o.astype(r, dtype)
    return r


def bcoo_multiply_dense(sp_mat, v):
    """The data of ``sp_mat * v`` for a dense ``v`` that broadcasts to ``sp_mat.shape``
    (``jax.experimental.sparse.bcoo_multiply_dense``): each stored element times ``v`` at its
    index (size-1 dimensions of ``v`` broadcast).

    Args:
        sp_mat: a BCOO array.
        v: a dense array (or scalar) broadcastable to ``sp_mat.shape``.

    Returns:
        The product's data (the BCOO ``(data, sp_mat.indices)`` is the product), as JAX's.

    Example:
        >>> import quabla.experimental.sparse as qs
        >>> M = qs.BCOO.fromdense(qb.array([[1.0, 0.0], [0.0, 2.0]]))
        >>> qs.bcoo_multiply_dense(M, qb.array([10.0, 100.0])).tolist()
        [10.0, 200.0]
    """
    name = "bcoo_multiply_dense"
    _check_bcoo(name, sp_mat, "sp_mat")
    if _is_sparse(v):
        raise ArgumentTypeError(f"{name}: v must be dense, got {type(v).__name__}; use bcoo_multiply_sparse")
    v = v if (isinstance(v, (bool, int, float)) and not isinstance(v, np.generic)) else _arr(name, "v", v)
    if not is_array(v) or v.ndim == 0:
        return _o.multiply(sp_mat.data, v)
    shape = sp_mat.shape
    if v.ndim > len(shape) or any(a not in (1, b) for a, b in zip(v.shape[::-1], shape[::-1])):
        raise UnsupportedOperationError(f"{name}: v of shape {tuple(v.shape)} must broadcast to the sparse shape {shape} "
                                        "(the product keeps the sparse array's shape)", op=name)
    v = _o.reshape(v, (1,) * (len(shape) - v.ndim) + tuple(v.shape))
    nb, ns = sp_mat.n_batch, sp_mat.n_sparse
    data, idx = _full_bufs(sp_mat)
    vb, vs, vd = tuple(v.shape[:nb]), tuple(v.shape[nb:nb + ns]), tuple(v.shape[nb + ns:])
    batch = tuple(shape[:nb])
    bt, nse = _prod(batch), sp_mat.nse
    i, valid = _wrap(idx, shape[nb:nb + ns])
    # Coordinates in v: 0 along its size-1 dimensions.
    iv = _o.where(_o.array(np.asarray([s == 1 for s in vs], bool)), 0, i)
    lin_s = _linear(iv, vs)
    vbsz, vssz = _prod(vb), _prod(vs)
    bidx = np.arange(bt, dtype=np.int64).reshape(batch + (1,)) if nb else np.zeros((1,), np.int64)
    if nb:
        coords = np.stack(np.unravel_index(np.arange(bt), batch), axis=-1)
        coords = np.where(np.asarray(vb) == 1, 0, coords)
        bidx = np.ravel_multi_index(tuple(coords.T), vb).reshape(batch + (1,)).astype(np.int64)
    rows = _o.where(valid, _o.array(bidx) * vssz + lin_s, 0)
    vals = _o.take(_o.reshape(v, (vbsz * vssz,) + vd), _o.ravel(rows), axis=0)
    vals = _o.reshape(vals, batch + (nse,) + vd)
    return _o.multiply(data, vals)


def bcoo_multiply_sparse(lhs, rhs):
    """The elementwise product of two BCOO arrays of the same rank
    (``jax.experimental.sparse.bcoo_multiply_sparse``): every pair of stored elements at the
    same index (size-1 dimensions broadcast) gives one element; ``nse = lhs.nse * rhs.nse``.

    Args:
        lhs, rhs: BCOO arrays with equal rank and n_dense.

    Returns:
        A BCOO of the broadcast shape.

    Example:
        >>> import quabla.experimental.sparse as qs
        >>> A = qs.BCOO.fromdense(qb.array([1.0, 0.0, 2.0]))
        >>> B = qs.BCOO.fromdense(qb.array([3.0, 4.0, 0.0]))
        >>> qs.bcoo_multiply_sparse(A, B).todense().tolist()
        [3.0, 0.0, 0.0]
    """
    name = "bcoo_multiply_sparse"
    _check_bcoo(name, lhs, "lhs")
    _check_bcoo(name, rhs, "rhs")
    if lhs.ndim != rhs.ndim:
        raise ShapeError(f"{name}: arrays must have the same rank, got shapes {lhs.shape} and {rhs.shape}")
    if lhs.n_dense != rhs.n_dense:
        raise UnsupportedOperationError(f"{name}: differing n_dense ({lhs.n_dense} and {rhs.n_dense})", op=name)
    try:
        out_shape = tuple(int(s) for s in np.broadcast_shapes(lhs.shape, rhs.shape))
    except ValueError as e:
        raise ShapeError(f"{name}: shapes {lhs.shape} and {rhs.shape} do not broadcast") from e
    nb = min(lhs.n_batch, rhs.n_batch)
    lhs = bcoo_update_layout(lhs, n_batch=nb)
    rhs = bcoo_update_layout(rhs, n_batch=nb)
    ns, nd = lhs.n_sparse, lhs.n_dense
    batch = out_shape[:nb]
    bt = _prod(batch)
    ld, li = _full_bufs(lhs)
    rd, ri = _full_bufs(rhs)
    ld = _o.broadcast_to(ld, batch + tuple(ld.shape[nb:]))
    li = _o.broadcast_to(li, batch + tuple(li.shape[nb:]))
    rd = _o.broadcast_to(rd, batch + tuple(rd.shape[nb:]))
    ri = _o.broadcast_to(ri, batch + tuple(ri.shape[nb:]))
    nl, nr = lhs.nse, rhs.nse
    li64, lv = _wrap(li, lhs.shape[nb:nb + ns])
    ri64, rv = _wrap(ri, rhs.shape[nb:nb + ns])
    dims = [c for c in range(ns) if lhs.shape[nb + c] != 1 and rhs.shape[nb + c] != 1]
    mask = _o.expand_dims(lv, -1) & _o.expand_dims(rv, -2)
    if dims:
        sel = _o.array(np.asarray(dims, np.int64))
        a = _o.take(li64, sel, axis=-1)
        b = _o.take(ri64, sel, axis=-1)
        mask = mask & _o.all(_o.expand_dims(a, -2) == _o.expand_dims(b, -3), axis=-1)
    nse = nl * nr
    pos, valid = _compact(_o.reshape(mask, (bt, nse)), nse)
    pos = _o.minimum(pos, nse - 1)
    bcol = _batch_iota(bt, nse)
    il = _o.ravel(bcol * nl + pos // nr)
    ir = _o.ravel(bcol * nr + pos % nr)
    dl = _o.take(_o.reshape(ld, (bt * nl,) + tuple(ld.shape[nb + 1:])), il, axis=0)
    dr = _o.take(_o.reshape(rd, (bt * nr,) + tuple(rd.shape[nb + 1:])), ir, axis=0)
    vflat = _o.reshape(_o.ravel(valid), (bt * nse,) + (1,) * nd)
    prod = _o.multiply(dl, dr)
    prod = _o.where(vflat, prod, _o.zeros((), prod.dtype))
    il_idx = _o.take(_o.reshape(li64, (bt * nl, ns)), il, axis=0)
    ir_idx = _o.take(_o.reshape(ri64, (bt * nr, ns)), ir, axis=0)
    coords = _o.maximum(il_idx, ir_idx)
    idx = _fill_indices(coords, _o.ravel(valid), out_shape[nb:nb + ns], lhs.indices.dtype)
    data = _o.reshape(prod, batch + (nse,) + tuple(prod.shape[1:]))
    return BCOO((data, _o.reshape(idx, batch + (nse, ns))), shape=out_shape)


# ---------------------------------------------------------------------------------------------
# dot_general


def _dnums_arg(name, dimension_numbers, lhs_shape, rhs_shape):
    try:
        (lc, rc), (lb, rb) = dimension_numbers
        lc, rc, lb, rb = (tuple(_o._ints_arg(name, "dimension_numbers", d)) if not isinstance(d, (int, np.integer)) else (int(d),)
                          for d in (lc, rc, lb, rb))
    except (TypeError, ValueError) as e:
        raise ArgumentTypeError(f"{name}: dimension_numbers must be ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch)), "
                                f"got {dimension_numbers!r}") from e
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise ShapeError(f"{name}: contracting/batch dimension lists differ in length: {dimension_numbers!r}")
    for dims, shp, side in ((lc + lb, lhs_shape, "lhs"), (rc + rb, rhs_shape, "rhs")):
        if any(not 0 <= d < len(shp) for d in dims) or len(set(dims)) != len(dims):
            raise ShapeError(f"{name}: dimension_numbers {dimension_numbers!r} invalid for {side} of shape {tuple(shp)}")
    for l_, r_ in list(zip(lc, rc)) + list(zip(lb, rb)):
        if lhs_shape[l_] != rhs_shape[r_]:
            raise ShapeError(f"{name}: lhs dimension {l_} (size {lhs_shape[l_]}) and rhs dimension {r_} (size {rhs_shape[r_]}) "
                             f"do not match (lhs shape {tuple(lhs_shape)}, rhs shape {tuple(rhs_shape)})")
    return lc, rc, lb, rb


def _spdense(name, lhs, rhs, lc, rc, lb, rb, pet):
    """BCOO ``lhs`` contracted with dense ``rhs`` (dot_general's output order)."""
    nb, ns = lhs.n_batch, lhs.n_sparse
    shape = lhs.shape
    if any(d >= nb for d in lb):
        raise UnsupportedOperationError(f"{name}: the batch dimensions of the product must be batch dimensions of the sparse "
                                        f"array (n_batch={nb}), got lhs batch dims {lb}", op=name)
    if any(d >= nb + ns for d in lc):
        raise UnsupportedOperationError(f"{name}: contracting over dense dimensions (n_dense={lhs.n_dense}) is not supported", op=name)
    data, idx = _full_bufs(lhs)
    if pet is not None:
        data, rhs = _o.astype(data, pet), _o.astype(rhs, pet)
    pairs_b = [(l_, r_) for l_, r_ in zip(lc, rc) if l_ < nb]
    pairs_s = [(l_, r_) for l_, r_ in zip(lc, rc) if l_ >= nb]
    free_b = [d for d in range(nb) if d not in lb and d not in [p[0] for p in pairs_b]]
    free_s = [d - nb for d in range(nb, nb + ns) if d not in [p[0] for p in pairs_s]]
    rfree = [d for d in range(rhs.ndim) if d not in rc and d not in rb]
    bperm = list(lb) + free_b + [p[0] for p in pairs_b]
    if bperm != list(range(nb)):
        data = _o.transpose(data, tuple(bperm) + tuple(range(nb, data.ndim)))
        idx = _o.transpose(idx, tuple(bperm) + (nb, nb + 1))
    sizes = lambda ds: [shape[d] for d in ds]  # noqa: E731
    n_b, n_fb, n_cb = _prod(sizes(lb)), _prod(sizes(free_b)), _prod(sizes([p[0] for p in pairs_b]))
    bt, nse = n_b * n_fb * n_cb, lhs.nse
    dense = tuple(shape[nb + ns:])
    dsz = _prod(dense)
    sparse = tuple(shape[nb:nb + ns])
    data = _o.reshape(data, (bt, nse, dsz))
    i, valid = _wrap(_o.reshape(idx, (bt, nse, ns)), sparse)
    cs = [p[0] - nb for p in pairs_s]
    n_cs = _prod(sparse[c] for c in cs)
    lin_c = _linear(i, sparse, cs)
    rperm = list(rb) + [p[1] for p in pairs_b] + [p[1] for p in pairs_s] + rfree
    rt = _o.transpose(rhs, tuple(rperm)) if rperm != list(range(rhs.ndim)) else rhs
    fshape = tuple(rhs.shape[d] for d in rfree)
    f = _prod(fshape)
    r2 = _o.reshape(rt, (n_b * n_cb * n_cs, f))
    bi = np.arange(bt, dtype=np.int64).reshape(bt, 1)
    bdot, fb, cb = bi // (n_fb * n_cb), (bi // n_cb) % n_fb, bi % n_cb
    row = _o.where(valid, _o.array((bdot * n_cb + cb) * n_cs) + lin_c, 0)
    g = _o.reshape(_o.take(r2, _o.ravel(row), axis=0), (bt, nse, f))
    g = _o.where(_o.expand_dims(valid, -1), g, _o.zeros((), g.dtype))
    prod = _o.multiply(_o.expand_dims(data, -1), _o.expand_dims(g, -2))  # (bt, nse, dsz, f)
    out_shape = tuple(sizes(lb)) + tuple(sizes(free_b)) + tuple(sparse[c] for c in free_s) + dense + fshape
    if free_s:
        n_fs = _prod(sparse[c] for c in free_s)
        lin_f = _linear(i, sparse, free_s)
        orow = _o.where(valid, _o.array((bdot * n_fb + fb) * n_fs) + lin_f, n_b * n_fb * n_fs)
        out = _o.zeros((n_b * n_fb * n_fs, dsz, f), prod.dtype).at[_o.ravel(orow)].add(_o.reshape(prod, (bt * nse, dsz, f)), mode="drop")
    else:
        out = _o.sum(_o.reshape(prod, (n_b * n_fb, n_cb * nse, dsz, f)), axis=1)
    return _o.reshape(out, out_shape)


def _spsp(name, lhs, rhs, lc, rc, lb, rb, pet):
    """BCOO x BCOO (n_batch = n_dense = 0 on both sides): one element per pair of stored
    elements whose contracted coordinates agree; nse = lhs.nse * rhs.nse."""
    if lhs.n_batch or rhs.n_batch or lhs.n_dense or rhs.n_dense or lb:
        raise UnsupportedOperationError(f"{name}: sparse x sparse products need n_batch = n_dense = 0 and no batch dimensions", op=name)
    ld, li = lhs.data, lhs.indices
    rd, ri = rhs.data, rhs.indices
    if pet is not None:
        ld, rd = _o.astype(ld, pet), _o.astype(rd, pet)
    li64, lv = _wrap(li, lhs.shape)
    ri64, rv = _wrap(ri, rhs.shape)
    mask = _o.expand_dims(lv, -1) & _o.expand_dims(rv, 0)
    if lc:
        a = _o.take(li64, _o.array(np.asarray(lc, np.int64)), axis=-1)
        b = _o.take(ri64, _o.array(np.asarray(rc, np.int64)), axis=-1)
        mask = mask & _o.all(_o.expand_dims(a, 1) == _o.expand_dims(b, 0), axis=-1)
    nl, nr = lhs.nse, rhs.nse
    nse = nl * nr
    pos, valid = _compact(_o.reshape(mask, (1, nse)), nse)
    pos, valid = _o.minimum(pos[0], nse - 1), valid[0]
    il, ir = pos // nr, pos % nr
    prod = _o.multiply(_o.take(ld, il, axis=0), _o.take(rd, ir, axis=0))
    prod = _o.where(valid, prod, _o.zeros((), prod.dtype))
    lf = [d for d in range(lhs.ndim) if d not in lc]
    rf = [d for d in range(rhs.ndim) if d not in rc]
    cols = []
    if lf:
        cols.append(_o.take(_o.take(li64, il, axis=0), _o.array(np.asarray(lf, np.int64)), axis=-1))
    if rf:
        cols.append(_o.take(_o.take(ri64, ir, axis=0), _o.array(np.asarray(rf, np.int64)), axis=-1))
    out_shape = tuple(lhs.shape[d] for d in lf) + tuple(rhs.shape[d] for d in rf)
    if not out_shape:
        return _o.sum(prod)
    coords = _o.concatenate(cols, axis=-1) if len(cols) > 1 else cols[0]
    idx = _fill_indices(coords, valid, out_shape, lhs.indices.dtype)
    return BCOO((prod, idx), shape=out_shape)


def bcoo_dot_general(lhs, rhs, *, dimension_numbers, precision=None, preferred_element_type=None, out_sharding=None):
    """A general contraction with a sparse operand (``jax.experimental.sparse.bcoo_dot_general``):
    ``lax.dot_general``'s ``dimension_numbers`` and output order (batch, lhs free, rhs free).
    Sparse x dense gathers the dense rows each stored element meets and scatter-adds the
    products into the output rows of its free sparse coordinates.

    Args:
        lhs, rhs: a BCOO and a dense array (either side), or two BCOOs.
        dimension_numbers: ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``;
            the batch dimensions of the sparse operand must be among its batch dimensions, and
            it may not contract dense dimensions (as JAX).
        precision, out_sharding: accepted and ignored.
        preferred_element_type: the dtype the operands are converted to first.

    Returns:
        Dense array when one operand is dense; a BCOO when both are sparse (supported for
        n_batch = n_dense = 0).

    Example:
        >>> import quabla.experimental.sparse as qs
        >>> M = qs.BCOO.fromdense(qb.array([[1.0, 0.0], [0.0, 2.0]]))
        >>> qs.bcoo_dot_general(M, qb.array([3.0, 4.0]), dimension_numbers=(((1,), (0,)), ((), ()))).tolist()
        [3.0, 8.0]
    """
    name = "bcoo_dot_general"
    del precision, out_sharding
    pet = None if preferred_element_type is None else _dtype(preferred_element_type)
    ls, rs = isinstance(lhs, BCOO), isinstance(rhs, BCOO)
    if not ls and not rs:
        return _lax.dot_general(_arr(name, "lhs", lhs), _arr(name, "rhs", rhs), dimension_numbers, preferred_element_type=preferred_element_type)
    if ls and rs:
        lc, rc, lb, rb = _dnums_arg(name, dimension_numbers, lhs.shape, rhs.shape)
        return _spsp(name, lhs, rhs, lc, rc, lb, rb, pet)
    if ls:
        if _is_sparse(rhs):
            raise ArgumentTypeError(f"{name}: rhs must be a BCOO or a dense array, got {type(rhs).__name__}")
        r = _arr(name, "rhs", rhs)
        lc, rc, lb, rb = _dnums_arg(name, dimension_numbers, lhs.shape, r.shape)
        return _spdense(name, lhs, r, lc, rc, lb, rb, pet)
    if _is_sparse(lhs):
        raise ArgumentTypeError(f"{name}: lhs must be a BCOO or a dense array, got {type(lhs).__name__}")
    left = _arr(name, "lhs", lhs)
    lc, rc, lb, rb = _dnums_arg(name, dimension_numbers, left.shape, rhs.shape)
    out = _spdense(name, rhs, left, rc, lc, rb, lb, pet)
    n_b = len(lb)
    n_rf = rhs.ndim - len(rc) - len(rb)
    n_lf = left.ndim - len(lc) - len(lb)
    perm = tuple(range(n_b)) + tuple(range(n_b + n_rf, n_b + n_rf + n_lf)) + tuple(range(n_b, n_b + n_rf))
    return _o.transpose(out, perm) if perm != tuple(range(out.ndim)) else out


def bcoo_dot_general_sampled(A, B, indices, *, dimension_numbers):
    """``dot_general(A, B)`` evaluated only at the BCOO ``indices`` of its result
    (``jax.experimental.sparse.bcoo_dot_general_sampled``): the data of the sampled product.
    A 2-D x 2-D product sampled at 2-D indices gathers one row of each per index; other
    forms compute the dense product and extract.

    Args:
        A, B: dense arrays.
        indices: BCOO indices (batch + (nse, n_sparse)) into the product's shape.
        dimension_numbers: as ``lax.dot_general``'s.

    Returns:
        The data array (0 at out-of-bounds indices).

    Example:
        >>> import quabla.experimental.sparse as qs
        >>> A, B = qb.array([[1.0, 2.0], [3.0, 4.0]]), qb.array([[1.0, 0.0], [0.0, 1.0]])
        >>> qs.bcoo_dot_general_sampled(A, B, qb.array([[1, 0]]), dimension_numbers=(((1,), (0,)), ((), ()))).tolist()
        [3.0]
    """
    name = "bcoo_dot_general_sampled"
    a = _arr(name, "A", A)
    b = _arr(name, "B", B)
    idx = _arr(name, "indices", indices)
    if not idx.dtype.is_int or idx.ndim < 2:
        raise ShapeError(f"{name}: indices must be integer BCOO indices of shape batch + (nse, n_sparse), got {idx.dtype.name} {tuple(idx.shape)}")
    lc, rc, lb, rb = _dnums_arg(name, dimension_numbers, a.shape, b.shape)
    nb = idx.ndim - 2
    if a.ndim == 2 and b.ndim == 2 and len(lc) == 1 and not lb and nb == 0 and int(idx.shape[-1]) == 2:
        ar = _o.transpose(a) if lc[0] == 0 else a  # rows of A along its free dim
        br = _o.transpose(b) if rc[0] == 0 else b  # rows of B along its free dim
        out_shape = (int(ar.shape[0]), int(br.shape[0]))
        i, valid = _wrap(idx, out_shape)
        r0 = _o.take(ar, _o.where(valid, i[:, 0], 0), axis=0)
        r1 = _o.take(br, _o.where(valid, i[:, 1], 0), axis=0)
        s = _o.sum(_o.multiply(r0, r1), axis=-1)
        return _o.where(valid, s, _o.zeros((), s.dtype))
    dense = _lax.dot_general(a, b, ((lc, rc), (lb, rb)))
    ns = int(idx.shape[-1])
    if nb + ns > dense.ndim:
        raise ShapeError(f"{name}: indices of shape {tuple(idx.shape)} do not fit the product of shape {tuple(dense.shape)}")
    sp = BCOO((_o.zeros(tuple(idx.shape[:-1]) + tuple(dense.shape[nb + ns:]), dense.dtype), idx), shape=tuple(dense.shape), unique_indices=True)
    return bcoo_extract(sp, dense).data


# ---------------------------------------------------------------------------------------------
# Operators (also the rules of sparsify)


def _dense_operand(name, x):
    if _is_sparse(x):
        raise UnsupportedOperationError(f"{name}: {type(x).__name__} operands are not supported here", op=name)
    if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
        return x
    return _arr(name, "operand", x)


def _matmul(a, b):
    """``a @ b`` with one or both operands a BCOO (jnp.matmul's rules; batch dimensions must be
    equal on both sides, or absent on one)."""
    name = "matmul"
    if not isinstance(a, BCOO):
        if not isinstance(b, BCOO):
            raise ArgumentTypeError(f"{name}: expected a BCOO operand")
        a = _dense_operand(name, a)
        a = a if is_array(a) else _o._to_array(a)
    if not isinstance(b, BCOO):
        b = _dense_operand(name, b)
        b = b if is_array(b) else _o._to_array(b)
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(f"{name}: operands must have rank >= 1, got shapes {tuple(a.shape)} and {tuple(b.shape)}")
    an, bn = a.ndim, b.ndim
    lc = an - 1
    rc = 0 if bn == 1 else bn - 2
    if an <= 2 or bn <= 2:
        out = bcoo_dot_general(a, b, dimension_numbers=(((lc,), (rc,)), ((), ())))
        # dot_general order: a's free dims, then b's; matmul puts b's batch dims first.
        if bn > 2 and an <= 2:
            na = an - 1  # a's free dims (0 or 1)
            nbat = bn - 2
            perm = tuple(range(na, na + nbat)) + tuple(range(na)) + (out.ndim - 1,)
            if isinstance(out, BCOO):
                return bcoo_transpose(out, permutation=perm)
            return _o.transpose(out, perm)
        return out
    if tuple(a.shape[:-2]) != tuple(b.shape[:-2]):
        raise UnsupportedOperationError(f"{name}: sparse matmul needs equal batch dimensions, got shapes {tuple(a.shape)} and {tuple(b.shape)}",
                                        op=name)
    bd = tuple(range(an - 2))
    return bcoo_dot_general(a, b, dimension_numbers=(((lc,), (rc,)), (bd, bd)))


def _dot(a, b):
    """``jnp.dot`` with a BCOO operand."""
    if not isinstance(a, BCOO):
        a = _dense_operand("dot", a)
        a = a if is_array(a) else _o._to_array(a)
    if not isinstance(b, BCOO):
        b = _dense_operand("dot", b)
        b = b if is_array(b) else _o._to_array(b)
    if a.ndim == 0 or b.ndim == 0:
        return _multiply(a, b)
    rc = 0 if b.ndim == 1 else b.ndim - 2
    return bcoo_dot_general(a, b, dimension_numbers=(((a.ndim - 1,), (rc,)), ((), ())))


def _multiply(a, b):
    if isinstance(a, BCOO) and isinstance(b, BCOO):
        if a.indices is b.indices and a.unique_indices and a.shape == b.shape:
            return BCOO((_o.multiply(a.data, b.data), a.indices), shape=a.shape, indices_sorted=a.indices_sorted, unique_indices=True)
        return bcoo_multiply_sparse(a, b)
    sp, other = (a, b) if isinstance(a, BCOO) else (b, a)
    other = _dense_operand("multiply", other)
    data = bcoo_multiply_dense(sp, other)
    return BCOO((data, sp.indices), shape=sp.shape, indices_sorted=sp.indices_sorted, unique_indices=sp.unique_indices)


def _divide(a, b):
    if isinstance(b, BCOO):
        raise UnsupportedOperationError("divide: division by a sparse array would give a dense result; use todense() first", op="divide")
    b = _dense_operand("divide", b)
    inv = _o.divide(1, b) if is_array(b) else _o.divide(_o.ones((), a.dtype), b)
    data = bcoo_multiply_dense(a, inv)
    return BCOO((data, a.indices), shape=a.shape, indices_sorted=a.indices_sorted, unique_indices=a.unique_indices)


def _add(a, b):
    name = "add"
    if isinstance(a, BCOO) and isinstance(b, BCOO):
        if a.shape != b.shape:
            raise UnsupportedOperationError(f"{name}: sparse arrays of different shapes {a.shape} and {b.shape}", op=name)
        if a.indices is b.indices:
            return BCOO((_o.add(a.data, b.data), a.indices), shape=a.shape, indices_sorted=a.indices_sorted, unique_indices=a.unique_indices)
        if a.n_batch != b.n_batch or a.n_dense != b.n_dense:
            raise UnsupportedOperationError(f"{name}: sparse arrays with different batch/dense dimensions "
                                            f"(n_batch {a.n_batch}/{b.n_batch}, n_dense {a.n_dense}/{b.n_dense})", op=name)
        ad, ai = _full_bufs(a)
        bd, bi = _full_bufs(b)
        nb = a.n_batch
        dt = _o.add(_o.zeros((), ad.dtype), _o.zeros((), bd.dtype)).dtype
        data = _o.concatenate([_o.astype(ad, dt), _o.astype(bd, dt)], axis=nb)
        idt = ai.dtype if ai.dtype.itemsize >= bi.dtype.itemsize else bi.dtype
        idx = _o.concatenate([_o.astype(ai, idt), _o.astype(bi, idt)], axis=nb)
        return BCOO((data, idx), shape=a.shape)
    sp, other = (a, b) if isinstance(a, BCOO) else (b, a)
    other = _dense_operand(name, other)
    oshape = tuple(other.shape) if is_array(other) else ()
    if oshape != tuple(sp.shape):
        raise UnsupportedOperationError(f"{name}: adding a sparse array of shape {sp.shape} and a dense operand of shape {oshape} "
                                        "would densify the sparse array; call todense() first if that is the intent", op=name)
    d = bcoo_todense(sp)
    return _o.add(d, other) if isinstance(a, BCOO) else _o.add(other, d)


def _subtract(a, b):
    if isinstance(a, BCOO) and isinstance(b, BCOO):
        return _add(a, _unary_linear(b, _o.negative))
    raise UnsupportedOperationError("subtract: subtraction between a sparse and a dense array is not supported (as JAX); "
                                    "call todense() first", op="subtract")


def _unary_linear(mat, fn):
    return BCOO((fn(mat.data), mat.indices), shape=mat.shape, indices_sorted=mat.indices_sorted, unique_indices=mat.unique_indices)


def _unary_nonlinear(mat, fn):
    """A zero-preserving elementwise function: applied to the data once duplicates are summed."""
    if not mat.unique_indices:
        mat = bcoo_sum_duplicates(mat, nse=mat.nse)
    return _unary_linear(mat, fn)
