"""The BCSR (batched compressed sparse row) array: two sparse dimensions stored as column
indices and row pointers; conversions go through BCOO (row of each element from the row
pointers by one scatter and one cumulative sum; pointers from the rows by one scatter-add
and one cumulative sum)."""

from ... import _ops as _o
from ... import tree as _tree
from ..._conv import cumsum as _cumsum
from ..._trace import is_array
from ...dtypes import int64
from ...errors import ArgumentTypeError, DTypeError, ShapeError, UnsupportedOperationError
from ._bcoo import (BCOO, JAXSparse, _arr, _batch_iota, _derive_shape, _full_bufs, _index_dtype, _is_sparse, _prod, _shape_tuple,
                    _static_int, bcoo_dot_general, bcoo_fromdense, bcoo_sort_indices, bcoo_todense)


class BCSR(JAXSparse):
    """A batched compressed-sparse-row array (``jax.experimental.sparse.BCSR``).

    Args:
        args: ``(data, indices, indptr)``: ``data`` of shape ``batch + (nse,) + dense``,
            column ``indices`` of shape ``batch + (nse,)`` and row pointers ``indptr`` of
            shape ``batch + (n_rows + 1,)``.
        shape: ``batch + (n_rows, n_cols) + dense``.
        indices_sorted, unique_indices: promises kept as flags.

    Returns:
        The sparse array (a pytree of its three buffers).

    Example:
        >>> import quabla.experimental.sparse as qs
        >>> M = qs.BCSR.fromdense(qb.array([[0.0, 1.0], [2.0, 0.0]]))
        >>> M.indptr.tolist(), (M @ qb.array([1.0, 1.0])).tolist()
        ([0, 1, 2], [1.0, 2.0])
    """

    _INDEX_TAIL = 1

    def __init__(self, args, *, shape, indices_sorted=False, unique_indices=False):
        name = "BCSR"
        if not isinstance(args, (tuple, list)) or len(args) != 3:
            raise ArgumentTypeError(f"{name}: args must be a (data, indices, indptr) triple, got {type(args).__name__}")
        data, indices, indptr = (_arr(name, w, a) for w, a in zip(("data", "indices", "indptr"), args))
        shape = _shape_tuple(name, shape)
        if not indices.dtype.is_int or not indptr.dtype.is_int:
            raise DTypeError(f"{name}: indices and indptr must be integers, got {indices.dtype.name} and {indptr.dtype.name}")
        nb = indices.ndim - 1
        if nb < 0 or len(shape) < nb + 2:
            raise ShapeError(f"{name}: indices of shape {tuple(indices.shape)} do not fit shape {shape}")
        nse = int(indices.shape[-1])
        nd = len(shape) - nb - 2
        if tuple(indptr.shape) != tuple(indices.shape[:nb]) + (shape[nb] + 1,) or any(i not in (1, s) for i, s in zip(indices.shape[:nb], shape[:nb])):
            raise ShapeError(f"{name}: indptr of shape {tuple(indptr.shape)} does not fit indices {tuple(indices.shape)} and shape {shape}")
        if data.ndim != nb + 1 + nd or tuple(data.shape[nb:]) != (nse,) + tuple(shape[nb + 2:]):
            raise ShapeError(f"{name}: data of shape {tuple(data.shape)} does not fit nse={nse}, n_batch={nb} and shape {shape}")
        self.data, self.indices, self.indptr, self.shape = data, indices, indptr, shape
        self.indices_sorted, self.unique_indices = bool(indices_sorted), bool(unique_indices)

    @property
    def n_sparse(self):
        return 2

    def __repr__(self):
        try:
            extra = f", nse={self.nse}" + (f", n_batch={self.n_batch}" if self.n_batch else "") + (f", n_dense={self.n_dense}" if self.n_dense else "")
            return f"BCSR({self.dtype.name}{list(self.shape)}{extra})"
        except Exception:  # noqa: BLE001
            return "BCSR(<invalid>)"

    def tree_flatten(self):
        return (self.data, self.indices, self.indptr), (self.shape, self.n_batch, self.indices_sorted, self.unique_indices)

    @classmethod
    def tree_unflatten(cls, aux, children):
        shape, nb, srt, unq = aux
        data, indices, indptr = children
        obj = object.__new__(cls)
        if is_array(indices) and is_array(data):
            shape = _derive_shape(shape, nb, data, _Shape(tuple(indices.shape) + (1,)), indices.ndim - 1)
        obj.data, obj.indices, obj.indptr, obj.shape, obj._nb = data, indices, indptr, tuple(shape), nb
        obj.indices_sorted, obj.unique_indices = srt, unq
        return obj

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype="int32", n_dense=0, n_batch=0):
        """``bcsr_fromdense`` as a constructor.

        Example:
            >>> import quabla.experimental.sparse as qs
            >>> qs.BCSR.fromdense(qb.array([[0.0, 1.0], [2.0, 3.0]])).nse
            3
        """
        return bcsr_fromdense(mat, nse=nse, n_batch=n_batch, n_dense=n_dense, index_dtype=index_dtype)

    @classmethod
    def from_bcoo(cls, arr):
        """A BCSR holding a BCOO with two sparse dimensions (its indices sorted first).

        Example:
            >>> import quabla.experimental.sparse as qs
            >>> qs.BCSR.from_bcoo(qs.BCOO.fromdense(qb.eye(2))).indices.tolist()
            [0, 1]
        """
        if not isinstance(arr, BCOO):
            raise ArgumentTypeError(f"BCSR.from_bcoo: arr must be a BCOO, got {type(arr).__name__}")
        if arr.n_sparse != 2:
            raise ShapeError(f"BCSR.from_bcoo: needs 2 sparse dimensions, got n_sparse={arr.n_sparse}")
        if not arr.indices_sorted:
            arr = bcoo_sort_indices(arr)
        data, idx = _full_bufs(arr)
        indices, indptr = _bcoo_to_bcsr(idx, arr.shape, arr.n_batch)
        return cls((data, indices, indptr), shape=arr.shape, indices_sorted=True, unique_indices=arr.unique_indices)

    def to_bcoo(self):
        """The same array as a BCOO.

        Example:
            >>> import quabla.experimental.sparse as qs
            >>> qs.BCSR.fromdense(qb.eye(2)).to_bcoo().indices.tolist()
            [[0, 0], [1, 1]]
        """
        idx = _bcsr_to_bcoo(self.indices, self.indptr, self.shape)
        return BCOO((self.data, idx), shape=self.shape, indices_sorted=self.indices_sorted, unique_indices=self.unique_indices)

    def todense(self):
        """The dense array (``bcsr_todense``).

        Example:
            >>> import quabla.experimental.sparse as qs
            >>> qs.BCSR.fromdense(qb.array([[0.0, 1.0], [2.0, 0.0]])).todense().tolist()
            [[0.0, 1.0], [2.0, 0.0]]
        """
        return bcsr_todense(self)

    def transpose(self, axes=None):
        raise UnsupportedOperationError("BCSR.transpose: not implemented (as JAX); use to_bcoo().transpose()", op="BCSR.transpose")

    def __matmul__(self, other):
        if _is_sparse(other):
            raise UnsupportedOperationError("BCSR @ sparse: not supported; convert with to_bcoo()", op="BCSR.__matmul__")
        return self.to_bcoo() @ other

    def __rmatmul__(self, other):
        if _is_sparse(other):
            raise UnsupportedOperationError("sparse @ BCSR: not supported; convert with to_bcoo()", op="BCSR.__rmatmul__")
        return other @ self.to_bcoo() if not is_array(other) else self.to_bcoo().__rmatmul__(other)


