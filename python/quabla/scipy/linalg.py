"""``qb.scipy.linalg``: ``jax.scipy.linalg`` (JAX 0.10.2) on Quabla's linear-algebra ops, so
everything runs eagerly and under ``jit``, ``vmap`` and ``grad`` where JAX's does. Real dtypes
only (Quabla has no complex numbers); integer and bool inputs of the decompositions become
float64, float32 stays float32.

Decompositions and solves: ``cholesky``, ``cho_factor``, ``cho_solve``, ``solve_triangular``,
``solve``, ``lu``, ``lu_factor``, ``lu_solve``, ``qr``, ``qr_multiply``, ``svd``, ``eigh``,
``eigh_tridiagonal``, ``det``, ``inv``, ``polar``, ``hessenberg``, ``solve_sylvester``.
Matrix functions: ``expm`` (Pade with scaling and squaring, differentiable as JAX's) and
``expm_frechet``. Special matrices: ``block_diag``, ``toeplitz``, ``hankel``, ``circulant``,
``companion``, ``fiedler``, ``fiedler_companion``, ``leslie``, ``convolution_matrix``,
``hilbert``, ``invhilbert``, ``pascal``, ``invpascal``, ``helmert``, ``hadamard``.

Not available (each raises UnsupportedOperationError saying why): ``schur`` (needs a real
Schur / Francis QR kernel Quabla lacks), ``rsf2csf``, ``sqrtm``, ``funm`` and ``dft`` (their
results are complex).

Differences from JAX (also in each docstring):

* ``cho_factor`` returns the factor with zeros, not the input's entries, in the other triangle
  (as JAX).
* ``eigh_tridiagonal`` computes the eigenvalues (and eigenvectors) with the dense symmetric
  eigensolver rather than bisection and inverse iteration (eigenvector signs may differ);
  ``tol`` and ``key`` are ignored.
* ``eigh``, ``svd``: eigenvector and singular vector signs may differ from LAPACK's (as
  ``qb.linalg``); the decompositions agree.
* ``polar(method='qdwh')`` is computed from the SVD (same result, to rounding); ``eps`` and
  ``max_iterations`` are ignored.
* ``solve_sylvester`` solves the Kronecker system ``(A (x) I + I (x) B^T) vec(X) = vec(C)``
  (cost O((m n)^3)) instead of Bartels-Stewart on complex Schur forms, and does not replace
  the result by NaNs when ``A`` and ``-B`` have eigenvalues closer than ``tol``.
* ``lu`` accepts a batch ``[..., m, n]`` where JAX's takes one matrix.
* ``pascal`` and ``invpascal``/``invhilbert`` are exact integers (rounded once to the result
  dtype; past n = 100 from log-binomial tables) where JAX's go through ``exp(lgamma)``;
  ``pascal`` is float32 as JAX's.
* Zero-size results (``block_diag()``, ``helmert(1)``, ``fiedler_companion`` of a length-1
  input) are a ShapeError: Quabla has no zero-extent arrays.

Example:
    >>> qb.scipy.linalg.toeplitz(qb.array([1, 2, 3])).tolist()
    [[1, 2, 3], [2, 1, 2], [3, 2, 1]]
"""

import math

import numpy as np

from .. import _ops as _o
from .. import dtypes as _dt
from .. import linalg as _la
from .._control import fori_loop as _fori_loop
from .._control import scan as _scan
from .._control import stop_gradient as _stop_gradient
from .._control import switch as _switch
from .._control import cond as _cond
from .._custom import custom_jvp as _custom_jvp
from .._numpy import log2 as _log2
from .._numpy import tril as _tril
from .._numpy import triu as _triu
from .._trace import bind
from .._transforms import jvp as _jvp
from .._transforms import vmap as _vmap
from ..errors import ArgumentTypeError, DTypeError, InvalidArgumentError, QuablaError, ShapeError, UnsupportedOperationError

__all__ = [
    "block_diag", "cho_factor", "cho_solve", "cholesky", "circulant", "companion", "convolution_matrix", "det", "dft", "eigh",
    "eigh_tridiagonal", "expm", "expm_frechet", "fiedler", "fiedler_companion", "funm", "hadamard", "hankel", "helmert",
    "hessenberg", "hilbert", "inv", "invhilbert", "invpascal", "leslie", "lu", "lu_factor", "lu_solve", "pascal", "polar", "qr",
    "qr_multiply", "rsf2csf", "schur", "solve", "solve_sylvester", "solve_triangular", "sqrtm", "svd", "toeplitz",
]

_shape = _o._shape_str


# ---------------------------------------------------------------------------------------------
# Argument helpers


def _arr(fn, name, x):
    """``x`` as a Quabla array; a conversion error names ``fn`` and the argument."""
    try:
        return _o._to_array(x)
    except QuablaError as e:
        raise type(e)(f"{fn}: argument {name}: {e}") from None


def _fmat(fn, x, name="a", square=False):
    """``x`` as a float array of rank >= 2 (square over the last two axes when asked)."""
    x = _arr(fn, name, x)
    _check_real(fn, name, x)
    x = _o._floatify(x)
    if x.ndim < 2:
        raise ShapeError(f"{fn}: {name} must have at least two dimensions, got shape {_shape(x.shape)}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ShapeError(f"{fn}: {name} must be a (batch of) square matrices, got shape {_shape(x.shape)}")
    return x


def _check_real(fn, name, x):
    if not (x.dtype.is_float or x.dtype.is_int or x.dtype.is_bool):
        raise DTypeError(f"{fn}: {name} has unsupported dtype {x.dtype.name}")


def _float_pair(fn, a, b, na="a", nb="b"):
    """``a`` and ``b`` as float arrays of one dtype (ints become float64; float32 and float64
    do not mix, as everywhere in Quabla)."""
    a, b = _arr(fn, na, a), _arr(fn, nb, b)
    dt = _dt.result_type(fn, a.dtype, b.dtype)
    dt = dt if dt.is_float else _dt.float64
    return _o.astype(a, dt), _o.astype(b, dt)


def _flag(fn, name, v):
    return _o._bool_arg(fn, name, v)


def _static_int(fn, name, v):
    return _o._int_arg(fn, name, v)


def _choice(fn, name, v, options):
    if not isinstance(v, str) or v not in options:
        raise InvalidArgumentError(f"{fn}: {name} must be one of {', '.join(repr(o) for o in options)}, got {_o._short_repr(v)}")
    return v


def _batch(fn, *pairs):
    """Broadcasts the batch dims of arrays given as ``(array, core_rank)`` pairs."""
    try:
        batch = _o._bcast_shapes(fn, *[x.shape[: x.ndim - k] for x, k in pairs])
    except QuablaError:
        raise ShapeError(f"{fn}: batch dimensions of shapes {', '.join(_shape(x.shape) for x, _ in pairs)} do not broadcast") from None
    return [_o.broadcast_to(x, batch + x.shape[x.ndim - k:]) for x, k in pairs]


def _iota(shape, dim):
    return _o._iota(shape, dim)


def _mT(x):
    return _o.swapaxes(x, -1, -2)


def _eye(n, dtype, m=None, k=0):
    return _o.astype(_o.eye(n, m, k), dtype)


# ---------------------------------------------------------------------------------------------
# Cholesky, triangular and LU solves


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, debug=None, check_finite=True):
    """Solves ``op(a) x = b`` for triangular ``a`` (``jax.scipy.linalg.solve_triangular``).

    Args:
        a: ``[..., m, m]``; only its ``lower`` (else upper) triangle is read.
        b: ``[..., m]`` or ``[..., m, n]``; batch dims broadcast.
        trans: 0 or 'N' (``a``), 1 or 'T' (``a.T``), 2 or 'C' (the same for real ``a``).
        lower: ``a`` is lower triangular.
        unit_diagonal: take ``a``'s diagonal as ones.
        overwrite_b, debug, check_finite: unused.

    Returns:
        ``x``, shaped as ``b`` with the broadcast batch dims. Differentiable.

    Example:
        >>> qb.scipy.linalg.solve_triangular(qb.array([[2.0, 0.0], [1.0, 3.0]]), qb.array([2.0, 7.0]), lower=True).tolist()
        [1.0, 2.0]
    """
    if not (isinstance(trans, str) and trans in ("N", "T", "C")) and not (isinstance(trans, (int, np.integer)) and not isinstance(trans, bool) and trans in (0, 1, 2)):
        raise InvalidArgumentError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got {_o._short_repr(trans)}")
    lower = _flag("solve_triangular", "lower", lower)
    unit_diagonal = _flag("solve_triangular", "unit_diagonal", unit_diagonal)
    a = _fmat("solve_triangular", a, square=True)
    b = _arr("solve_triangular", "b", b)
    return _la.solve_triangular(a, b, trans, lower, unit_diagonal, overwrite_b, debug, check_finite)


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """Cholesky factor reading only the ``lower`` (else upper) triangle of ``a`` (no
    symmetrization, as ``jax.scipy.linalg.cholesky``); upper by default.

    Args:
        a: a (batch of) symmetric positive definite matrices ``[..., n, n]``.
        lower: compute the lower factor ``L`` (``a = L L^T``), else the upper ``U`` (``a = U^T U``).
        overwrite_a, check_finite: unused (as in JAX).

    Returns:
        The triangular factor, zeros in the other triangle; NaNs where ``a`` is not positive
        definite.

    Example:
        >>> qb.scipy.linalg.cholesky(qb.array([[4.0, 2.0], [2.0, 10.0]])).tolist()
        [[2.0, 1.0], [0.0, 3.0]]
    """
    del overwrite_a, check_finite
    a = _fmat("cholesky", a, square=True)
    return bind(_o._op("cholesky", lower=_flag("cholesky", "lower", lower)), a)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """``(c, lower)``: the Cholesky factor of ``a`` and which triangle it is in, for
    :func:`cho_solve`.

    Args:
        a: a (batch of) symmetric positive definite matrices.
        lower: which factor (see :func:`cholesky`).
        overwrite_a, check_finite: unused.

    Returns:
        ``(c, lower)``; ``c``'s other triangle is zeros (SciPy leaves ``a``'s entries there).

    Example:
        >>> c, low = qb.scipy.linalg.cho_factor(qb.array([[4.0, 2.0], [2.0, 10.0]]))
        >>> c.tolist(), low
        ([[2.0, 1.0], [0.0, 3.0]], False)
    """
    return cholesky(a, lower, overwrite_a, check_finite), lower


