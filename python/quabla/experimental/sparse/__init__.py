"""``qb.experimental.sparse``: JAX's ``jax.experimental.sparse`` core built from Quabla ops.

:class:`BCOO` (batched coordinate) arrays store ``data`` (``batch + (nse,) + dense``) and
``indices`` (``batch + (nse, n_sparse)``); :class:`BCSR` stores two sparse dimensions as
column indices and row pointers. Every operation is a fixed sequence of gathers
(``take``), scatter-adds (``x.at[rows].add``), cumulative sums and sorts over all stored
elements at once (no Python loop over elements), so it runs eagerly, under ``qb.jit``,
differentiates with respect to ``data`` and dense operands (``qb.grad``), and batches under
``qb.vmap`` (a sparse argument is mapped over its batch dimensions; a sparse result gains
one). :func:`sparsify` runs functions written for dense arrays with sparse arguments.

Differences from JAX, all from Quabla's arrays having no zero-size extents: ``nse`` is at
least 1 (an empty or all-zero array stores one padding element), and ``n_sparse`` is at
least 1 (layouts and reductions that would leave no sparse dimension either raise, or, in
``bcoo_reduce_sum``, store the dense result with one dimension made sparse). A dense Quabla
array on the left of a sparse one (``x @ M``, ``x * M``) needs the package to defer to the
sparse operand; ``qs.bcoo_dot_general``/``sparsify`` and NumPy left operands work regardless.

Example:
    >>> import quabla.experimental.sparse as qs
    >>> M = qs.BCOO.fromdense(qb.array([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]]))
    >>> M.nse, (M @ qb.array([1.0, 1.0, 1.0])).tolist()
    (3, [1.0, 5.0])
"""

import math

import numpy as np

from ... import _ops as _o
from ... import random as _random
from ...dtypes import dtype as _dtype
from ...errors import ArgumentTypeError, InvalidArgumentError, ShapeError, UnsupportedOperationError
from ._bcoo import (BCOO, JAXSparse, SparseEfficiencyError, SparseEfficiencyWarning, _index_dtype, _is_sparse, _prod, _shape_tuple,
                    _static_int, bcoo_dot_general, bcoo_dot_general_sampled, bcoo_extract, bcoo_fromdense, bcoo_multiply_dense,
                    bcoo_multiply_sparse, bcoo_reduce_sum, bcoo_reshape, bcoo_sort_indices, bcoo_sum_duplicates, bcoo_todense,
                    bcoo_transpose, bcoo_update_layout)
from ._bcsr import BCSR, bcsr_dot_general, bcsr_fromdense, bcsr_todense
from ._transform import sparsify

__all__ = [
    "JAXSparse", "BCOO", "BCSR", "SparseEfficiencyError", "SparseEfficiencyWarning",
    "bcoo_todense", "bcoo_fromdense", "bcoo_dot_general", "bcoo_dot_general_sampled", "bcoo_transpose", "bcoo_reduce_sum",
    "bcoo_multiply_dense", "bcoo_multiply_sparse", "bcoo_extract", "bcoo_sum_duplicates", "bcoo_sort_indices",
    "bcoo_update_layout", "bcoo_reshape", "bcsr_fromdense", "bcsr_todense", "bcsr_dot_general",
    "todense", "fromdense", "empty", "eye", "random_bcoo", "sparsify",
]


def todense(arr):
    """A dense array of a sparse one; a dense argument passes through (``jax.experimental.sparse.todense``).

    Args:
        arr: a BCOO, a BCSR or a dense array.

    Returns:
        The dense array.

    Example:
        >>> import quabla.experimental.sparse as qs
        >>> qs.todense(qs.BCOO.fromdense(qb.array([0.0, 3.0]))).tolist()
        [0.0, 3.0]
    """
    if _is_sparse(arr):
        return arr.todense()
    try:
        return _o._to_array(arr)
    except ArgumentTypeError as e:
        raise ArgumentTypeError(f"todense: arr must be a sparse or dense array, got {type(arr).__name__}") from e


def fromdense(mat, *, nse=None, n_batch=0, n_dense=0, index_dtype="int32"):
    """``bcoo_fromdense`` (a Quabla convenience name; JAX spells it ``BCOO.fromdense``).

    Args:
        mat, nse, n_batch, n_dense, index_dtype: as :func:`bcoo_fromdense`.

    Returns:
        A BCOO.

    Example:
        >>> import quabla.experimental.sparse as qs
        >>> qs.fromdense(qb.array([0.0, 3.0])).indices.tolist()
        [[1]]
    """
    return bcoo_fromdense(mat, nse=nse, n_batch=n_batch, n_dense=n_dense, index_dtype=index_dtype)


def _float_dtype(name, dtype):
    if dtype is None:
        return _dtype("float64")
    try:
        return _dtype(dtype)
    except Exception as e:  # noqa: BLE001
        raise ArgumentTypeError(f"{name}: dtype must be a dtype, got {dtype!r}") from e


