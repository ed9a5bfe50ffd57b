"""``qb.lax.linalg``: ``jax.lax.linalg`` (JAX 0.10.2) on Quabla's linear-algebra ops.

The functions keep ``lax.linalg``'s signatures and return conventions, which differ from
``qb.linalg`` / ``qb.scipy.linalg``: ``eigh`` returns ``(v, w)``, ``lu`` returns ``[lu, pivots,
permutation]`` (int32 pivots and permutation), ``triangular_solve`` solves ``x a = b`` unless
``left_side=True``, ``hessenberg`` and ``tridiagonal`` return LAPACK's packed reflectors.
Everything works on ``[..., m, n]`` batches, eagerly, under ``jit`` and ``vmap``, and with
``grad`` where JAX defines a derivative (``cholesky``, ``eigh``, ``lu``, ``qr``, ``svd``,
``triangular_solve``, ``tridiagonal_solve``; the others are differentiable too, through their
loops).

Names: ``cholesky``, ``cholesky_update``, ``eig``, ``eigh``, ``hessenberg``,
``householder_product``, ``lu``, ``lu_pivots_to_permutation``, ``ormqr``, ``qdwh``, ``qr``,
``schur``, ``svd``, ``symmetric_product``, ``triangular_solve``, ``tridiagonal``,
``tridiagonal_solve``, and the enums ``EigImplementation``, ``EighImplementation``,
``SvdAlgorithm``. The ``*_p`` primitives are not provided.

Differences from JAX (also in each docstring):

* Real dtypes only. Integer and bool inputs become float64 (as ``qb.linalg``), where JAX
  raises a TypeError; float32 stays float32.
* ``eig`` and ``schur`` raise UnsupportedOperationError (complex results; no real Schur
  kernel).
* Batch dimensions of the several operands of ``triangular_solve``, ``ormqr``,
  ``symmetric_product`` and ``cholesky_update`` broadcast (JAX wants equal batch dims;
  ``cholesky_update`` and ``qdwh`` take one matrix in JAX, a batch here).
* ``eigh(subset_by_index=...)`` and ``svd(subset_by_index=...)`` select from the full
  decomposition (JAX's CPU backend raises NotImplementedError); ``sort_eigenvalues=False``
  still sorts; every ``implementation`` / ``algorithm`` computes the same decomposition.
* ``qdwh`` computes the polar decomposition from the SVD (``u = U Vh``, ``h = V S Vh``): the
  same result to rounding, differentiable; it returns ``num_iters = 0`` and
  ``is_converged = True``; ``max_iterations`` and ``eps`` are checked and ignored.
* ``qr(pivoting=True)`` picks the pivots greedily (largest remaining column norm, as
  LAPACK's ``geqp3``), then factors the permuted columns; near-ties between columns may be
  broken differently from LAPACK.
* ``tridiagonal_solve`` is Gaussian elimination with partial pivoting (LAPACK ``gtsv``'s
  scheme); ``perturb_singular=True`` replaces pivots smaller than ``eps * max|U|`` by that
  amount (a simplification of LAPACK ``dlagts``'s rule).
* Eigenvector and singular vector signs may differ from LAPACK's (as ``qb.linalg``).
* Derivatives the ops lack are added here with JAX's formulas: ``lu`` of a non-square
  matrix, ``qr`` of a wide matrix (``[x1 x2] = q [r1 q^T x2]``) and the complete ``qr`` of a
  tall one. For a wide ``qr(pivoting=True)`` the gradient is the true one, where JAX 0.10.2's
  JVP uses the unpermuted ``x`` for ``R``'s trailing block (wrong by O(1)).
* ``hessenberg`` and ``tridiagonal`` of a 1 x 1 matrix are a ShapeError (their ``taus``
  would be empty: Quabla has no zero-size arrays).

Example:
    >>> v, w = qb.lax.linalg.eigh(qb.array([[2.0, 1.0], [1.0, 2.0]]))
    >>> [round(x, 12) for x in w.tolist()]
    [1.0, 3.0]
"""

import enum

import numpy as np

from . import _ops as _o
from . import dtypes as _dt
from . import linalg as _la
from ._control import fori_loop as _fori_loop
from ._control import scan as _scan
from ._control import stop_gradient as _stop_gradient
from ._custom import custom_jvp as _custom_jvp
from ._indexing import take_along_axis as _take_along_axis
from ._numpy import flip as _flip
from ._numpy import tril as _tril
from ._numpy import triu as _triu
from ._shape import moveaxis as _moveaxis
from ._trace import bind
from ._trace import is_array as _is_array
from ._transforms import jvp as _jvp
from .errors import ArgumentTypeError, DTypeError, InvalidArgumentError, ShapeError, UnsupportedOperationError
from .scipy import linalg as _sla

__all__ = [
    "EigImplementation", "EighImplementation", "SvdAlgorithm", "cholesky", "cholesky_update", "eig", "eigh", "hessenberg",
    "householder_product", "lu", "lu_pivots_to_permutation", "ormqr", "qdwh", "qr", "schur", "svd", "symmetric_product",
    "triangular_solve", "tridiagonal", "tridiagonal_solve",
]

_shape = _o._shape_str
_arr = _sla._arr
_fmat = _sla._fmat
_flag = _sla._flag
_batch = _sla._batch
_mT = _sla._mT
_eye = _sla._eye


# ---------------------------------------------------------------------------------------------
# Enums


class EigImplementation(enum.Enum):
    """Implementation choices of :func:`eig` (as ``jax.lax.linalg.EigImplementation``).

    Members ``CUSOLVER``, ``MAGMA``, ``LAPACK``; Quabla has no ``eig``, so none is used.

    Example:
        >>> qb.lax.linalg.EigImplementation.LAPACK.value
        'lapack'
    """

    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


class EighImplementation(enum.Enum):
    """Implementation choices of :func:`eigh` (as ``jax.lax.linalg.EighImplementation``).

    Members ``QR``, ``JACOBI``, ``QDWH``; Quabla computes the same decomposition (its own
    tridiagonal QR kernel) whichever is named.

    Example:
        >>> qb.lax.linalg.EighImplementation.QR.value
        'qr'
    """

    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
    """Algorithm choices of :func:`svd` (as ``jax.lax.linalg.SvdAlgorithm``).

    Members ``DEFAULT``, ``QR``, ``JACOBI``, ``POLAR``, ``DIVIDE_AND_CONQUER``; Quabla computes
    the same decomposition (its own bidiagonal QR kernel) whichever is named.

    Example:
        >>> qb.lax.linalg.SvdAlgorithm.DEFAULT.value
        'default'
    """

    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