def _cho_solve(c, lower, b):
    """``x`` with ``c c^T x = b`` (``lower``) or ``c^T c x = b``; ``b`` ``[..., m, k]``, batch
    dims already broadcast."""
    y = _la._trsm(c, b, True, lower, not lower, False)
    return _la._trsm(c, y, True, lower, lower, False)


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """Solves ``a x = b`` given ``cho_factor(a)`` (two triangular solves).

    Args:
        c_and_lower: ``(c, lower)`` from :func:`cho_factor`.
        b: ``[m]``, ``[..., m]`` (a batch of vectors, when ``c.ndim == b.ndim + 1``, as
            JAX) or ``[..., m, n]``; batch dims broadcast with ``c``'s.
        overwrite_b, check_finite: unused.

    Returns:
        ``x`` of ``b``'s shape (with the broadcast batch dims).

    Example:
        >>> c = qb.scipy.linalg.cho_factor(qb.array([[4.0, 2.0], [2.0, 10.0]]))
        >>> [round(x, 12) for x in qb.scipy.linalg.cho_solve(c, qb.array([8.0, 22.0])).tolist()]
        [1.0, 2.0]
    """
    del overwrite_b, check_finite
    if not isinstance(c_and_lower, (tuple, list)) or len(c_and_lower) != 2:
        raise ArgumentTypeError(f"cho_solve: c_and_lower must be a pair (c, lower), got {type(c_and_lower).__name__}")
    c, lower = c_and_lower
    lower = _flag("cho_solve", "lower", lower)
    c = _fmat("cho_solve", c, "c", square=True)
    c, b = _float_pair("cho_solve", c, b, "c", "b")
    if b.ndim < 1:
        raise ShapeError(f"cho_solve: b must have at least one dimension, got shape {_shape(b.shape)}")
    vec = b.ndim == 1 or (c.ndim == b.ndim + 1 and b.shape[-1] == c.shape[-1])
    if vec:
        b = _o.expand_dims(b, -1)
    if b.ndim < 2 or b.shape[-2] != c.shape[-1]:
        raise ShapeError(f"cho_solve: c {_shape(c.shape)} and b {_shape(b.shape)} have incompatible shapes")
    c, b = _batch("cho_solve", (c, 2), (b, 2))
    x = _cho_solve(c, lower, b)
    return _o.squeeze(x, -1) if vec else x


def det(a, overwrite_a=False, check_finite=True):
    """Determinant of a (batch of) square matrices (``jax.scipy.linalg.det``).

    Args:
        a: ``[..., n, n]``.
        overwrite_a, check_finite: unused.

    Returns:
        ``[...]``: the determinants (LU with partial pivoting; cofactor formulas for 2 x 2 and
        3 x 3). Differentiable.

    Example:
        >>> round(qb.scipy.linalg.det(qb.array([[1.0, 2.0], [3.0, 4.0]])).item(), 12)
        -2.0
    """
    del overwrite_a, check_finite
    return _la.det(_fmat("det", a, square=True))


def inv(a, overwrite_a=False, check_finite=True):
    """Inverse of a (batch of) square matrices (``jax.scipy.linalg.inv``).

    Args:
        a: ``[..., n, n]``.
        overwrite_a, check_finite: unused.

    Returns:
        ``[..., n, n]``; singular ``a`` gives inf/NaN entries, as JAX. Differentiable.

    Example:
        >>> qb.scipy.linalg.inv(qb.array([[2.0, 0.0], [0.0, 4.0]])).tolist()
        [[0.5, 0.0], [0.0, 0.25]]
    """
    del overwrite_a, check_finite
    return _la.inv(_fmat("inv", a, square=True))


_POS_SOLVERS = {}


def _pos_solver(lower):
    """``x = a^-1 b`` by Cholesky of the ``lower`` (else upper) triangle of ``a``, with the
    derivative of a linear solve against the whole of ``a`` (JAX's ``custom_linear_solve``):
    ``dx = a^-1 (db - da x)``."""
    f = _POS_SOLVERS.get(lower)
    if f is not None:
        return f

    def _chol(a):
        return bind(_o._op("cholesky", lower=lower), a)

    @_custom_jvp
    def solve_pos(a, b):
        return _cho_solve(_chol(a), lower, b)

    @solve_pos.defjvp
    def _solve_pos_jvp(primals, tangents):
        a, b = primals
        da, db = tangents
        c = _chol(a)
        x = _cho_solve(c, lower, b)
        return x, _cho_solve(c, lower, db - _o.matmul(da, x))

    _POS_SOLVERS[lower] = solve_pos
    return solve_pos


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, debug=False, check_finite=True, assume_a="gen"):
    """Solves ``a x = b`` (``jax.scipy.linalg.solve``).

    Args:
        a: ``[..., m, m]``.
        b: ``[m]``, ``[..., m]`` (with ``a.ndim == b.ndim + 1``) or ``[..., m, k]``; batch dims
            broadcast.
        lower: with ``assume_a='pos'``, read the lower (else upper) triangle of ``a``.
        assume_a: ``'gen'``, ``'sym'`` or ``'her'`` (LU with partial pivoting, as JAX for all
            three) or ``'pos'`` (Cholesky; the derivative is that of the solve with the
            whole ``a``, as JAX's ``custom_linear_solve``).
        overwrite_a, overwrite_b, debug, check_finite: unused.

    Returns:
        ``x``, the shape of ``b`` with the broadcast batch dims. Differentiable in ``a`` and
        ``b``.

    Example:
        >>> qb.scipy.linalg.solve(qb.array([[2.0, 1.0], [1.0, 3.0]]), qb.array([3.0, 5.0])).tolist()
        [0.8, 1.4]
    """
    del overwrite_a, overwrite_b, debug, check_finite
    assume_a = _choice("solve", "assume_a", assume_a, ("gen", "sym", "her", "pos"))
    lower = _flag("solve", "lower", lower)
    a = _fmat("solve", a, square=True)
    a, b = _float_pair("solve", a, b)
    if b.ndim < 1:
        raise ShapeError(f"solve: b must have at least one dimension, got shape {_shape(b.shape)}")
    if assume_a != "pos":
        return _la.solve(a, b)
    vec = b.ndim == 1 or b.ndim == a.ndim - 1
    if vec:
        b = _o.expand_dims(b, -1)
    if b.ndim < 2 or b.shape[-2] != a.shape[-1]:
        raise ShapeError(f"solve: a {_shape(a.shape)} and b {_shape(b.shape[:-1] if vec else b.shape)} have incompatible shapes")
    a, b = _batch("solve", (a, 2), (b, 2))
    x = _pos_solver(lower)(a, b)
    return _o.squeeze(x, -1) if vec else x


def lu_factor(a, overwrite_a=False, check_finite=True):
    """LU factorisation with partial pivoting (``jax.scipy.linalg.lu_factor``).

    Args:
        a: ``[..., m, n]``.
        overwrite_a, check_finite: unused.

    Returns:
        ``(lu, piv)``: ``l`` (unit diagonal, below) and ``u`` packed in ``lu``; ``piv``
        (int32, ``[..., min(m, n)]``): row ``i`` was swapped with row ``piv[i]``.

    Example:
        >>> lu, piv = qb.scipy.linalg.lu_factor(qb.array([[1.0, 2.0], [3.0, 4.0]]))
        >>> piv.tolist()
        [1, 1]
    """
    del overwrite_a, check_finite
    a = _fmat("lu_factor", a)
    lu_, piv, _perm = _la._lu(a)
    return lu_, piv