class _Shape:
    """A stand-in with only a shape (for the batch-dimension bookkeeping of ``_derive_shape``)."""

    def __init__(self, shape):
        self.shape = shape
        self.ndim = len(shape)


_tree.register_pytree_node(BCSR, lambda m: m.tree_flatten(), BCSR.tree_unflatten)


def _bcoo_to_bcsr(idx, shape, nb):
    """Column indices and row pointers of full-batch, sorted BCOO indices (batch + (nse, 2))."""
    batch = tuple(shape[:nb])
    bt, nse = _prod(batch), int(idx.shape[-2])
    n_rows = int(shape[nb])
    rows = _o.reshape(_o.astype(idx[..., 0], int64), (bt, nse))
    ok = (rows >= 0) & (rows < n_rows)
    pos = _o.where(ok, _batch_iota(bt, nse) * n_rows + rows, bt * n_rows)
    counts = _o.zeros((bt * n_rows,), int64).at[_o.ravel(pos)].add(_o.ones((bt * nse,), int64), mode="drop")
    ptr = _cumsum(_o.reshape(counts, (bt, n_rows)), axis=1)
    ptr = _o.concatenate([_o.zeros((bt, 1), int64), ptr], axis=1)
    indptr = _o.astype(_o.reshape(ptr, batch + (n_rows + 1,)), idx.dtype)
    return idx[..., 1], indptr