def _enum_arg(fn, name, v, cls):
    """None or a member of ``cls`` (or of an enum with the same member name, e.g. JAX's)."""
    if v is None or isinstance(v, cls):
        return v
    if isinstance(v, enum.Enum) and v.name in cls.__members__:
        return cls[v.name]
    raise ArgumentTypeError(f"{fn}: {name} must be None or a {cls.__name__} member, got {type(v).__name__} {_o._short_repr(v)}")


# ---------------------------------------------------------------------------------------------
# Argument helpers


def _floats(fn, named):
    """The ``(name, value)`` arrays converted to one float dtype (ints become float64)."""
    xs = [_arr(fn, n, x) for n, x in named]
    for (n, _), x in zip(named, xs):
        _sla._check_real(fn, n, x)
    dt = xs[0].dtype
    for x in xs[1:]:
        dt = _dt.result_type(fn, dt, x.dtype)
    dt = dt if dt.is_float else _dt.float64
    return [_o.astype(x, dt) for x in xs]


def _rank(fn, name, x, k):
    if x.ndim < k:
        raise ShapeError(f"{fn}: {name} must have at least {k} dimension{'s' if k > 1 else ''}, got shape {_shape(x.shape)}")


def _square(fn, name, x):
    _rank(fn, name, x, 2)
    if x.shape[-1] != x.shape[-2]:
        raise ShapeError(f"{fn}: {name} must be a (batch of) square matrices, got shape {_shape(x.shape)}")


def _subset(fn, subset_by_index, n):
    """``subset_by_index`` as a static ``(lo, hi)`` with ``0 <= lo < hi <= n``, or None."""
    if subset_by_index is None:
        return None
    if not isinstance(subset_by_index, (tuple, list)) or len(subset_by_index) != 2:
        raise ArgumentTypeError(f"{fn}: subset_by_index must be None or a pair (start, end), got {_o._short_repr(subset_by_index)}")
    lo, hi = (_o._int_arg(fn, "subset_by_index", v) for v in subset_by_index)
    if not 0 <= lo < hi <= n:
        raise InvalidArgumentError(f"{fn}: subset_by_index={(lo, hi)} must satisfy 0 <= start < end <= {n}")
    return lo, hi


def _col(x, i):
    """``x[..., :, i]`` for a traced index ``i`` (a masked sum: exact, one pass)."""
    idx = _o._iota((x.shape[-1],), 0)
    return _o.sum(_o.where(idx == i, x, 0.0), axis=-1)


# ---------------------------------------------------------------------------------------------
# Cholesky


def cholesky(x, *, symmetrize_input=True):
    """Cholesky factor ``L`` (lower triangular, ``x = L @ L.T``) of a batch of symmetric
    positive definite matrices.

    Args:
        x: ``[..., n, n]``.
        symmetrize_input: use ``(x + x.T) / 2``; otherwise only the lower triangle is read.

    Returns:
        ``L`` ``[..., n, n]`` (zeros above the diagonal); where ``x`` is not positive definite
        its lower triangle is NaN, as JAX. Differentiable.

    Example:
        >>> qb.lax.linalg.cholesky(qb.array([[4.0, 2.0], [2.0, 10.0]])).tolist()
        [[2.0, 0.0], [1.0, 3.0]]
    """
    symmetrize_input = _flag("cholesky", "symmetrize_input", symmetrize_input)
    x = _fmat("cholesky", x, "x", square=True)
    return _la.cholesky(x, symmetrize_input=symmetrize_input)


def _givens_row(z, xs):
    """One step of the rank-1 update: the rotation that zeroes ``z[k]`` against ``r[k, k]``
    (BLAS ``drotg``'s scaled form) applied to row ``k`` of ``r`` and to ``z``."""
    row, onehot = xs
    x = _o.sum(row * onehot, axis=-1, keepdims=True)
    y = _o.sum(z * onehot, axis=-1, keepdims=True)
    zero = y == 0.0
    big = _o.maximum(_o.abs(x), _o.abs(y))
    big = _o.where(zero, 1.0, big)
    xs_, ys_ = x / big, y / big
    rh = 1.0 / _o.sqrt(xs_ * xs_ + ys_ * ys_)
    c = _o.where(zero, 1.0, xs_ * rh)
    s = _o.where(zero, 0.0, -ys_ * rh)
    return c * z + s * row, c * row - s * z


def cholesky_update(r_matrix, w_vector):
    """Rank-1 update of a Cholesky factor: given upper triangular ``R`` with ``A = R.T @ R``,
    the upper triangular factor of ``A + w w^T`` in O(n^2) (Givens rotations).

    Args:
        r_matrix: ``[..., n, n]`` upper triangular.
        w_vector: ``[..., n]``; batch dims broadcast with ``r_matrix``'s (JAX takes one
            matrix).

    Returns:
        The updated ``R`` ``[..., n, n]``.

    Example:
        >>> r = qb.lax.linalg.cholesky_update(qb.array([[1.0, 0.0], [0.0, 1.0]]), qb.array([0.0, 1.0]))
        >>> [[round(v, 12) for v in row] for row in r.tolist()]
        [[1.0, 0.0], [0.0, 1.414213562373]]
    """
    fn = "cholesky_update"
    r, w = _floats(fn, [("r_matrix", r_matrix), ("w_vector", w_vector)])
    _square(fn, "r_matrix", r)
    _rank(fn, "w_vector", w, 1)
    n = r.shape[-1]
    if w.shape[-1] != n:
        raise ShapeError(f"{fn}: w_vector {_shape(w.shape)} must have {n} entries for r_matrix {_shape(r.shape)}")
    r, w = _batch(fn, (r, 2), (w, 1))
    rows = _moveaxis(r, -2, 0)
    onehot = _eye(n, r.dtype)
    _, out = _scan(_givens_row, w, (rows, onehot))
    return _moveaxis(out, 0, -2)


# ---------------------------------------------------------------------------------------------
# Eigenproblems, Schur