def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
    """LU decomposition ``a = p @ l @ u`` (``jax.scipy.linalg.lu``).

    Args:
        a: ``[m, n]`` (a batch ``[..., m, n]`` is accepted too, where JAX takes one matrix).
        permute_l: return ``(p @ l, u)`` instead of ``(p, l, u)``.
        overwrite_a, check_finite: unused.

    Returns:
        ``p`` (``[m, m]`` permutation matrix, a's dtype), ``l`` (``[m, k]`` unit lower
        triangular, ``k = min(m, n)``), ``u`` (``[k, n]`` upper triangular).

    Example:
        >>> p, l, u = qb.scipy.linalg.lu(qb.array([[1.0, 2.0], [3.0, 4.0]]))
        >>> p.tolist(), u.tolist()
        ([[0.0, 1.0], [1.0, 0.0]], [[3.0, 4.0], [0.0, 0.6666666666666667]])
    """
    del overwrite_a, check_finite
    permute_l = _flag("lu", "permute_l", permute_l)
    a = _fmat("lu", a)
    m, n = a.shape[-2:]
    k = min(m, n)
    packed, _piv, perm = _la._lu(a)
    # a[perm] = l u, so a = p l u with p[i, j] = (perm[j] == i).
    p = _mT(_la._perm_matrix(perm, a.dtype))
    l = _tril(packed, -1)[..., :, :k] + _eye(m, a.dtype, k)
    u = _triu(packed)[..., :k, :]
    if permute_l:
        return _o.matmul(p, l), u
    return p, l, u


def _pivots_to_perm(piv, m):
    """The row permutation (int32 ``[..., m]``) that LAPACK's sequential swaps ``piv`` make."""
    k = piv.shape[-1]
    batch = piv.shape[:-1]
    idx = _o.astype(_iota((m,), 0), _dt.int32)
    kidx = _o.astype(_iota((k,), 0), _dt.int32)
    piv = _o.astype(piv, _dt.int32)
    perm0 = _o.broadcast_to(idx, batch + (m,))

    def body(i, perm):
        i = _o.astype(i, _dt.int32)
        j = _o.sum(_o.where(kidx == i, piv, 0), axis=-1, keepdims=True, dtype=piv.dtype)
        at_i = idx == i
        at_j = idx == j
        pi = _o.sum(_o.where(at_i, perm, 0), axis=-1, keepdims=True, dtype=perm.dtype)
        pj = _o.sum(_o.where(at_j, perm, 0), axis=-1, keepdims=True, dtype=perm.dtype)
        return _o.where(at_i, pj, _o.where(at_j, pi, perm))

    return _fori_loop(0, k, body, perm0)


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """Solves ``a x = b`` (``trans`` 0) or ``a^T x = b`` (``trans`` 1, or 2 for real input)
    given ``lu_factor(a)`` (``jax.scipy.linalg.lu_solve``).

    Args:
        lu_and_piv: ``(lu, piv)`` from :func:`lu_factor` of a (batch of) square matrices.
        b: ``[m]``, ``[..., m]`` (a batch of vectors, when ``lu.ndim == b.ndim + 1``) or
            ``[..., m, k]``; batch dims broadcast.
        trans: 0, 1 or 2.
        overwrite_b, check_finite: unused.

    Returns:
        ``x``, shaped as ``b`` with the broadcast batch dims. Differentiable.

    Example:
        >>> f = qb.scipy.linalg.lu_factor(qb.array([[2.0, 1.0], [1.0, 3.0]]))
        >>> qb.scipy.linalg.lu_solve(f, qb.array([3.0, 5.0])).tolist()
        [0.8, 1.4]
    """
    del overwrite_b, check_finite
    if not isinstance(lu_and_piv, (tuple, list)) or len(lu_and_piv) != 2:
        raise ArgumentTypeError(f"lu_solve: lu_and_piv must be a pair (lu, piv), got {type(lu_and_piv).__name__}")
    if not isinstance(trans, (int, np.integer)) or isinstance(trans, bool) or trans not in (0, 1, 2):
        raise InvalidArgumentError(f"lu_solve: trans must be 0, 1 or 2, got {_o._short_repr(trans)}")
    lu_, piv = lu_and_piv
    lu_ = _fmat("lu_solve", lu_, "lu", square=True)
    piv = _arr("lu_solve", "piv", piv)
    if not piv.dtype.is_int:
        raise DTypeError(f"lu_solve: piv must be integers, got {piv.dtype.name}")
    m = lu_.shape[-1]
    if piv.ndim < 1 or piv.shape[-1] != m:
        raise ShapeError(f"lu_solve: piv {_shape(piv.shape)} does not fit lu {_shape(lu_.shape)}")
    lu_, b = _float_pair("lu_solve", lu_, b, "lu", "b")
    if b.ndim < 1:
        raise ShapeError(f"lu_solve: b must have at least one dimension, got shape {_shape(b.shape)}")
    vec = b.ndim == 1 or (lu_.ndim == b.ndim + 1 and b.shape[-1] == m)
    if vec:
        b = _o.expand_dims(b, -1)
    if b.ndim < 2 or b.shape[-2] != m:
        raise ShapeError(f"lu_solve: lu {_shape(lu_.shape)} and b {_shape(b.shape[:-1] if vec else b.shape)} have incompatible shapes")
    lu_, piv, b = _batch("lu_solve", (lu_, 2), (piv, 1), (b, 2))
    perm = _pivots_to_perm(piv, m)
    if trans == 0:
        x = _la._lu_solve(lu_, perm, b)
    else:
        # a = P^T L U, so a^T x = b is U^T L^T (P x) = b.
        y = _la._trsm(lu_, b, True, False, True, False)
        z = _la._trsm(lu_, y, True, True, True, True)
        x = _o.matmul(_mT(_la._perm_matrix(perm, lu_.dtype)), z)
    return _o.squeeze(x, -1) if vec else x


# ---------------------------------------------------------------------------------------------
# QR, SVD, eigenproblems, polar, Hessenberg


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """QR decomposition (``jax.scipy.linalg.qr``, Householder).

    Args:
        a: ``[..., m, n]``.
        mode: ``'full'`` (``q`` ``[..., m, m]``, ``r`` ``[..., m, n]``), ``'economic'``
            (``q`` ``[..., m, k]``, ``r`` ``[..., k, n]``, ``k = min(m, n)``) or ``'r'``
            (``(r,)``, ``r`` ``[..., m, n]``).
        pivoting: column pivoting is not supported (UnsupportedOperationError).
        overwrite_a, lwork, check_finite: unused.

    Returns:
        ``(q, r)``, or the 1-tuple ``(r,)`` for mode ``'r'``. Differentiable.

    Example:
        >>> q, r = qb.scipy.linalg.qr(qb.array([[3.0, 1.0], [4.0, 2.0]]))
        >>> [round(x, 12) for x in r.tolist()[0]]
        [-5.0, -2.2]
    """
    del overwrite_a, lwork, check_finite
    mode = _choice("qr", "mode", mode, ("full", "r", "economic"))
    if _flag("qr", "pivoting", pivoting):
        raise UnsupportedOperationError("qr: pivoting=True (column-pivoted QR) is not supported", op="qr")
    a = _fmat("qr", a)
    q, r = bind(_o._op("qr", full_matrices=mode != "economic"), a)
    return (r,) if mode == "r" else (q, r)


def qr_multiply(a, c, mode="right", pivoting=False, conjugate=False, overwrite_a=False, overwrite_c=False):
    """``c @ q`` (mode ``'right'``) or ``q @ c`` (``'left'``) with the economic ``q`` of
    ``a``'s QR decomposition, and its ``r`` (``jax.scipy.linalg.qr_multiply``).

    Args:
        a: ``[..., m, n]``; ``k = min(m, n)``.
        c: ``'right'``: ``[..., p, m]`` (or ``[m]``); ``'left'``: ``[..., k, p]`` (or ``[k]``).
            Batch dims broadcast with ``a``'s.
        mode: ``'right'`` or ``'left'``.
        pivoting: not supported (UnsupportedOperationError).
        conjugate: multiply by the conjugate of ``q``: the same for real input.
        overwrite_a, overwrite_c: unused.

    Returns:
        ``(cq, r)``: ``[..., p, k]`` or ``[..., m, p]`` (1-D ``c``: 1-D), and ``r`` ``[..., k, n]``.

    Example:
        >>> cq, r = qb.scipy.linalg.qr_multiply(qb.array([[3.0, 1.0], [4.0, 2.0]]), qb.array([1.0, 0.0]))
        >>> [round(x, 12) for x in cq.tolist()]
        [-0.6, -0.8]
    """
    del overwrite_a, overwrite_c
    mode = _choice("qr_multiply", "mode", mode, ("right", "left"))
    if _flag("qr_multiply", "pivoting", pivoting):
        raise UnsupportedOperationError("qr_multiply: pivoting=True (column-pivoted QR) is not supported", op="qr_multiply")
    _flag("qr_multiply", "conjugate", conjugate)
    a = _fmat("qr_multiply", a)
    a, c = _float_pair("qr_multiply", a, c, "a", "c")
    if c.ndim < 1:
        raise ShapeError(f"qr_multiply: c must have at least one dimension, got shape {_shape(c.shape)}")
    onedim = c.ndim == 1
    if onedim:
        c = _o.expand_dims(c, -1 if mode == "left" else 0)
    m, n = a.shape[-2:]
    k = min(m, n)
    if mode == "left" and c.shape[-2] != k:
        raise ShapeError(f"qr_multiply: a {_shape(a.shape)} has q with {k} columns, but c has shape {_shape(c.shape)} ({k} rows needed)")
    if mode == "right" and c.shape[-1] != m:
        raise ShapeError(f"qr_multiply: a {_shape(a.shape)} has q with {m} rows, but c has shape {_shape(c.shape)} ({m} columns needed)")
    a, c = _batch("qr_multiply", (a, 2), (c, 2))
    q, r = bind(_o._op("qr", full_matrices=False), a)
    cq = _o.matmul(q, c) if mode == "left" else _o.matmul(c, q)
    if onedim:
        cq = _o.ravel(cq) if cq.ndim == 2 else _o.reshape(cq, cq.shape[:-2] + (-1,))
    return cq, r


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True, lapack_driver="gesdd"):
    """Singular value decomposition ``a = u @ diag(s) @ vh`` (``jax.scipy.linalg.svd``).

    Args:
        a: ``[..., m, n]``.
        full_matrices: ``u`` ``[..., m, m]`` and ``vh`` ``[..., n, n]``, else the reduced
            ``[..., m, k]`` and ``[..., k, n]``.
        compute_uv: return ``(u, s, vh)``, else ``s`` only.
        overwrite_a, check_finite, lapack_driver: unused.

    Returns:
        ``(u, s, vh)`` or ``s`` (descending). Singular vector signs may differ from LAPACK's.

    Example:
        >>> [round(x, 12) for x in qb.scipy.linalg.svd(qb.array([[3.0, 0.0], [0.0, -4.0]]), compute_uv=False).tolist()]
        [4.0, 3.0]
    """
    del overwrite_a, check_finite, lapack_driver
    full_matrices = _flag("svd", "full_matrices", full_matrices)
    compute_uv = _flag("svd", "compute_uv", compute_uv)
    a = _fmat("svd", a)
    r = _la.svd(a, full_matrices, compute_uv)
    return tuple(r) if compute_uv else r