def _empty_bcoo(name, shape, dtype, index_dtype, n_batch, n_dense, nse):
    shape = _shape_tuple(name, shape)
    nb = _static_int(name, "n_batch", n_batch, 0)
    nd = _static_int(name, "n_dense", n_dense, 0)
    nse = max(_static_int(name, "nse", nse, 0), 1)
    ns = len(shape) - nb - nd
    if ns < 1:
        raise ShapeError(f"{name}: shape {shape} with n_batch={nb}, n_dense={nd} leaves no sparse dimension (Quabla needs n_sparse >= 1)")
    idt = _index_dtype(name, index_dtype)
    dt = _float_dtype(name, dtype)
    batch, sparse, dense = shape[:nb], shape[nb:nb + ns], shape[nb + ns:]
    data = _o.zeros(batch + (nse,) + dense, dt)
    idx = _o.array(np.broadcast_to(np.asarray(sparse, dtype=idt.np), batch + (nse, ns)).copy())
    return BCOO((data, idx), shape=shape, indices_sorted=True, unique_indices=True)


def empty(shape, dtype=None, index_dtype="int32", sparse_format="bcoo", **kwds):
    """An all-zero sparse array (``jax.experimental.sparse.empty``).

    Args:
        shape: the shape.
        dtype: data dtype (float64 by default, as JAX with x64).
        index_dtype: dtype of the indices.
        sparse_format: 'bcoo' or 'bcsr'.
        **kwds: ``n_batch``, ``n_dense`` and ``nse`` (JAX's 0 becomes 1: one padding element).

    Returns:
        A BCOO (or BCSR) storing only padding.

    Example:
        >>> import quabla.experimental.sparse as qs
        >>> qs.empty((2, 3)).todense().tolist()
        [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    """
    if sparse_format not in ("bcoo", "bcsr"):
        raise UnsupportedOperationError(f"empty: sparse_format must be 'bcoo' or 'bcsr', got {sparse_format!r}", op="empty")
    bad = set(kwds) - {"n_batch", "n_dense", "nse"}
    if bad:
        raise ArgumentTypeError(f"empty: unexpected keyword arguments {sorted(bad)}")
    m = _empty_bcoo("empty", shape, dtype, index_dtype, kwds.get("n_batch", 0), kwds.get("n_dense", 0), kwds.get("nse", 0))
    if sparse_format == "bcsr":
        if m.n_sparse != 2:
            raise ShapeError(f"empty: a BCSR needs 2 sparse dimensions, got shape {m.shape} with n_batch={m.n_batch}, n_dense={m.n_dense}")
        return BCSR.from_bcoo(m)
    return m