def eig(x, *, compute_left_eigenvectors=True, compute_right_eigenvectors=True, enable_eigvec_derivs=False, implementation=None, use_magma=None):
    """Eigendecomposition of a general matrix (``jax.lax.linalg.eig``): not supported.

    Its eigenvalues and eigenvectors are complex, and Quabla has no complex dtypes (nor a
    nonsymmetric eigensolver); raises UnsupportedOperationError. For symmetric matrices use
    :func:`eigh`.

    Args:
        x: ``[..., n, n]``.
        compute_left_eigenvectors, compute_right_eigenvectors, enable_eigvec_derivs,
            implementation, use_magma: as JAX's.

    Returns:
        Never returns.

    Example:
        >>> qb.lax.linalg.eig(qb.eye(2))
        Traceback (most recent call last):
        ...
        quabla.errors.UnsupportedOperationError: eig: not supported in Quabla: ...
    """
    del x, compute_left_eigenvectors, compute_right_eigenvectors, enable_eigvec_derivs, implementation, use_magma
    raise UnsupportedOperationError("eig: not supported in Quabla: a general matrix's eigenvalues and eigenvectors are complex, "
                                    "and Quabla has no complex dtypes (use eigh for symmetric matrices)", op="eig")


def eigh(x, *, lower=True, symmetrize_input=True, sort_eigenvalues=True, subset_by_index=None, implementation=None):
    """Eigendecomposition of a batch of symmetric matrices.

    Args:
        x: ``[..., n, n]``.
        lower: with ``symmetrize_input=False``, read only the lower (else upper) triangle.
        symmetrize_input: use ``(x + x.T) / 2``.
        sort_eigenvalues: accepted; the eigenvalues are always ascending.
        subset_by_index: ``(start, end)``: keep eigenvalues ``start <= i < end`` (JAX's CPU
            backend raises NotImplementedError; here they are selected from the full
            decomposition).
        implementation: None or an :class:`EighImplementation` (all compute the same).

    Returns:
        ``(v, w)``: eigenvectors in the columns of ``v`` ``[..., n, d]`` (signs may differ from
        LAPACK's) and ascending eigenvalues ``w`` ``[..., d]``. Differentiable.

    Example:
        >>> v, w = qb.lax.linalg.eigh(qb.array([[2.0, 0.0], [0.0, 1.0]]))
        >>> w.tolist()
        [1.0, 2.0]
    """
    fn = "eigh"
    lower = _flag(fn, "lower", lower)
    symmetrize_input = _flag(fn, "symmetrize_input", symmetrize_input)
    _flag(fn, "sort_eigenvalues", sort_eigenvalues)
    _enum_arg(fn, "implementation", implementation, EighImplementation)
    x = _fmat(fn, x, "x", square=True)
    sub = _subset(fn, subset_by_index, x.shape[-1])
    if symmetrize_input:
        x = _la._sym(x)
    v, w = bind(_o._op("eigh", lower=lower), x)
    if sub is not None and sub != (0, x.shape[-1]):
        v, w = v[..., :, sub[0]:sub[1]], w[..., sub[0]:sub[1]]
    return v, w


def schur(x, *, compute_schur_vectors=True, sort_eig_vals=False, select_callable=None):
    """Schur decomposition (``jax.lax.linalg.schur``): not supported.

    Quabla has no real Schur (Francis double-shift QR) kernel; raises
    UnsupportedOperationError.

    Args:
        x: ``[..., n, n]``.
        compute_schur_vectors, sort_eig_vals, select_callable: as JAX's.

    Returns:
        Never returns.

    Example:
        >>> qb.lax.linalg.schur(qb.eye(2))
        Traceback (most recent call last):
        ...
        quabla.errors.UnsupportedOperationError: schur: not supported in Quabla: ...
    """
    del x, compute_schur_vectors, sort_eig_vals, select_callable
    raise UnsupportedOperationError("schur: not supported in Quabla: it needs a real Schur (Francis QR) kernel, which Quabla lacks", op="schur")


# ---------------------------------------------------------------------------------------------
# Householder reductions and reflectors


def _gehrd(a):
    """Householder reduction of ``a`` ``[..., n, n]`` (n >= 2) to upper Hessenberg form with
    LAPACK's ``dlarfg`` / ``gehrd`` conventions: ``H_k = I - tau_k v_k v_k^T`` with
    ``v_k[k + 1] = 1``, ``v_k[:k + 1] = 0``. Returns ``(h, vs, taus)``: the reduced matrix (only
    its Hessenberg part is meaningful), the reflectors' tails in the columns of ``vs`` (below
    the first subdiagonal) and ``taus`` ``[..., n - 1]`` (the last one 0)."""
    n = a.shape[-1]
    dt = a.dtype
    vs = _o.zeros(a.shape, dtype=dt)
    taus = _o.zeros(a.shape[:-1][:-1] + (n - 1,), dtype=dt)
    if n <= 2:
        return a, vs, taus
    idx = _o._iota((n,), 0)
    tidx = _o._iota((n - 1,), 0)
    cidx = _o._iota((n, n), 1)

    def step(k, carry):
        h, vs, taus = carry
        k = _o.astype(k, idx.dtype)
        col = _col(h, k)
        alpha = _o.sum(_o.where(idx == k + 1, col, 0.0), axis=-1, keepdims=True)
        rest = _o.where(idx > k + 1, col, 0.0)
        xnorm = _o.sqrt(_o.sum(rest * rest, axis=-1, keepdims=True))
        nz = xnorm != 0.0
        norm = _o.sqrt(alpha * alpha + xnorm * xnorm)
        beta = _o.where(alpha >= 0.0, -norm, norm)
        tau = _o.where(nz, (beta - alpha) / _o.where(nz, beta, 1.0), 0.0)
        tail = rest * _o.where(nz, 1.0 / _o.where(nz, alpha - beta, 1.0), 0.0)
        v = _o.where(idx == k + 1, 1.0, tail)
        tv = tau * v
        # h <- H h H; the tail is kept apart (h's column k below k + 1 is zero in exact arithmetic).
        w = _o.sum(_o.expand_dims(v, -1) * h, axis=-2)
        h = h - _o.expand_dims(tv, -1) * _o.expand_dims(w, -2)
        u = _o.sum(h * _o.expand_dims(v, -2), axis=-1)
        h = h - _o.expand_dims(u, -1) * _o.expand_dims(tv, -2)
        vs = _o.where(cidx == k, _o.expand_dims(tail, -1), vs)
        taus = _o.where(tidx == k, tau, taus)
        return h, vs, taus

    return _fori_loop(0, n - 2, step, (a, vs, taus))


def _reflectors(a, k):
    """The unit lower trapezoidal ``V`` ``[..., m, k]`` of the reflectors packed in ``a``."""
    m = a.shape[-2]
    return _tril(a[..., :, :k], -1) + _eye(m, a.dtype, k)