def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False, turbo=True, eigvals=None, type=1, check_finite=True):  # noqa: A002 - SciPy's name
    """Eigenvalues (ascending) and eigenvectors of a (batch of) symmetric matrices
    (``jax.scipy.linalg.eigh``: the standard problem only).

    Args:
        a: ``[..., n, n]``; symmetrized first, as JAX does (so ``lower`` does not change the
            result of a symmetric input).
        b: must be None (the generalized problem is unsupported, as in JAX).
        lower: which triangle is nominally read.
        eigvals_only: return only the eigenvalues.
        eigvals: must be None; type: must be 1 (as JAX).
        overwrite_a, overwrite_b, turbo, check_finite: unused.

    Returns:
        ``(w, v)`` (``v``'s columns the eigenvectors; signs may differ from LAPACK's) or ``w``.

    Example:
        >>> [round(x, 12) for x in qb.scipy.linalg.eigh(qb.array([[2.0, 1.0], [1.0, 2.0]]), eigvals_only=True).tolist()]
        [1.0, 3.0]
    """
    del overwrite_a, overwrite_b, turbo, check_finite
    if b is not None:
        raise UnsupportedOperationError("eigh: only b=None is supported (the generalized eigenproblem is not implemented, as in JAX)", op="eigh")
    if eigvals is not None:
        raise UnsupportedOperationError("eigh: only eigvals=None is supported (as in JAX)", op="eigh")
    if not isinstance(type, (int, np.integer)) or isinstance(type, bool) or type != 1:
        raise UnsupportedOperationError(f"eigh: only type=1 is supported (as in JAX), got {_o._short_repr(type)}", op="eigh")
    lower = _flag("eigh", "lower", lower)
    eigvals_only = _flag("eigh", "eigvals_only", eigvals_only)
    a = _fmat("eigh", a, square=True)
    w, v = _la.eigh(a, "L" if lower else "U", True)
    return w if eigvals_only else (w, v)


def _tridiag(d, e):
    """The dense symmetric tridiagonal matrix with diagonal ``d`` ``[n]`` and off-diagonal ``e``."""
    n = d.shape[-1]
    r, c = _iota((n, n), 0), _iota((n, n), 1)
    diag = _o.where(r == c, _o.expand_dims(d, -1), 0.0)
    lo = np.minimum(np.arange(n)[:, None], np.arange(n)[None, :])
    off = _o.take(e, np.minimum(lo, n - 2), axis=-1)
    return diag + _o.where(_o.abs(r - c) == 1, off, 0.0)


def eigh_tridiagonal(d, e, *, eigvals_only=False, select="a", select_range=None, tol=None, key=None):
    """Eigenvalues (ascending) and eigenvectors of the symmetric tridiagonal matrix with
    diagonal ``d`` and off-diagonal ``e`` (``jax.scipy.linalg.eigh_tridiagonal``).

    Computed with the dense symmetric eigensolver where JAX bisects (values agree to
    rounding); ``tol`` and ``key`` are accepted and ignored.

    Args:
        d: ``[n]``, float32 or float64.
        e: ``[n - 1]``, ``d``'s dtype.
        eigvals_only: return only the eigenvalues.
        select: ``'a'`` (all) or ``'i'`` (indices ``select_range[0] <= i <= select_range[1]``);
            ``'v'`` is unsupported, as in JAX.
        select_range: ``(lo, hi)`` for ``select='i'``.

    Returns:
        ``w`` ``[k]``, or ``(w, v)`` with ``v`` ``[n, k]`` (eigenvectors in columns; their signs
        may differ from JAX's inverse iteration's).

    Example:
        >>> w = qb.scipy.linalg.eigh_tridiagonal(qb.array([2.0, 2.0]), qb.array([1.0]), eigvals_only=True)
        >>> [round(x, 12) for x in w.tolist()]
        [1.0, 3.0]
    """
    del tol, key
    fn = "eigh_tridiagonal"
    eigvals_only = _flag(fn, "eigvals_only", eigvals_only)
    d, e = _arr(fn, "d", d), _arr(fn, "e", e)
    if d.dtype is not e.dtype:
        raise DTypeError(f"{fn}: d and e must have the same dtype, got {d.dtype.name} and {e.dtype.name}")
    if not d.dtype.is_float:
        raise DTypeError(f"{fn}: only float32 and float64 inputs are supported, got {d.dtype.name}")
    if d.ndim != 1:
        raise ShapeError(f"{fn}: d must be 1-D, got shape {_shape(d.shape)}")
    n = d.shape[0]
    select = _choice(fn, "select", select, ("a", "i", "v"))
    if select == "v":
        raise UnsupportedOperationError(f"{fn}: select='v' is not supported (as in JAX: it needs dynamic shapes)", op=fn)
    lo, hi = 0, n - 1
    if select == "i":
        if not isinstance(select_range, (tuple, list)) or len(select_range) != 2:
            raise InvalidArgumentError(f"{fn}: select='i' needs select_range=(lo, hi), got {_o._short_repr(select_range)}")
        lo, hi = (_static_int(fn, "select_range", v) for v in select_range)
        if lo > hi:
            raise InvalidArgumentError(f"{fn}: empty index range select_range={select_range!r}")
        if lo < 0 or hi >= n:
            raise InvalidArgumentError(f"{fn}: select_range={select_range!r} is out of range for {n} eigenvalues")
    if n == 1:
        return d if eigvals_only else (d, _eye(1, d.dtype))
    if e.ndim != 1 or e.shape[0] != n - 1:
        raise ShapeError(f"{fn}: e must have shape ({n - 1},) for d of shape {_shape(d.shape)}, got {_shape(e.shape)}")
    w, v = _la.eigh(_tridiag(d, e), "L", False)
    if (lo, hi) != (0, n - 1):
        w, v = w[lo:hi + 1], v[:, lo:hi + 1]
    return w if eigvals_only else (w, v)


def polar(a, side="right", *, method="qdwh", eps=None, max_iterations=None):
    """Polar decomposition ``a = u @ p`` (side ``'right'``) or ``a = p @ u`` (``'left'``)
    (``jax.scipy.linalg.polar``).

    Both methods are computed from the reduced SVD (``u = U Vh``, ``p = V S Vh`` or
    ``U S U^T``): ``'qdwh'`` gives JAX's result to rounding, with JAX's shape limits;
    ``eps`` and ``max_iterations`` are ignored.

    Args:
        a: ``[..., m, n]``.
        side: ``'right'`` or ``'left'``.
        method: ``'qdwh'`` (``m >= n`` for ``'right'``, ``m < n`` for ``'left'``) or ``'svd'``.

    Returns:
        ``(u, p)``: ``u`` ``[..., m, n]`` with orthonormal columns (or rows), ``p``
        symmetric positive semi-definite, ``[..., n, n]`` (right) or ``[..., m, m]`` (left).

    Example:
        >>> u, p = qb.scipy.linalg.polar(qb.array([[2.0, 0.0], [0.0, -3.0]]))
        >>> [[round(x, 12) for x in row] for row in p.tolist()]
        [[2.0, 0.0], [0.0, 3.0]]
    """
    del eps, max_iterations
    side = _choice("polar", "side", side, ("right", "left"))
    method = _choice("polar", "method", method, ("qdwh", "svd"))
    a = _fmat("polar", a)
    m, n = a.shape[-2:]
    if method == "qdwh" and not ((m >= n and side == "right") or (m < n and side == "left")):
        raise UnsupportedOperationError(
            f"polar: method='qdwh' supports m >= n with side='right' and m < n with side='left', got shape {_shape(a.shape)} with side={side!r} (use method='svd')",
            op="polar")
    u, s, vh = _la.svd(a, False, True)
    unitary = _o.matmul(u, vh)
    if side == "right":
        p = _o.matmul(_mT(vh) * _o.expand_dims(s, -2), vh)
    else:
        p = _o.matmul(u * _o.expand_dims(s, -2), _mT(u))
    return unitary, p