def _bcsr_to_bcoo(indices, indptr, shape):
    """BCOO indices (batch + (nse, 2)) of BCSR column indices and row pointers: the row of
    element e is the number of row pointers indptr[1:] at or below e."""
    nb = indices.ndim - 1
    batch = tuple(shape[:nb])
    bt, nse = _prod(batch), int(indices.shape[-1])
    n_rows = int(shape[nb])
    ind = _o.broadcast_to(indices, batch + (nse,))
    ptr = _o.reshape(_o.astype(_o.broadcast_to(indptr, batch + (n_rows + 1,)), int64), (bt, n_rows + 1))
    p = ptr[:, 1:]
    slot = _o.where((p >= 0) & (p <= nse), _batch_iota(bt, n_rows) * (nse + 1) + p, bt * (nse + 1))
    marks = _o.zeros((bt * (nse + 1),), int64).at[_o.ravel(slot)].add(_o.ones((bt * n_rows,), int64), mode="drop")
    rows = _cumsum(_o.reshape(marks, (bt, nse + 1)), axis=1)[:, :nse]
    rows = _o.astype(_o.reshape(rows, batch + (nse,)), indices.dtype)
    return _o.stack([rows, ind], axis=-1)


def bcsr_fromdense(mat, *, nse=None, n_batch=0, n_dense=0, index_dtype="int32"):
    """A BCSR holding the nonzero entries of a dense array (``jax.experimental.sparse.bcsr_fromdense``).

    Args:
        mat: dense array with ``n_batch + 2 + n_dense`` dimensions.
        nse: stored elements per batch (None counts them; needs a concrete ``mat``).
        n_batch, n_dense: batch and dense dimension counts.
        index_dtype: dtype of ``indices`` and ``indptr``.

    Returns:
        A BCSR array.

    Example:
        >>> import quabla.experimental.sparse as qs
        >>> qs.bcsr_fromdense(qb.array([[1.0, 0.0], [2.0, 3.0]])).indptr.tolist()
        [0, 1, 3]
    """
    name = "bcsr_fromdense"
    x = _arr(name, "mat", mat) if not _is_sparse(mat) else None
    if x is None:
        raise ArgumentTypeError(f"{name}: mat must be a dense array, got {type(mat).__name__}")
    nb = _static_int(name, "n_batch", n_batch, 0)
    nd = _static_int(name, "n_dense", n_dense, 0)
    _index_dtype(name, index_dtype)
    if x.ndim - nb - nd != 2:
        raise ShapeError(f"{name}: mat of shape {tuple(x.shape)} with n_batch={nb}, n_dense={nd} must have 2 sparse dimensions")
    sp = bcoo_fromdense(x, nse=nse, n_batch=nb, n_dense=nd, index_dtype=index_dtype)
    indices, indptr = _bcoo_to_bcsr(sp.indices, sp.shape, nb)
    return BCSR((sp.data, indices, indptr), shape=sp.shape, indices_sorted=True, unique_indices=True)


def bcsr_todense(mat):
    """The dense array of a BCSR (``jax.experimental.sparse.bcsr_todense``).

    Args:
        mat: a BCSR array.

    Returns:
        Array of ``mat.shape``.

    Example:
        >>> import quabla.experimental.sparse as qs
        >>> qs.bcsr_todense(qs.BCSR.fromdense(qb.array([[0.0, 4.0]]))).tolist()
        [[0.0, 4.0]]
    """
    if not isinstance(mat, BCSR):
        raise ArgumentTypeError(f"bcsr_todense: mat must be a BCSR array, got {type(mat).__name__}")
    return bcoo_todense(mat.to_bcoo())


def bcsr_dot_general(lhs, rhs, *, dimension_numbers, precision=None, preferred_element_type=None, out_sharding=None):
    """``bcoo_dot_general`` with a BCSR operand (``jax.experimental.sparse.bcsr_dot_general``).

    Args:
        lhs, rhs: a BCSR and a dense array (either side).
        dimension_numbers: as ``lax.dot_general``'s.
        precision, out_sharding: ignored; preferred_element_type: the operands' dtype.

    Returns:
        The dense product.

    Example:
        >>> import quabla.experimental.sparse as qs
        >>> M = qs.BCSR.fromdense(qb.array([[1.0, 0.0], [0.0, 2.0]]))
        >>> qs.bcsr_dot_general(M, qb.array([1.0, 1.0]), dimension_numbers=(((1,), (0,)), ((), ()))).tolist()
        [1.0, 2.0]
    """
    if isinstance(lhs, BCSR) and isinstance(rhs, BCSR):
        raise UnsupportedOperationError("bcsr_dot_general: BCSR x BCSR is not supported", op="bcsr_dot_general")
    lhs = lhs.to_bcoo() if isinstance(lhs, BCSR) else lhs
    rhs = rhs.to_bcoo() if isinstance(rhs, BCSR) else rhs
    return bcoo_dot_general(lhs, rhs, dimension_numbers=dimension_numbers, precision=precision,
                            preferred_element_type=preferred_element_type, out_sharding=out_sharding)


__all__ = ["BCSR", "bcsr_fromdense", "bcsr_todense", "bcsr_dot_general"]