def _apply_reflectors(v, taus, c, left, reverse):
    """``c`` times the reflectors ``H_i = I - taus[i] v[:, i] v[:, i]^T`` one after another
    (from the left: ``H c``; from the right: ``c H``), ``i`` ascending or descending. ``v``
    ``[..., m, k]``, ``taus`` ``[..., k]`` and ``c`` have equal batch dims."""
    vt = _moveaxis(v, -1, 0)
    ts = _moveaxis(taus, -1, 0)

    def body(c, xs):
        vi, ti = xs
        ti = _o.expand_dims(_o.expand_dims(ti, -1), -1)
        if left:
            w = _o.sum(_o.expand_dims(vi, -1) * c, axis=-2)
            return c - ti * (_o.expand_dims(vi, -1) * _o.expand_dims(w, -2)), None
        w = _o.sum(c * _o.expand_dims(vi, -2), axis=-1)
        return c - ti * (_o.expand_dims(w, -1) * _o.expand_dims(vi, -2)), None

    c, _ = _scan(body, c, (vt, ts), reverse=reverse)
    return c


def hessenberg(a):
    """Reduces a batch of square matrices to upper Hessenberg form (LAPACK ``gehrd``).

    Args:
        a: ``[..., n, n]`` with ``n >= 2``.

    Returns:
        ``[a, taus]`` (a list, as JAX): ``a``'s upper triangle and first subdiagonal hold the
        Hessenberg matrix ``h``, the entries below hold the Householder vectors ``v_k``
        (``v_k[k + 1] = 1`` implied), ``taus`` ``[..., n - 1]`` their factors, so that
        ``a = q @ h @ q.T`` with ``q = householder_product(a[..., 1:, :-1], taus)`` bordered by
        the identity.

    Example:
        >>> h, taus = qb.lax.linalg.hessenberg(qb.array([[1.0, 2.0], [3.0, 4.0]]))
        >>> h.tolist(), taus.tolist()
        ([[1.0, 2.0], [3.0, 4.0]], [0.0])
    """
    a = _fmat("hessenberg", a, "a", square=True)
    n = a.shape[-1]
    if n < 2:
        raise ShapeError(f"hessenberg: a must be at least 2 x 2 (the 1 x 1 case has an empty taus), got shape {_shape(a.shape)}")
    h, vs, taus = _gehrd(a)
    r, c = _o._iota((n, n), 0), _o._iota((n, n), 1)
    return [_o.where(r > c + 1, vs, h), taus]


def tridiagonal(a, *, lower=True):
    """Reduces a batch of symmetric matrices to tridiagonal form (LAPACK ``sytrd``).

    Args:
        a: ``[..., n, n]`` with ``n >= 2``.
        lower: read (and overwrite) the lower triangle; else the upper. The other triangle is
            returned unchanged.

    Returns:
        ``[a, d, e, taus]`` (a list, as JAX): ``d`` ``[..., n]`` the diagonal and ``e``
        ``[..., n - 1]`` the sub- (``lower``) or super-diagonal of the tridiagonal matrix;
        ``a`` holds them on its diagonal and first sub/superdiagonal and the Householder
        vectors beyond; ``taus`` ``[..., n - 1]`` the reflectors' factors.

    Example:
        >>> a, d, e, taus = qb.lax.linalg.tridiagonal(qb.array([[2.0, 1.0], [1.0, 3.0]]))
        >>> d.tolist(), e.tolist(), taus.tolist()
        ([2.0, 3.0], [1.0], [0.0])
    """
    lower = _flag("tridiagonal", "lower", lower)
    a = _fmat("tridiagonal", a, "a", square=True)
    n = a.shape[-1]
    if n < 2:
        raise ShapeError(f"tridiagonal: a must be at least 2 x 2 (the 1 x 1 case has empty e and taus), got shape {_shape(a.shape)}")
    r, c = _o._iota((n, n), 0), _o._iota((n, n), 1)
    # The upper case is the lower one of the matrix with rows and columns reversed.
    b = a if lower else _flip(a, (-2, -1))
    s = _o.where(r >= c, b, _mT(b))
    h, vs, taus = _gehrd(s)
    d = _la._diag(h)
    e = _o.sum(_o.where(r == c + 1, h, 0.0), axis=-1)[..., 1:]
    packed = _o.where(r > c + 1, vs, _o.where(r == c + 1, _o.expand_dims(_o.concatenate([e[..., :1], e], -1), -1), _o.where(r == c, s, b)))
    packed = _o.where(r == c, _o.expand_dims(d, -1), packed)
    if lower:
        return [packed, d, e, taus]
    return [_flip(packed, (-2, -1)), _flip(d, -1), _flip(e, -1), _flip(taus, -1)]


def householder_product(a, taus):
    """The product ``Q = H_0 H_1 ... H_{k-1}`` of elementary Householder reflectors
    (LAPACK ``orgqr``), first ``n`` columns.

    Args:
        a: ``[..., m, n]``, ``m >= n``; column ``i`` below the diagonal holds ``v_i``'s tail
            (``v_i[i] = 1``, ``v_i[:i] = 0``).
        taus: ``[..., k]``, ``k <= n``: the factors ``H_i = I - taus[i] v_i v_i^T``.

    Returns:
        ``[..., m, n]`` with orthonormal columns.

    Example:
        >>> householder_product = qb.lax.linalg.householder_product
        >>> householder_product(qb.array([[1.0], [1.0]]), qb.array([1.0])).tolist()
        [[0.0], [-1.0]]
    """
    fn = "householder_product"
    a, taus = _floats(fn, [("a", a), ("taus", taus)])
    _rank(fn, "a", a, 2)
    _rank(fn, "taus", taus, 1)
    m, n = a.shape[-2:]
    k = taus.shape[-1]
    if m < n:
        raise ShapeError(f"{fn}: a must have at least as many rows as columns, got shape {_shape(a.shape)}")
    if k > n:
        raise ShapeError(f"{fn}: taus {_shape(taus.shape)} has more than min(m, n) = {n} entries for a {_shape(a.shape)}")
    a, taus = _batch(fn, (a, 2), (taus, 1))
    q0 = _o.broadcast_to(_eye(m, a.dtype, n), a.shape)
    return _apply_reflectors(_reflectors(a, k), taus, q0, True, True)