def hessenberg(a, *, calc_q=False, overwrite_a=False, check_finite=True):
    """Upper Hessenberg form ``a = q @ h @ q.T`` by Householder reflections, with LAPACK's
    (``gehrd``) conventions (``jax.scipy.linalg.hessenberg``).

    Args:
        a: ``[..., n, n]``.
        calc_q: also return the orthogonal ``q``.
        overwrite_a, check_finite: unused.

    Returns:
        ``h`` (zero below the first subdiagonal), or ``(h, q)``.

    Example:
        >>> h = qb.scipy.linalg.hessenberg(qb.array([[1.0, 2.0, 3.0], [0.0, 5.0, 6.0], [4.0, 8.0, 9.0]]))
        >>> [[round(x, 12) for x in row] for row in h.tolist()]
        [[1.0, -3.0, -2.0], [-4.0, 9.0, 8.0], [0.0, 6.0, 5.0]]
    """
    del overwrite_a, check_finite
    calc_q = _flag("hessenberg", "calc_q", calc_q)
    a = _fmat("hessenberg", a, square=True)
    n = a.shape[-1]
    dt = a.dtype
    q = _o.broadcast_to(_eye(n, dt), a.shape)
    if n > 2:
        idx = _iota((n,), 0)

        def step(k, carry):
            h, q = carry
            k = _o.astype(k, idx.dtype)
            col = _o.sum(_o.where(idx == k, h, 0.0), axis=-1)  # h[..., :, k]
            alpha = _o.sum(_o.where(idx == k + 1, col, 0.0), axis=-1, keepdims=True)
            rest = _o.where(idx > k + 1, col, 0.0)
            xnorm = _o.sqrt(_o.sum(rest * rest, axis=-1, keepdims=True))
            nz = xnorm != 0.0
            norm = _o.sqrt(alpha * alpha + xnorm * xnorm)
            beta = _o.where(alpha >= 0.0, -norm, norm)
            safe_beta = _o.where(nz, beta, 1.0)
            tau = _o.where(nz, (beta - alpha) / safe_beta, 0.0)
            scale = _o.where(nz, 1.0 / _o.where(nz, alpha - beta, 1.0), 0.0)
            v = _o.where(idx == k + 1, 1.0, rest * scale)
            # h <- H h H with H = I - tau v v^T; q <- q H.
            w = _o.sum(_o.expand_dims(v, -1) * h, axis=-2)
            h = h - _o.expand_dims(tau * v, -1) * _o.expand_dims(w, -2)
            u = _o.sum(h * _o.expand_dims(v, -2), axis=-1)
            h = h - _o.expand_dims(tau * u, -1) * _o.expand_dims(v, -2)
            qv = _o.sum(q * _o.expand_dims(v, -2), axis=-1)
            q = q - _o.expand_dims(tau * qv, -1) * _o.expand_dims(v, -2)
            return h, q

        a, q = _fori_loop(0, n - 2, step, (a, q))
    h = _triu(a, -1)
    return (h, q) if calc_q else h


def solve_sylvester(A, B, C, *, method="schur", tol=1e-8):
    """Solves the Sylvester equation ``A X + X B = C`` (``jax.scipy.linalg.solve_sylvester``).

    Quabla has no Schur decomposition, so this solves the equivalent Kronecker system
    ``(A (x) I_n + I_m (x) B^T) vec(X) = vec(C)`` by LU: O((m n)^3) time and (m n)^2 memory,
    fine for small systems. Unlike JAX, the result is not replaced by NaNs when eigenvalues
    of ``A`` and ``-B`` are within ``tol`` (a singular system still gives inf/NaN).
    Differentiable in ``A``, ``B`` and ``C``.

    Args:
        A: ``[..., m, m]``. B: ``[..., n, n]``. C: ``[..., m, n]``; batch dims broadcast.
        method: ``'schur'`` or ``'eigen'`` (both take the same path here).
        tol: accepted for compatibility; unused.

    Returns:
        ``X`` ``[..., m, n]``.

    Example:
        >>> x = qb.scipy.linalg.solve_sylvester(qb.array([[2.0]]), qb.array([[3.0]]), qb.array([[10.0]]))
        >>> x.tolist()
        [[2.0]]
    """
    del tol
    fn = "solve_sylvester"
    _choice(fn, "method", method, ("schur", "eigen"))
    A = _fmat(fn, A, "A", square=True)
    B = _fmat(fn, B, "B", square=True)
    C = _fmat(fn, C, "C")
    A, B = _float_pair(fn, A, B, "A", "B")
    A, C = _float_pair(fn, A, C, "A", "C")
    B = _o.astype(B, A.dtype)
    m, n = C.shape[-2:]
    if A.shape[-1] != m or B.shape[-1] != n:
        raise ShapeError(f"{fn}: incompatible shapes A {_shape(A.shape)}, B {_shape(B.shape)}, C {_shape(C.shape)}")
    A, B, C = _batch(fn, (A, 2), (B, 2), (C, 2))
    batch = C.shape[:-2]
    dt = A.dtype
    # K[(i, j), (k, l)] = A[i, k] d(j, l) + d(i, k) B[l, j] (row-major vec).
    In, Im = _eye(n, dt), _eye(m, dt)
    a4 = _o.reshape(A, batch + (m, 1, m, 1)) * _o.reshape(In, (1, n, 1, n))
    b4 = _o.reshape(Im, (m, 1, m, 1)) * _o.reshape(_mT(B), batch + (1, n, 1, n))
    K = _o.reshape(a4 + b4, batch + (m * n, m * n))
    x = _la.solve(K, _o.reshape(C, batch + (m * n, 1)))
    return _o.reshape(x, batch + (m, n))


# ---------------------------------------------------------------------------------------------
# Matrix exponential


_PADE = {
    3: (120.0, 60.0, 12.0, 1.0),
    5: (30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0),
    7: (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0),
    9: (17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0, 110880.0, 3960.0, 90.0, 1.0),
    13: (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
         10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0),
}
# (theta: largest 1-norm for the degree-13 / degree-7 approximant, 1-norm thresholds of the
# smaller degrees, degrees) by dtype: Higham's constants, as JAX.
_EXPM = {
    "float64": (5.371920351148152, (1.495585217958292e-002, 2.539398330063230e-001, 9.504178996162932e-001, 2.097847961257068e+000), (3, 5, 7, 9, 13)),
    "float32": (3.925724783138660, (4.258730016922831e-001, 1.880152677804762e+000), (3, 5, 7)),
}