def eye(N, M=None, k=0, dtype=None, index_dtype="int32", sparse_format="bcoo", **kwds):
    """A sparse identity (ones on the ``k``-th diagonal) (``jax.experimental.sparse.eye``).

    Args:
        N: rows; M: columns (default N); k: the diagonal (positive: above).
        dtype: data dtype (float64 by default); index_dtype: dtype of the indices.
        sparse_format: 'bcoo' or 'bcsr'.
        **kwds: ``n_batch`` (0 or 1 store the diagonal only) and ``n_dense``.

    Returns:
        A BCOO (or BCSR) of shape (N, M).

    Example:
        >>> import quabla.experimental.sparse as qs
        >>> qs.eye(2, 3, k=1).todense().tolist()
        [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    name = "eye"
    if sparse_format not in ("bcoo", "bcsr"):
        raise UnsupportedOperationError(f"{name}: sparse_format must be 'bcoo' or 'bcsr', got {sparse_format!r}", op=name)
    bad = set(kwds) - {"n_batch", "n_dense"}
    if bad:
        raise ArgumentTypeError(f"{name}: unexpected keyword arguments {sorted(bad)}")
    n = _static_int(name, "N", N, 1)
    m = n if M is None else _static_int(name, "M", M, 1)
    k = _static_int(name, "k", k)
    nb = _static_int(name, "n_batch", kwds.get("n_batch", 0), 0)
    nd = _static_int(name, "n_dense", kwds.get("n_dense", 0), 0)
    idt = _index_dtype(name, index_dtype)
    dt = _float_dtype(name, dtype)
    if nb + nd > 1:
        raise ShapeError(f"{name}: n_batch={nb} and n_dense={nd} leave no sparse dimension (Quabla needs n_sparse >= 1)")
    diag = min(n, m - k) if k > 0 else min(n + k, m)
    _o._shape_arg(name, (max(diag, 1), 2), idt)  # the stored diagonal must be able to exist
    if diag <= 0:
        out = _empty_bcoo(name, (n, m), dt, idt, nb, nd, 0)
    elif nd > 0:
        out = bcoo_fromdense(_o.eye(n, m, k, dtype=dt), n_batch=nb, n_dense=nd, index_dtype=idt)
    elif nb == 0:
        i = np.arange(diag, dtype=np.int64)
        idx = np.stack([i + max(-k, 0), i + max(k, 0)], axis=1).astype(idt.np)
        out = BCOO((_o.ones((diag,), dt), _o.array(idx)), shape=(n, m), indices_sorted=True, unique_indices=True)
    else:
        col = np.arange(n, dtype=np.int64) + k
        ok = (col >= 0) & (col < m)
        data = _o.array(ok.astype(dt.np).reshape(n, 1))
        idx = np.where(ok, col, m).astype(idt.np).reshape(n, 1, 1)
        out = BCOO((data, _o.array(idx)), shape=(n, m), indices_sorted=True, unique_indices=True)
    if sparse_format == "bcsr":
        if out.n_sparse != 2:
            raise ShapeError(f"{name}: a BCSR needs 2 sparse dimensions (n_batch = n_dense = 0)")
        return BCSR.from_bcoo(out)
    return out


def random_bcoo(key, shape, *, dtype=None, indices_dtype=None, nse=0.2, n_batch=0, n_dense=0, unique_indices=True,
                sorted_indices=False, generator=None, **kwds):
    """A random BCOO (``jax.experimental.sparse.random_bcoo``): ``nse`` indices per batch drawn
    by ``qb.random.choice`` (without replacement when ``unique_indices``), data from
    ``generator(key, shape=, dtype=, **kwds)``. Quabla's random streams differ from JAX's, so
    the values do too.

    Args:
        key: PRNG key.
        shape: the shape.
        dtype: data dtype (float64); indices_dtype: index dtype (int64, JAX's default int).
        nse: stored elements per batch, or a fraction (0 < nse < 1) of the sparse size.
        n_batch, n_dense: layout.
        unique_indices: draw distinct indices; sorted_indices: sort them.
        generator: value generator (``qb.random.uniform``).
        **kwds: passed to ``generator``.

    Returns:
        A BCOO.

    Example:
        >>> import quabla.experimental.sparse as qs
        >>> M = qs.random_bcoo(qb.random.PRNGKey(0), (4, 5), nse=3)
        >>> M.shape, M.nse
        ((4, 5), 3)
    """
    name = "random_bcoo"
    shape = _shape_tuple(name, shape)
    nb = _static_int(name, "n_batch", n_batch, 0)
    nd = _static_int(name, "n_dense", n_dense, 0)
    ns = len(shape) - nb - nd
    if ns < 1:
        raise ShapeError(f"{name}: shape {shape} with n_batch={nb}, n_dense={nd} leaves no sparse dimension (Quabla needs n_sparse >= 1)")
    batch, sparse, dense = shape[:nb], shape[nb:nb + ns], shape[nb + ns:]
    bsz, ssz = _prod(batch), _prod(sparse)
    if isinstance(nse, bool) or not isinstance(nse, (int, float, np.integer, np.floating)):
        raise ArgumentTypeError(f"{name}: nse must be a number, got {type(nse).__name__}")
    if not 0 < nse < ssz:
        raise InvalidArgumentError(f"{name}: nse must be in (0, {ssz}) (Quabla needs nse >= 1), got {nse}")
    if 0 < nse < 1:
        nse = int(math.ceil(nse * ssz))
    if int(nse) != nse:
        raise InvalidArgumentError(f"{name}: nse must be an integer or a fraction in (0, 1), got {nse}")
    nse = int(nse)
    idt = _index_dtype(name, "int64" if indices_dtype is None else indices_dtype)
    if ssz > np.iinfo(idt.np).max:
        raise InvalidArgumentError(f"{name}: indices_dtype {idt.name} cannot index a sparse size of {ssz}")
    gen = _random.uniform if generator is None else generator
    if not callable(gen):
        raise ArgumentTypeError(f"{name}: generator must be callable, got {type(gen).__name__}")
    keys = _random.split(key, bsz + 1)
    data = gen(keys[0], shape=batch + (nse,) + dense, dtype=_float_dtype(name, dtype), **kwds)
    rows = []
    for b in range(bsz):  # one draw per batch (a static count)
        rows.append(_random.choice(keys[b + 1], ssz, shape=(nse,), replace=not unique_indices))
    flat = _o.stack(rows) if bsz > 1 else _o.reshape(rows[0], (1, nse))
    flat = _o.astype(flat, "int64")
    cols, stride = [], ssz
    for s in sparse:
        stride //= s
        cols.append((flat // stride) % s)
    idx = _o.astype(_o.reshape(_o.stack(cols, axis=-1), batch + (nse, ns)), idt)
    mat = BCOO((data, idx), shape=shape)
    return bcoo_sort_indices(mat) if sorted_indices else mat