def ormqr(a, taus, c, *, left=True, transpose=False):
    """``Q @ c``, ``Q.T @ c``, ``c @ Q`` or ``c @ Q.T`` for the ``Q`` of Householder
    reflectors packed as by ``geqrf``, without forming ``Q`` (LAPACK ``ormqr``).

    Args:
        a: ``[..., m, n]``; column ``i`` below the diagonal holds ``v_i``'s tail.
        taus: ``[..., k]``, ``k <= min(m, n)``.
        c: ``[..., m, p]`` (``left``) or ``[..., p, m]``; batch dims broadcast.
        left: multiply from the left (else from the right).
        transpose: use ``Q.T``.

    Returns:
        The product, ``c``'s shape (with the broadcast batch dims).

    Example:
        >>> qb.lax.linalg.ormqr(qb.array([[1.0], [1.0]]), qb.array([1.0]), qb.array([[1.0], [2.0]])).tolist()
        [[-2.0], [-1.0]]
    """
    fn = "ormqr"
    left = _flag(fn, "left", left)
    transpose = _flag(fn, "transpose", transpose)
    a, taus, c = _floats(fn, [("a", a), ("taus", taus), ("c", c)])
    _rank(fn, "a", a, 2)
    _rank(fn, "taus", taus, 1)
    _rank(fn, "c", c, 2)
    m, n = a.shape[-2:]
    k = taus.shape[-1]
    if k > min(m, n):
        raise ShapeError(f"{fn}: taus {_shape(taus.shape)} has more than min(m, n) = {min(m, n)} entries for a {_shape(a.shape)}")
    if (c.shape[-2] if left else c.shape[-1]) != m:
        side = "rows" if left else "columns"
        raise ShapeError(f"{fn}: c {_shape(c.shape)} must have {m} {side} (a's rows) with left={left}, a has shape {_shape(a.shape)}")
    a, taus, c = _batch(fn, (a, 2), (taus, 1), (c, 2))
    return _apply_reflectors(_reflectors(a, k), taus, c, left, left != transpose)


# ---------------------------------------------------------------------------------------------
# LU


def lu(x):
    """LU decomposition with partial pivoting, ``P x = L U``.

    Args:
        x: ``[..., m, n]``.

    Returns:
        ``[lu, pivots, permutation]`` (a list, as JAX): ``L`` (unit diagonal, not stored) and
        ``U`` packed in ``lu`` ``[..., m, n]``; ``pivots`` int32 ``[..., min(m, n)]`` (row ``i``
        was swapped with row ``pivots[i]``); ``permutation`` int32 ``[..., m]`` (``x[perm] =
        L U``). Differentiable in ``lu`` (square or not, as JAX).

    Example:
        >>> lu, piv, perm = qb.lax.linalg.lu(qb.array([[1.0, 2.0], [3.0, 4.0]]))
        >>> piv.tolist(), perm.tolist()
        ([1, 1], [1, 0])
    """
    x = _fmat("lu", x, "x")
    if x.shape[-1] == x.shape[-2]:
        return list(_la._lu(x))
    return list(_lu_rect(x))


def _lu_rect(x):
    """LU of a non-square ``x``, differentiable (the op's rules cover square matrices): the
    op on ``stop_gradient(x)``, and the JVP of De Hoog, Anderssen and Lukas with ``L`` and
    ``U`` completed to square matrices, as JAX."""
    packed, piv, perm = _la._lu(_stop_gradient(x))
    m, n = x.shape[-2:]
    dt = x.dtype
    if m > n:
        l = _o.concatenate([_tril(packed, -1), _o.zeros(x.shape[:-1] + (m - n,), dtype=dt)], -1) + _eye(m, dt)
        u = _triu(packed[..., :n, :])
    else:
        l = _tril(packed[..., :, :m], -1) + _eye(m, dt)
        lower = _o.where(_o._iota((n, n), 0) >= m, _eye(n, dt), 0.0)
        u = _o.concatenate([_triu(packed), _o.zeros(x.shape[:-2] + (n - m, n), dtype=dt)], -2) + lower

    @_custom_jvp
    def lu_matrix(x):
        return packed

    @lu_matrix.defjvp
    def _lu_matrix_jvp(primals, tangents):
        pdx = _take_along_axis(tangents[0], _o.expand_dims(perm, -1), axis=-2)
        la = _la._trsm(l, pdx, True, True, False, True)
        lau = _la._trsm(u, la, False, False, False, False)
        return packed, _o.matmul(l, _tril(lau, -1)) + _o.matmul(_triu(lau), u)

    return lu_matrix(x), piv, perm


def lu_pivots_to_permutation(pivots, permutation_size):
    """The permutation that LU's sequential row swaps ``pivots`` make.

    Args:
        pivots: integer ``[..., k]`` (JAX wants int32; other integer dtypes are accepted).
        permutation_size: static int ``>= k``.

    Returns:
        int32 ``[..., permutation_size]``.

    Example:
        >>> qb.lax.linalg.lu_pivots_to_permutation(qb.array([2, 2], dtype=qb.int32), 3).tolist()
        [2, 0, 1]
    """
    fn = "lu_pivots_to_permutation"
    size = _o._int_arg(fn, "permutation_size", permutation_size)
    piv = _arr(fn, "pivots", pivots)
    if not piv.dtype.is_int:
        raise DTypeError(f"{fn}: pivots must be integers, got {piv.dtype.name}")
    _rank(fn, "pivots", piv, 1)
    if size < piv.shape[-1]:
        raise InvalidArgumentError(f"{fn}: permutation_size {size} must be at least the number of pivots {piv.shape[-1]} (pivots {_shape(piv.shape)})")
    return _sla._pivots_to_perm(piv, size)


# ---------------------------------------------------------------------------------------------
# QR, SVD, polar


def _qr_pivots(a):
    """Column order of LAPACK ``geqp3`` (int32 ``[..., n]``): step ``j`` swaps into position
    ``j`` the column at the first position ``>= j`` whose norm, after projecting out the
    columns already chosen, is largest."""
    m, n = a.shape[-2:]
    idx = _o.astype(_o._iota((n,), 0), _dt.int32)
    perm0 = _o.broadcast_to(idx, a.shape[:-2] + (n,))

    def step(j, carry):
        res, perm = carry
        j = _o.astype(j, _dt.int32)
        nrm = _take_along_axis(_o.sum(res * res, axis=-2), perm, axis=-1)
        pos = _o.expand_dims(_o.astype(_o.argmax(_o.where(idx < j, -1.0, nrm), axis=-1), _dt.int32), -1)
        chosen = _take_along_axis(perm, pos, axis=-1)
        at_j = _o.sum(_o.where(idx == j, perm, 0), axis=-1, keepdims=True, dtype=perm.dtype)
        perm = _o.where(idx == j, chosen, _o.where(idx == pos, at_j, perm))
        col = _take_along_axis(res, _o.expand_dims(chosen, -1), axis=-1)
        cn = _o.sqrt(_o.sum(col * col, axis=-2, keepdims=True))
        q = col / _o.where(cn == 0.0, 1.0, cn)
        return res - q * _o.sum(q * res, axis=-2, keepdims=True), perm

    if n == 1:
        return perm0
    _, perm = _fori_loop(0, min(m, n), step, (_stop_gradient(a), perm0))
    return perm