def _pade(A, deg):
    """``(U, V)``: the odd and even parts of the degree-``deg`` Pade numerator of ``exp(A)``."""
    b = _PADE[deg]
    eye = _eye(A.shape[-1], A.dtype)
    A2 = _o.matmul(A, A)
    if deg == 13:
        A4 = _o.matmul(A2, A2)
        A6 = _o.matmul(A4, A2)
        U = _o.matmul(A, _o.matmul(A6, b[13] * A6 + b[11] * A4 + b[9] * A2) + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * eye)
        V = _o.matmul(A6, b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * eye
        return U, V
    powers = [eye, A2]
    for _ in range(2, deg // 2 + 1):
        powers.append(_o.matmul(powers[-1], A2) if len(powers) != 2 else _o.matmul(A2, A2))
    odd = b[1] * eye
    even = b[0] * eye
    for i in range(1, deg // 2 + 1):
        odd = odd + b[2 * i + 1] * powers[i]
        even = even + b[2 * i] * powers[i]
    return _o.matmul(A, odd), even


def _expm2(A, upper_triangular, max_squarings):
    """``exp(A)`` of one square matrix."""
    theta, conds, degs = _EXPM[A.dtype.name]
    norm1 = _stop_gradient(_o.max(_o.sum(_o.abs(A), axis=0)))
    n_sq = _o.maximum(0.0, _o.floor(_log2(norm1 / theta)))
    A = A / _o.power(2.0, n_sq)
    idx = _o.sum(_o.astype(norm1 >= _o.astype(_o._to_array(np.array(conds)), A.dtype), _dt.int32))
    U, V = _switch(idx, [lambda x, d=d: _pade(x, d) for d in degs], A)
    P, Q = U + V, V - U
    R = _la.solve_triangular(Q, P) if upper_triangular else _la.solve(Q, P)
    if max_squarings > 0:
        def sq(r, i):
            return _cond(i < n_sq, lambda x: _o.matmul(x, x), lambda x: x, r), None

        R, _ = _scan(sq, R, _o.astype(_o.arange(max_squarings), A.dtype))
    return _o.where(n_sq > max_squarings, float("nan"), R)


def expm(A, *, upper_triangular=False, max_squarings=16):
    """Matrix exponential by Pade approximation with scaling and squaring
    (``jax.scipy.linalg.expm``, the same algorithm and constants: degree 3 to 13 chosen by the
    1-norm for float64, 3 to 7 for float32).

    Args:
        A: ``[..., n, n]``.
        upper_triangular: ``A`` is upper triangular (the Pade quotient uses a triangular solve).
        max_squarings: the most squarings; a matrix needing more gives NaNs, as JAX.

    Returns:
        ``exp(A)``, ``[..., n, n]``. Differentiable (through the algorithm, as JAX).

    Example:
        >>> [[round(x, 12) for x in row] for row in qb.scipy.linalg.expm(qb.array([[0.0, 1.0], [0.0, 0.0]])).tolist()]
        [[1.0, 1.0], [0.0, 1.0]]
    """
    upper_triangular = _flag("expm", "upper_triangular", upper_triangular)
    max_squarings = _static_int("expm", "max_squarings", max_squarings)
    A = _fmat("expm", A, "A", square=True)
    if A.ndim == 2:
        return _expm2(A, upper_triangular, max_squarings)
    batch = A.shape[:-2]
    flat = _o.reshape(A, (-1,) + A.shape[-2:])
    out = _vmap(lambda x: _expm2(x, upper_triangular, max_squarings))(flat)
    return _o.reshape(out, batch + A.shape[-2:])


def expm_frechet(A, E, *, method=None, compute_expm=True):
    """The Frechet derivative of :func:`expm` at ``A`` in the direction ``E`` (a JVP of
    ``expm``, as ``jax.scipy.linalg.expm_frechet``).

    Args:
        A: ``[..., n, n]``.
        E: ``A``'s shape.
        method: unused (as in JAX).
        compute_expm: also return ``expm(A)``.

    Returns:
        ``(expm(A), L(A, E))`` or ``L(A, E)``.

    Example:
        >>> e, l = qb.scipy.linalg.expm_frechet(qb.array([[0.0]]), qb.array([[1.0]]))
        >>> e.tolist(), l.tolist()
        ([[1.0]], [[1.0]])
    """
    del method
    compute_expm = _flag("expm_frechet", "compute_expm", compute_expm)
    A = _fmat("expm_frechet", A, "A", square=True)
    E = _fmat("expm_frechet", E, "E", square=True)
    if A.shape != E.shape:
        raise ShapeError(f"expm_frechet: A and E must have the same shape, got {_shape(A.shape)} and {_shape(E.shape)}")
    A, E = _float_pair("expm_frechet", A, E, "A", "E")
    ea, l = _jvp(lambda x: expm(x), (A,), (E,))
    return (ea, l) if compute_expm else l


# ---------------------------------------------------------------------------------------------
# Unsupported: complex results or missing kernels


def _unsupported(fn, why):
    raise UnsupportedOperationError(f"{fn}: not supported in Quabla: {why}", op=fn)


def schur(a, output="real"):
    """Schur decomposition (``jax.scipy.linalg.schur``): not supported.

    Quabla has no real Schur (Francis double-shift QR) kernel, and ``output='complex'``
    needs complex numbers; raises UnsupportedOperationError.

    Args:
        a: ``[..., n, n]``.
        output: ``'real'`` or ``'complex'``.

    Returns:
        Never returns.

    Example:
        >>> qb.scipy.linalg.schur(qb.eye(2))
        Traceback (most recent call last):
        ...
        quabla.errors.UnsupportedOperationError: schur: not supported in Quabla: ...
    """
    _choice("schur", "output", output, ("real", "complex"))
    _unsupported("schur", "it needs a real Schur (Francis QR) kernel" if output == "real" else "output='complex' needs complex numbers")


def rsf2csf(T, Z, check_finite=True):
    """Real to complex Schur form (``jax.scipy.linalg.rsf2csf``): not supported (its results
    are complex); raises UnsupportedOperationError.

    Args:
        T, Z: a real Schur form and its Schur vectors.

    Returns:
        Never returns.

    Example:
        >>> qb.scipy.linalg.rsf2csf(qb.eye(2), qb.eye(2))
        Traceback (most recent call last):
        ...
        quabla.errors.UnsupportedOperationError: rsf2csf: not supported in Quabla: ...
    """
    _unsupported("rsf2csf", "its results are complex (Quabla has no complex dtypes)")


def sqrtm(A, blocksize=1):
    """Matrix square root (``jax.scipy.linalg.sqrtm``): not supported. JAX computes it from
    the complex Schur form and returns a complex array even for real input; Quabla has no
    complex dtypes. Raises UnsupportedOperationError.

    Args:
        A: ``[n, n]``.
        blocksize: unused.

    Returns:
        Never returns.

    Example:
        >>> qb.scipy.linalg.sqrtm(qb.eye(2))
        Traceback (most recent call last):
        ...
        quabla.errors.UnsupportedOperationError: sqrtm: not supported in Quabla: ...
    """
    _unsupported("sqrtm", "JAX's result is complex (from the complex Schur form); Quabla has no complex dtypes")


def funm(A, func, disp=True):
    """A matrix function from a scalar one (``jax.scipy.linalg.funm``): not supported. JAX
    evaluates it on the complex Schur form and returns a complex array; raises
    UnsupportedOperationError.

    Args:
        A: ``[n, n]``. func: the scalar function. disp: unused.

    Returns:
        Never returns.

    Example:
        >>> qb.scipy.linalg.funm(qb.eye(2), qb.exp)
        Traceback (most recent call last):
        ...
        quabla.errors.UnsupportedOperationError: funm: not supported in Quabla: ...
    """
    _unsupported("funm", "it needs the complex Schur form and returns complex values (Quabla has no complex dtypes)")


def dft(n, scale=None, *, dtype=None):
    """The discrete Fourier transform matrix (``jax.scipy.linalg.dft``): not supported (its
    entries are complex); raises UnsupportedOperationError.

    Args:
        n: the size. scale: None, 'sqrtn' or 'n'. dtype: a complex dtype.

    Returns:
        Never returns.

    Example:
        >>> qb.scipy.linalg.dft(4)
        Traceback (most recent call last):
        ...
        quabla.errors.UnsupportedOperationError: dft: not supported in Quabla: ...
    """
    _unsupported("dft", "its entries are complex (Quabla has no complex dtypes)")


# ---------------------------------------------------------------------------------------------
# Special matrices


def _vec_arg(fn, name, x):
    """``x`` as an array of rank >= 1 (scalars become ``[1]``, as ``atleast_1d``)."""
    x = _arr(fn, name, x)
    _check_real(fn, name, x)
    return _o.reshape(x, (1,)) if x.ndim == 0 else x


def _promote(fn, xs, names, inexact=False):
    """Arrays of one dtype: Python scalars are weak (they take the arrays' dtype, as JAX)."""
    arrays = [(i, x) for i, x in enumerate(xs) if not _o._is_scalar(x)]
    dt = None
    for i, x in arrays:
        x = _arr(fn, names[i], x)
        dt = x.dtype if dt is None else _dt.result_type(fn, dt, x.dtype)
    for i, x in enumerate(xs):
        if _o._is_scalar(x):
            dt = _dt.scalar_dtype(x) if dt is None else _dt.weak_result(dt, x)
    if inexact and not dt.is_float:
        dt = _dt.float64
    return [_o.astype(_arr(fn, names[i], x), dt) for i, x in enumerate(xs)]


def _gather_matrix(v, idx, mask=None):
    """``out[..., i, j] = v[..., idx[i, j]]`` (zero where the static ``mask`` is False)."""
    out = _o.take(v, np.ascontiguousarray(idx, dtype=np.int64), axis=-1)
    if mask is not None:
        out = _o.where(_o._from_numpy(np.ascontiguousarray(mask)), out, _o.astype(_o._to_array(0), v.dtype))
    return out


def _size(fn, n, min_n=1):
    n = _static_int(fn, "n", n)
    if n < min_n:
        raise InvalidArgumentError(f"{fn}: n must be at least {min_n}, got {n}")
    _o._shape_arg(fn, (n, n), _dt.float64)
    return n


def block_diag(*arrs):
    """The block diagonal matrix of the arguments (``jax.scipy.linalg.block_diag``).

    Args:
        *arrs: arrays of rank <= 2 (scalars are ``[1, 1]``, vectors ``[1, n]``); dtypes
            promote (Python scalars are weak).

    Returns:
        ``[sum of rows, sum of columns]``. At least one argument is needed (JAX's empty
        result has a zero extent).

    Example:
        >>> qb.scipy.linalg.block_diag(qb.array([[1, 2]]), 3).tolist()
        [[1, 2, 0], [0, 0, 3]]
    """
    if not arrs:
        raise ShapeError("block_diag: needs at least one array (the empty block matrix has a zero extent)")
    names = [f"arrs[{i}]" for i in range(len(arrs))]
    xs = _promote("block_diag", list(arrs), names)
    for i, x in enumerate(xs):
        if x.ndim > 2:
            raise ShapeError(f"block_diag: arguments must have at most 2 dimensions, got shape {_shape(x.shape)} at argument {i}")
    xs = [_o.reshape(x, (1,) * (2 - x.ndim) + x.shape) for x in xs]
    total = sum(x.shape[1] for x in xs)
    rows, col = [], 0
    zero = _o.astype(_o._to_array(0), xs[0].dtype)
    for x in xs:
        c = x.shape[1]
        pad = _o._op("pad", edge_padding_low=(0, col), edge_padding_high=(0, total - col - c), interior_padding=(0, 0))
        rows.append(bind(pad, x, zero))
        col += c
    return rows[0] if len(rows) == 1 else _o.concatenate(rows, axis=0)


def toeplitz(c, r=None):
    """The Toeplitz matrix with first column ``c`` and first row ``r`` (``r[0]`` ignored;
    ``r`` defaults to ``c``) (``jax.scipy.linalg.toeplitz``).

    Args:
        c: ``[..., m]`` (a scalar is ``[1]``).
        r: ``[..., n]``; batch dims broadcast with ``c``'s.

    Returns:
        ``[..., m, n]`` with ``out[i, j] = c[i - j]`` (``i >= j``), ``r[j - i]`` otherwise.

    Example:
        >>> qb.scipy.linalg.toeplitz(qb.array([1.0, 2.0]), qb.array([1.0, 5.0, 6.0])).tolist()
        [[1.0, 5.0, 6.0], [2.0, 1.0, 5.0]]
    """
    if r is None:
        c, = _promote("toeplitz", [c], ["c"])
        r = c
    else:
        c, r = _promote("toeplitz", [c, r], ["c", "r"])
    c, r = _vec_arg("toeplitz", "c", c), _vec_arg("toeplitz", "r", r)
    c, r = _batch("toeplitz", (c, 1), (r, 1))
    m, n = c.shape[-1], r.shape[-1]
    v = c if n == 1 else _o.concatenate([c, r[..., 1:]], axis=-1)
    i, j = np.arange(m)[:, None], np.arange(n)[None, :]
    return _gather_matrix(v, np.where(i >= j, i - j, m - 1 + j - i))


def hankel(c, r=None):
    """The Hankel matrix with first column ``c`` and last row ``r`` (``r[0]`` ignored; ``r``
    defaults to zeros) (``jax.scipy.linalg.hankel``).

    Args:
        c: ``[..., m]``, at least 1-D.
        r: ``[..., n]``, at least 1-D; batch dims broadcast with ``c``'s.

    Returns:
        ``[..., m, n]`` with ``out[i, j] = c[i + j]`` (``i + j < m``), ``r[i + j - m + 1]`` otherwise.

    Example:
        >>> qb.scipy.linalg.hankel(qb.array([1, 2, 3])).tolist()
        [[1, 2, 3], [2, 3, 0], [3, 0, 0]]
    """
    if r is None:
        c, = _promote("hankel", [c], ["c"])
        r = _o.zeros_like(c) if c.ndim > 0 else None
    else:
        c, r = _promote("hankel", [c, r], ["c", "r"])
    if c.ndim == 0:
        raise ShapeError("hankel: c must be at least 1-dimensional, got a scalar")
    if r.ndim == 0:
        raise ShapeError("hankel: r must be at least 1-dimensional, got a scalar")
    c, r = _batch("hankel", (c, 1), (r, 1))
    m, n = c.shape[-1], r.shape[-1]
    v = c if n == 1 else _o.concatenate([c, r[..., 1:]], axis=-1)
    return _gather_matrix(v, np.arange(m)[:, None] + np.arange(n)[None, :])


def circulant(c):
    """The circulant matrix with first column ``c`` (``jax.scipy.linalg.circulant``).

    Args:
        c: ``[..., n]`` (a scalar is ``[1]``).

    Returns:
        ``[..., n, n]`` with ``out[i, j] = c[(i - j) % n]``.

    Example:
        >>> qb.scipy.linalg.circulant(qb.array([1, 2, 3])).tolist()
        [[1, 3, 2], [2, 1, 3], [3, 2, 1]]
    """
    c = _vec_arg("circulant", "c", c)
    n = c.shape[-1]
    return _gather_matrix(c, (np.arange(n)[:, None] - np.arange(n)[None, :]) % n)


def leslie(f, s):
    """The Leslie matrix of fecundities ``f`` and survival rates ``s``
    (``jax.scipy.linalg.leslie``).

    Args:
        f: ``[..., n]``, ``n >= 2``.
        s: ``[..., n - 1]``; batch dims broadcast; dtypes promote.

    Returns:
        ``[..., n, n]``: ``f`` in the first row, ``s`` on the first subdiagonal.

    Example:
        >>> qb.scipy.linalg.leslie(qb.array([0.1, 2.0]), qb.array([0.5])).tolist()
        [[0.1, 2.0], [0.5, 0.0]]
    """
    f, s = _promote("leslie", [f, s], ["f", "s"])
    f, s = _vec_arg("leslie", "f", f), _vec_arg("leslie", "s", s)
    n = f.shape[-1]
    if n < 2:
        raise ShapeError(f"leslie: the length of f along the last axis must be at least 2, got shape {_shape(f.shape)}")
    if s.shape[-1] != n - 1:
        raise ShapeError(f"leslie: the length of s along the last axis must be one less than f's, got shapes {_shape(f.shape)} and {_shape(s.shape)}")
    f, s = _batch("leslie", (f, 1), (s, 1))
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    v = _o.concatenate([f, s], axis=-1)
    return _gather_matrix(v, np.where(i == 0, j, n + np.minimum(j, n - 2)), (i == 0) | (j == i - 1))


def companion(a):
    """The companion matrix of the polynomial with coefficients ``a`` (highest degree first)
    (``jax.scipy.linalg.companion``).

    Args:
        a: ``[..., n]``, ``n >= 2``; integers become float64.

    Returns:
        ``[..., n - 1, n - 1]``: first row ``-a[1:] / a[0]``, ones on the first subdiagonal.

    Example:
        >>> qb.scipy.linalg.companion(qb.array([1.0, -3.0, 2.0])).tolist()
        [[3.0, -2.0], [1.0, 0.0]]
    """
    a, = _promote("companion", [a], ["a"], inexact=True)
    a = _vec_arg("companion", "a", a)
    if a.shape[-1] < 2:
        raise ShapeError(f"companion: the length of a along the last axis must be at least 2, got shape {_shape(a.shape)}")
    m = a.shape[-1] - 1
    first = -a[..., 1:] / a[..., :1]
    i, j = np.arange(m)[:, None], np.arange(m)[None, :]
    v = _o.concatenate([first, _o.ones_like(a[..., :1])], axis=-1)
    return _gather_matrix(v, np.where(i == 0, j, m), (i == 0) | (j == i - 1))


def fiedler(a):
    """The Fiedler matrix ``|a[i] - a[j]|`` (``jax.scipy.linalg.fiedler``).

    Args:
        a: ``[..., n]`` (a scalar is ``[1]``).

    Returns:
        ``[..., n, n]``, ``a``'s dtype.

    Example:
        >>> qb.scipy.linalg.fiedler(qb.array([1, 4, 2])).tolist()
        [[0, 3, 1], [3, 0, 2], [1, 2, 0]]
    """
    a = _vec_arg("fiedler", "a", a)
    return _o.abs(_o.expand_dims(a, -1) - _o.expand_dims(a, -2))


def fiedler_companion(a):
    """The Fiedler companion matrix of the polynomial with coefficients ``a`` (highest degree
    first): a pentadiagonal matrix with the companion matrix's eigenvalues
    (``jax.scipy.linalg.fiedler_companion``).

    Args:
        a: ``[..., n]``, ``n >= 2`` (a length-1 ``a`` gives JAX's zero-size result: a
            ShapeError here); integers become float64.

    Returns:
        ``[..., n - 1, n - 1]``.

    Example:
        >>> qb.scipy.linalg.fiedler_companion(qb.array([1.0, -3.0, 2.0])).tolist()
        [[3.0, -2.0], [1.0, 0.0]]
    """
    a, = _promote("fiedler_companion", [a], ["a"], inexact=True)
    a = _vec_arg("fiedler_companion", "a", a)
    if a.shape[-1] < 2:
        raise ShapeError(f"fiedler_companion: the length of a along the last axis must be at least 2 (a shorter one gives a zero-size matrix), got shape {_shape(a.shape)}")
    n = a.shape[-1] - 1
    a = a / a[..., :1]
    if n == 1:
        return _o.expand_dims(-a[..., 1:], -1)
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    even, odd = i % 2 == 0, i % 2 == 1
    val_mask = ((i == 0) & (j == 0)) | ((j == i + 1) & even) | ((j == i - 1) & even & (i >= 2))
    one_mask = ((i == 1) & (j == 0)) | ((j == i + 2) & even) | ((j == i - 2) & odd & (i >= 3))
    # Entries -a[1] at (0, 0), -a[i + 2] at (i, i + 1) and -a[i + 1] at (i, i - 1) for even i.
    idx = np.where((i == 0) & (j == 0), 1, np.where(j == i + 1, np.minimum(i + 2, n), np.minimum(i + 1, n)))
    vals = _gather_matrix(-a, idx, val_mask)
    return vals + _o.astype(_o._from_numpy(one_mask), a.dtype)


def convolution_matrix(a, n, mode="full"):
    """The matrix of the linear convolution with ``a`` (``jax.scipy.linalg.convolution_matrix``):
    ``convolution_matrix(a, n, mode) @ v == convolve(a, v, mode)`` for ``v`` of length ``n``.

    Args:
        a: ``[..., m]``, at least 1-D.
        n: the length of the convolved vector (a static positive int).
        mode: ``'full'`` (``m + n - 1`` rows), ``'valid'`` (``max(m, n) - min(m, n) + 1``) or
            ``'same'`` (``max(m, n)``).

    Returns:
        ``[..., rows, n]``, ``a``'s dtype.

    Example:
        >>> qb.scipy.linalg.convolution_matrix(qb.array([1, 2]), 2).tolist()
        [[1, 0], [2, 1], [0, 2]]
    """
    fn = "convolution_matrix"
    n = _static_int(fn, "n", n)
    if n <= 0:
        raise InvalidArgumentError(f"{fn}: n must be a positive integer, got {n}")
    a = _arr(fn, "a", a)
    _check_real(fn, "a", a)
    if a.ndim == 0:
        raise ShapeError(f"{fn}: a must be at least 1-dimensional, got a scalar")
    mode = _choice(fn, "mode", mode, ("full", "valid", "same"))
    m = a.shape[-1]
    L = m + n - 1
    _o._shape_arg(fn, a.shape[:-1] + (L, n), a.dtype)
    if mode == "same":
        trim = min(n, m) - 1
        tb, te = trim // 2, trim - trim // 2
    elif mode == "valid":
        tb = te = min(n, m) - 1
    else:
        tb = te = 0
    i, j = np.arange(tb, L - te)[:, None], np.arange(n)[None, :]
    k = i - j
    mask = (k >= 0) & (k < m)
    return _gather_matrix(a, np.clip(k, 0, m - 1), mask)


def hilbert(n):
    """The Hilbert matrix ``1 / (i + j + 1)`` (``jax.scipy.linalg.hilbert``).

    Args:
        n: the size (a static positive int).

    Returns:
        ``[n, n]`` float64.

    Example:
        >>> qb.scipy.linalg.hilbert(2).tolist()
        [[1.0, 0.5], [0.5, 0.3333333333333333]]
    """
    n = _size("hilbert", n)
    i = _o.astype(_iota((n, n), 0), _dt.float64)
    j = _o.astype(_iota((n, n), 1), _dt.float64)
    return 1.0 / (i + j + 1.0)


def _signed_float(v):
    """A Python int as a float, +-inf past the float64 range."""
    try:
        return float(v)
    except OverflowError:
        return math.copysign(math.inf, v)


def _exact(fn, n, entry, dtype):
    """The ``[n, n]`` matrix of the Python ints ``entry(i, j)``, rounded once to ``dtype``;
    past n = 100 the entries are computed in float64 from log-binomials."""
    if n <= 100:
        out = np.array([[_signed_float(entry(i, j)) for j in range(n)] for i in range(n)], dtype=np.float64)
        with np.errstate(over="ignore"):
            return _o._from_numpy(out.astype(dtype.np))
    return None


def _log_comb(nn, kk):
    """``log C(nn, kk)`` (``-inf`` outside ``0 <= kk <= nn``) of integer NumPy arrays, float64,
    from a table of ``lgamma(k + 1)``."""
    ok = (kk >= 0) & (kk <= nn)
    nn2, kk2 = np.where(ok, nn, 0), np.where(ok, kk, 0)
    lf = np.array([math.lgamma(k + 1.0) for k in range(int(nn2.max()) + 1)])
    return np.where(ok, lf[nn2] - lf[kk2] - lf[nn2 - kk2], -np.inf)


def invhilbert(n):
    """The exact inverse of the Hilbert matrix (``jax.scipy.linalg.invhilbert``): integers,
    rounded once to float64 (inf past float64's range); JAX evaluates binomials through
    ``exp(lgamma)``. Past n = 100 this does too.

    Args:
        n: the size (a static positive int).

    Returns:
        ``[n, n]`` float64.

    Example:
        >>> qb.scipy.linalg.invhilbert(2).tolist()
        [[4.0, -6.0], [-6.0, 12.0]]
    """
    n = _size("invhilbert", n)
    c = math.comb

    def entry(i, j):
        s = i + j
        return (-1) ** s * (s + 1) * c(n + i, n - j - 1) * c(n + j, n - i - 1) * c(s, i) ** 2

    out = _exact("invhilbert", n, entry, _dt.float64)
    if out is not None:
        return out
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    s = i + j
    with np.errstate(over="ignore"):
        mag = np.exp(np.log(s + 1.0) + _log_comb(n + i, n - j - 1) + _log_comb(n + j, n - i - 1) + 2 * _log_comb(s, i))
    return _o._from_numpy(np.where(s % 2 == 0, mag, -mag))


def _pascal_lower(n, dtype, signed=False):
    """``C(i, j)`` (``(-1)^(i-j) C(i, j)`` when ``signed``) as ``[n, n]`` of ``dtype``."""
    out = _exact("pascal", n, lambda i, j: (1 - 2 * ((i - j) % 2) if signed else 1) * math.comb(i, j), dtype)
    if out is not None:
        return out
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    with np.errstate(over="ignore"):
        mag = np.exp(_log_comb(i, j))
    return _o._from_numpy(np.where(signed & ((i - j) % 2 == 1), -mag, mag).astype(dtype.np))


def pascal(n, kind=None):
    """The Pascal matrix (``jax.scipy.linalg.pascal``): float32, as JAX's (whose entries
    are approximate; these are the exact binomials rounded once).

    Args:
        n: the size (a static positive int).
        kind: ``'symmetric'`` (default, ``C(i + j, i)``), ``'lower'`` (``C(i, j)``) or ``'upper'``.

    Returns:
        ``[n, n]`` float32.

    Example:
        >>> qb.scipy.linalg.pascal(3).tolist()
        [[1.0, 1.0, 1.0], [1.0, 2.0, 3.0], [1.0, 3.0, 6.0]]
    """
    n = _size("pascal", n)
    kind = _choice("pascal", "kind", "symmetric" if kind is None else kind, ("symmetric", "lower", "upper"))
    if kind == "symmetric":
        out = _exact("pascal", n, lambda i, j: math.comb(i + j, i), _dt.float32)
        if out is not None:
            return out
        i, j = np.arange(n)[:, None], np.arange(n)[None, :]
        with np.errstate(over="ignore"):
            return _o._from_numpy(np.exp(_log_comb(i + j, i)).astype(np.float32))
    low = _pascal_lower(n, _dt.float32)
    return low if kind == "lower" else _mT(low)


def invpascal(n, kind=None):
    """The inverse of the Pascal matrix (``jax.scipy.linalg.invpascal``), float64.

    Args:
        n: the size (a static positive int).
        kind: ``'symmetric'`` (default), ``'lower'`` or ``'upper'``.

    Returns:
        ``[n, n]`` float64: the lower one ``(-1)^(i-j) C(i, j)``, exact; the symmetric one the
        product of the upper and lower.

    Example:
        >>> qb.scipy.linalg.invpascal(3, kind="lower").tolist()
        [[1.0, 0.0, 0.0], [-1.0, 1.0, 0.0], [1.0, -2.0, 1.0]]
    """
    n = _size("invpascal", n)
    kind = _choice("invpascal", "kind", "symmetric" if kind is None else kind, ("symmetric", "lower", "upper"))
    low = _pascal_lower(n, _dt.float64, signed=True)
    if kind == "lower":
        return low
    if kind == "upper":
        return _mT(low)
    return _o.matmul(_mT(low), low)


def helmert(n, full=False):
    """The Helmert matrix (``jax.scipy.linalg.helmert``): orthonormal rows, the last ``n - 1``
    orthogonal to the ones vector.

    Args:
        n: the size (a static int; ``n >= 2``, or ``n == 1`` with ``full``: JAX's ``helmert(1)``
            has zero rows, a ShapeError here).
        full: include the first row ``1 / sqrt(n)``.

    Returns:
        ``[n, n]`` (full) or ``[n - 1, n]`` float64.

    Example:
        >>> [[round(x, 12) for x in row] for row in qb.scipy.linalg.helmert(2).tolist()]
        [[0.707106781187, -0.707106781187]]
    """
    n = _size("helmert", n)
    full = _flag("helmert", "full", full)
    if n == 1 and not full:
        raise ShapeError("helmert: n=1 without full gives a zero-row matrix (Quabla has no zero-extent arrays)")
    i, j = np.arange(n - 1)[:, None], np.arange(n)[None, :]
    k = (i + 1).astype(np.float64)
    den = np.sqrt(k * (k + 1.0))
    h = np.where(j <= i, 1.0 / den, np.where(j == i + 1, -k / den, 0.0))
    if full:
        h = np.concatenate([np.full((1, n), 1.0 / np.sqrt(n)), h], axis=0)
    return _o._from_numpy(np.ascontiguousarray(h))


def hadamard(n, dtype=int):
    """The Sylvester-construction Hadamard matrix of order ``n``, a power of 2
    (``jax.scipy.linalg.hadamard``): ``out[i, j] = (-1) ** popcount(i & j)``.

    Args:
        n: the order (a static power of 2).
        dtype: the result dtype (``int``: int64, as JAX with x64); a signed integer or float
            dtype (bool and unsigned ones are a DTypeError).

    Returns:
        ``[n, n]`` of ``dtype``.

    Example:
        >>> qb.scipy.linalg.hadamard(2).tolist()
        [[1, 1], [1, -1]]
    """
    n = _static_int("hadamard", "n", n)
    if n < 1 or n & (n - 1):
        raise InvalidArgumentError(f"hadamard: n must be a positive power of 2, got {n}")
    dt = _dt.dtype(dtype, "hadamard")
    _o._shape_arg("hadamard", (n, n), dt)
    if dt.is_bool or dt.name in ("uint8", "uint32"):
        raise DTypeError(f"hadamard: dtype must be signed (the matrix has -1 entries), got {dt.name}")
    h = np.ones((1, 1), dtype=np.int64)
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return _o._from_numpy(h.astype(dt.np))