def _qr_op(x, full_matrices):
    q, r = bind(_o._op("qr", full_matrices=full_matrices), x)
    return q, r


@_custom_jvp
def _qr_full_tall(x):
    return _qr_op(x, True)


@_qr_full_tall.defjvp
def _qr_full_tall_jvp(primals, tangents):
    """JVP of the complete QR of a tall ``x`` (m > n), which the op lacks: the thin part's JVP,
    and the last m - n columns of ``Q`` from the Householder structure, as JAX (Roberts and
    Roberts, arXiv:2409.13374, eqs. 32-33)."""
    (x,), (dx,) = primals, tangents
    q, r = _qr_op(x, True)
    n = x.shape[-1]
    (qm, _), (dqm, drn) = _jvp(lambda y: _qr_op(y, False), (x,), (dx,))
    q_nn, q_pn, q_mp = qm[..., :n, :], qm[..., n:, :], q[..., :, n:]
    dq_nn, dq_pn = dqm[..., :n, :], dqm[..., n:, :]
    z_t = _la.solve(_mT(q_nn) - _eye(n, x.dtype), _mT(q_pn))
    z = _mT(z_t)
    dq_mp = _o.matmul(dqm, z_t) - _o.matmul(qm + _o.matmul(q_mp, z), _mT(dq_pn - _o.matmul(z, dq_nn)))
    dr = _o.concatenate([drn, _o.zeros(drn.shape[:-2] + (x.shape[-2] - n, n), dtype=x.dtype)], -2)
    return (q, r), (_o.concatenate([dqm, dq_mp], -1), dr)


def _qr(x, full_matrices):
    """Householder QR, differentiable in every case (the op's rules cover the square and the
    thin tall cases): a wide ``x = [x1 x2]`` is ``q r1 = x1`` and ``r2 = q.T x2``."""
    m, n = x.shape[-2:]
    if m < n:
        q, r1 = _qr_op(x[..., :, :m], False)
        return q, _o.concatenate([r1, _o.matmul(_mT(q), x[..., :, m:])], -1)
    if full_matrices and m > n:
        return _qr_full_tall(x)
    return _qr_op(x, full_matrices)


def qr(x, *, pivoting=False, full_matrices=True, use_magma=None):
    """QR decomposition ``x = Q R`` (Householder), optionally with column pivoting.

    Args:
        x: ``[..., m, n]``.
        pivoting: column pivoting, ``x[..., :, p] = Q R`` with ``|diag(R)|`` non-increasing.
        full_matrices: ``Q`` ``[..., m, m]`` and ``R`` ``[..., m, n]``; else ``[..., m, k]``
            and ``[..., k, n]`` with ``k = min(m, n)``.
        use_magma: unused (GPU only in JAX).

    Returns:
        ``(q, r)``, or ``(q, r, p)`` with ``p`` int32 ``[..., n]`` when pivoting.
        Differentiable.

    Example:
        >>> q, r = qb.lax.linalg.qr(qb.array([[3.0, 1.0], [4.0, 2.0]]))
        >>> [round(v, 12) for v in r.tolist()[0]]
        [-5.0, -2.2]
    """
    fn = "qr"
    pivoting = _flag(fn, "pivoting", pivoting)
    full_matrices = _flag(fn, "full_matrices", full_matrices)
    if use_magma is not None:
        _flag(fn, "use_magma", use_magma)
    x = _fmat(fn, x, "x")
    if not pivoting:
        return _qr(x, full_matrices)
    p = _qr_pivots(x)
    xp = _take_along_axis(x, _o.broadcast_to(_o.expand_dims(p, -2), x.shape), axis=-1)
    q, r = _qr(xp, full_matrices)
    return q, r, p


def svd(x, *, full_matrices=True, compute_uv=True, subset_by_index=None, algorithm=None):
    """Singular value decomposition ``x = U @ diag(s) @ Vh``.

    Args:
        x: ``[..., m, n]``.
        full_matrices: ``U`` ``[..., m, m]`` and ``Vh`` ``[..., n, n]``; else ``[..., m, k]`` and
            ``[..., k, n]`` with ``k = min(m, n)``.
        compute_uv: return ``(U, s, Vh)``; else ``s`` only.
        subset_by_index: ``(start, end)``: keep singular values ``start <= i < end`` (needs
            ``full_matrices=False`` unless it is ``(0, k)``; selected from the full
            decomposition, where JAX's CPU backend raises NotImplementedError).
        algorithm: None or an :class:`SvdAlgorithm` (all compute the same).

    Returns:
        ``(U, s, Vh)`` or ``s``, ``s`` descending (singular vector signs may differ from
        LAPACK's). Differentiable.

    Example:
        >>> qb.lax.linalg.svd(qb.array([[3.0, 0.0], [0.0, -4.0]]), compute_uv=False).tolist()
        [4.0, 3.0]
    """
    fn = "svd"
    full_matrices = _flag(fn, "full_matrices", full_matrices)
    compute_uv = _flag(fn, "compute_uv", compute_uv)
    _enum_arg(fn, "algorithm", algorithm, SvdAlgorithm)
    x = _fmat(fn, x, "x")
    k = min(x.shape[-2:])
    sub = _subset(fn, subset_by_index, k)
    if sub == (0, k):
        sub = None
    if sub is not None and full_matrices and compute_uv:
        raise InvalidArgumentError(f"{fn}: full_matrices=True and subset_by_index={sub} cannot both be set")
    r = _la.svd(x, full_matrices and sub is None, compute_uv)
    if not compute_uv:
        return r if sub is None else r[..., sub[0]:sub[1]]
    u, s, vh = r
    if sub is not None:
        lo, hi = sub
        u, s, vh = u[..., :, lo:hi], s[..., lo:hi], vh[..., lo:hi, :]
    return u, s, vh


def qdwh(x, *, is_hermitian=False, max_iterations=None, eps=None, dynamic_shape=None):
    """Polar decomposition ``x = u @ h`` (``jax.lax.linalg.qdwh``).

    Computed from the reduced SVD (``u = U Vh``, ``h = V diag(s) Vh``) instead of the QDWH
    iteration: the same result to rounding, and differentiable.

    Args:
        x: ``[..., M, N]`` with ``M >= N`` (JAX takes one matrix).
        is_hermitian: unused (as JAX).
        max_iterations: None or a positive int; ignored (no iteration runs).
        eps: None or a number; ignored.
        dynamic_shape: ``(m, n)``: decompose only ``x[..., :m, :n]``; ``u`` and ``h`` are zero
            outside that block (as JAX's padded iteration).

    Returns:
        ``(u, h, num_iters, is_converged)``: ``u`` ``[..., M, N]`` with orthonormal columns, ``h``
        ``[..., N, N]`` symmetric positive semi-definite, ``num_iters`` int64 0 and
        ``is_converged`` True.

    Example:
        >>> u, h, it, ok = qb.lax.linalg.qdwh(qb.array([[2.0, 0.0], [0.0, -3.0]]))
        >>> [[round(v, 12) for v in row] for row in h.tolist()], ok.item()
        ([[2.0, 0.0], [0.0, 3.0]], True)
    """
    fn = "qdwh"
    _flag(fn, "is_hermitian", is_hermitian)
    if max_iterations is not None and _o._int_arg(fn, "max_iterations", max_iterations) < 0:
        raise InvalidArgumentError(f"{fn}: max_iterations must be non-negative, got {max_iterations}")
    if eps is not None and (isinstance(eps, bool) or not isinstance(eps, (int, float, np.integer, np.floating))):
        raise ArgumentTypeError(f"{fn}: eps must be None or a number, got {type(eps).__name__} {_o._short_repr(eps)}")
    x = _fmat(fn, x, "x")
    big_m, big_n = x.shape[-2:]
    if big_m < big_n:
        raise ShapeError(f"{fn}: the input matrix of shape M x N must have M >= N, got shape {_shape(x.shape)}")
    m, n = big_m, big_n
    if dynamic_shape is not None:
        if not isinstance(dynamic_shape, (tuple, list)) or len(dynamic_shape) != 2:
            raise ArgumentTypeError(f"{fn}: dynamic_shape must be None or a pair (m, n), got {_o._short_repr(dynamic_shape)}")
        m, n = (_o._int_arg(fn, "dynamic_shape", v) for v in dynamic_shape)
        if not (1 <= m <= big_m and 1 <= n <= big_n):
            raise InvalidArgumentError(f"{fn}: dynamic_shape {(m, n)} must lie within x's shape {_shape(x.shape)} (and be non-empty)")
    xs = x[..., :m, :n] if (m, n) != (big_m, big_n) else x
    uu, s, vh = _la.svd(xs, False, True)
    u = _o.matmul(uu, vh)
    h = _o.matmul(_mT(vh) * _o.expand_dims(s, -2), vh)
    h = (h + _mT(h)) * 0.5
    if (m, n) != (big_m, big_n):
        bshape = x.shape[:-2]
        zeros_u = _o.zeros(x.shape, dtype=x.dtype)
        zeros_h = _o.zeros(bshape + (big_n, big_n), dtype=x.dtype)
        u = _o.dynamic_update_slice(zeros_u, u, (0,) * x.ndim)
        h = _o.dynamic_update_slice(zeros_h, h, (0,) * x.ndim)
    return u, h, _o.zeros((), dtype=_dt.int64), _o.ones((), dtype=_dt.bool_)


def symmetric_product(a_matrix, c_matrix, *, alpha=1.0, beta=0.0, symmetrize_output=False):
    """``alpha * a @ a.T + beta * c`` for symmetric ``c``.

    Args:
        a_matrix: ``[..., m, n]``.
        c_matrix: ``[..., m, m]``; batch dims broadcast with ``a_matrix``'s.
        alpha, beta: scalars.
        symmetrize_output: replace the upper triangle by the transpose of the lower one (this
            computes the whole product, so the result is the same up to rounding).

    Returns:
        ``[..., m, m]``.

    Example:
        >>> qb.lax.linalg.symmetric_product(qb.array([[1.0, 2.0]]), qb.array([[1.0]]), alpha=2.0, beta=3.0).tolist()
        [[13.0]]
    """
    fn = "symmetric_product"
    symmetrize_output = _flag(fn, "symmetrize_output", symmetrize_output)
    for name, v in (("alpha", alpha), ("beta", beta)):
        number = isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
        if not number and not (_is_array(v) and v.ndim == 0 and not v.dtype.is_bool):
            raise ArgumentTypeError(f"{fn}: {name} must be a scalar, got {type(v).__name__} {_o._short_repr(v)}")
    a, c = _floats(fn, [("a_matrix", a_matrix), ("c_matrix", c_matrix)])
    _rank(fn, "a_matrix", a, 2)
    _square(fn, "c_matrix", c)
    if a.shape[-2] != c.shape[-1]:
        raise ShapeError(f"{fn}: expects a_matrix [..., m, n] and c_matrix [..., m, m], got shapes {_shape(a.shape)} and {_shape(c.shape)}")
    a, c = _batch(fn, (a, 2), (c, 2))
    out = _o.matmul(a, _mT(a)) * alpha + c * beta
    if symmetrize_output:
        out = _tril(out) + _mT(_tril(out, -1))
    return out


def triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False, conjugate_a=False, unit_diagonal=False):
    """Solves ``op(a) @ x = b`` (``left_side``) or ``x @ op(a) = b`` for triangular ``a``.

    Args:
        a: ``[..., m, m]``; only its ``lower`` (else upper) triangle is read.
        b: ``[..., m, n]`` (``left_side``) or ``[..., n, m]``; with ``b.ndim == a.ndim - 1`` a
            (batch of) vector(s) ``[..., m]``. Batch dims broadcast with ``a``'s.
        left_side: which equation (see above).
        lower: ``a`` is lower triangular.
        transpose_a: ``op(a) = a.T``.
        conjugate_a: no effect for real ``a``.
        unit_diagonal: take ``a``'s diagonal as ones.

    Returns:
        ``x``, shaped as ``b``. Differentiable in ``a`` and ``b``.

    Example:
        >>> a = qb.array([[2.0, 0.0], [1.0, 4.0]])
        >>> qb.lax.linalg.triangular_solve(a, qb.array([[2.0], [9.0]]), left_side=True, lower=True).tolist()
        [[1.0], [2.0]]
    """
    fn = "triangular_solve"
    left_side = _flag(fn, "left_side", left_side)
    lower = _flag(fn, "lower", lower)
    transpose_a = _flag(fn, "transpose_a", transpose_a)
    _flag(fn, "conjugate_a", conjugate_a)
    unit_diagonal = _flag(fn, "unit_diagonal", unit_diagonal)
    a, b = _floats(fn, [("a", a), ("b", b)])
    _square(fn, "a", a)
    _rank(fn, "b", b, 1)
    singleton = b.ndim == a.ndim - 1
    if singleton:
        b = _o.expand_dims(b, -1 if left_side else -2)
    if b.ndim < 2 or b.shape[-2 if left_side else -1] != a.shape[-1]:
        raise ShapeError(f"{fn}: incompatible shapes a {_shape(a.shape)} and b {_shape(b.shape)} with left_side={left_side}")
    a, b = _batch(fn, (a, 2), (b, 2))
    x = _la._trsm(a, b, left_side, lower, transpose_a, unit_diagonal)
    if singleton:
        x = x[..., 0] if left_side else x[..., 0, :]
    return x


def _gtsv_step(carry, row):
    """One elimination step of LAPACK ``gtsv``: the pending row ``i`` (diagonal, superdiagonal,
    rhs) against row ``i + 1`` (sub, diagonal, super, rhs), the larger first entry as pivot."""
    d0, d1, b0 = carry
    l, d, u, b = row
    swap = _o.abs(d0) < _o.abs(l)
    p0, p1, p2 = _o.where(swap, l, d0), _o.where(swap, d, d1), _o.where(swap, u, 0.0)
    o0, o1, o2 = _o.where(swap, d0, l), _o.where(swap, d1, d), _o.where(swap, 0.0, u)
    s = _o.expand_dims(swap, -1)
    pb, ob = _o.where(s, b, b0), _o.where(s, b0, b)
    zero = p0 == 0.0
    fact = _o.where(zero, 0.0, o0 / _o.where(zero, 1.0, p0))
    new = (o1 - fact * p1, o2 - fact * p2, ob - _o.expand_dims(fact, -1) * pb)
    return new, (p0, p1, p2, pb)


def _back_step(xx, row):
    """Back substitution of one row: ``xx`` stacks ``x[i + 1]`` and ``x[i + 2]`` (one array: a
    scan carry of two arrays that the step rotates, ``(a, b) -> (f(a, b), a)``, fails to
    compile under jit with a bufferization RaW conflict)."""
    p0, p1, p2, pb = row
    x = (pb - _o.expand_dims(p1, -1) * xx[0] - _o.expand_dims(p2, -1) * xx[1]) / _o.expand_dims(p0, -1)
    return _o.stack([x, xx[0]]), x


def tridiagonal_solve(dl, d, du, b, *, perturb_singular=False):
    """Solves the tridiagonal system ``A x = b`` (LAPACK ``gtsv``: Gaussian elimination with
    partial pivoting, batched).

    Args:
        dl: ``[..., m]``: the subdiagonal, ``dl[i] = A[i, i - 1]`` (``dl[0]`` is ignored).
        d: ``[..., m]``: the diagonal.
        du: ``[..., m]``: the superdiagonal, ``du[i] = A[i, i + 1]`` (``du[m - 1]`` is ignored).
        b: ``[..., m, n]``.
        perturb_singular: replace pivots smaller than ``eps * max|U|`` (``U`` the eliminated
            matrix) by that amount, so that singular systems give finite results (a
            simplification of LAPACK ``dlagts``'s rule, which JAX follows).

    Returns:
        ``x`` ``[..., m, n]``; all NaN for a singular system (a zero pivot) without
        ``perturb_singular``, as JAX. Differentiable in all four arguments.

    Example:
        >>> one = qb.array([1.0, 1.0])
        >>> qb.lax.linalg.tridiagonal_solve(one, qb.array([2.0, 2.0]), one, qb.array([[3.0], [3.0]])).tolist()
        [[1.0], [1.0]]
    """
    fn = "tridiagonal_solve"
    perturb_singular = _flag(fn, "perturb_singular", perturb_singular)
    dl, d, du, b = _floats(fn, [("dl", dl), ("d", d), ("du", du), ("b", b)])
    _rank(fn, "d", d, 1)
    if dl.shape != d.shape or du.shape != d.shape:
        raise ShapeError(f"{fn}: dl, d and du must have the same shape, got {_shape(dl.shape)}, {_shape(d.shape)} and {_shape(du.shape)}")
    if b.ndim != d.ndim + 1 or b.shape[:-1] != d.shape:
        raise ShapeError(f"{fn}: b's leading ndim - 1 dimensions must equal the diagonals' shape {_shape(d.shape)}, got b {_shape(b.shape)}")
    m = d.shape[-1]
    dT, bT = _moveaxis(d, -1, 0), _moveaxis(b, -2, 0)
    if m == 1:
        p0, p1, p2, pb = dT, _o.zeros(dT.shape, dtype=d.dtype), _o.zeros(dT.shape, dtype=d.dtype), bT
    else:
        dlT, duT = _moveaxis(dl, -1, 0), _moveaxis(du, -1, 0)
        last = _o.expand_dims(_o._iota((m,), 0) == m - 1, tuple(range(1, d.ndim)))
        duT = _o.where(last, 0.0, duT)
        (dn, _, bn), (p0, p1, p2, pb) = _scan(_gtsv_step, (dT[0], duT[0], bT[0]), (dlT[1:], dT[1:], duT[1:], bT[1:]))
        p0 = _o.concatenate([p0, _o.expand_dims(dn, 0)], 0)
        zero = _o.zeros((1,) + dn.shape, dtype=d.dtype)
        p1, p2 = _o.concatenate([p1, zero], 0), _o.concatenate([p2, zero], 0)
        pb = _o.concatenate([pb, _o.expand_dims(bn, 0)], 0)
    if perturb_singular:
        info = np.finfo(d.dtype.np)
        scale = _o.max(_o.maximum(_o.maximum(_o.abs(p0), _o.abs(p1)), _o.abs(p2)), axis=0)
        tol = _o.maximum(scale * float(info.eps), float(info.tiny))
        p0 = _o.where(_o.abs(p0) < tol, _o.where(p0 < 0.0, -tol, tol), p0)
    _, x = _scan(_back_step, _o.zeros((2,) + bT.shape[1:], dtype=d.dtype), (p0, p1, p2, pb), reverse=True)
    if not perturb_singular:
        bad = _o.any(p0 == 0.0, axis=0)
        x = _o.where(_o.expand_dims(bad, -1), float("nan"), x)
    return _moveaxis(x, 0, -2)
