"""``qb.linalg``: linear algebra with ``jax.numpy.linalg``'s signatures and semantics.

Built on the dialect's linear-algebra family (``cholesky``, ``triangular_solve``, ``lu``,
``qr``, ``eigh``, ``svd``; see docs/spec.md), which works on the last two axes and batches
over the leading ones. Everything here runs eagerly, under ``jit``, ``vmap``, ``grad`` and
``jvp`` (the ops carry JVP, VJP and batching rules). Real dtypes only; integer inputs are
promoted to float64 (as JAX with x64).

Differences from JAX: ``solve`` differentiates through its LU factorisation (JAX uses
``custom_linear_solve``; the derivatives agree); ``eigh`` and ``svd`` are our own kernels with LAPACK's structure
(tridiagonal / bidiagonal reduction and implicit QR sweeps): eigenvector and singular vector
signs may differ from LAPACK's, the decompositions agree;
``svd(hermitian=True)`` computes an ordinary SVD.
"""

from collections import namedtuple

from . import _indexing as _ix
from . import _ops as _o
from . import dtypes as _dt
from ._trace import bind
from .errors import ShapeError, UnsupportedOperationError

__all__ = ["cholesky", "det", "eigh", "eigvalsh", "inv", "lstsq", "matrix_power", "norm", "pinv", "qr", "slogdet", "solve", "solve_triangular", "svd", "svdvals", "lu_factor", "EighResult", "QRResult", "SlogdetResult", "SVDResult"]

EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
QRResult = namedtuple("QRResult", ["Q", "R"])
SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])


def _shape(s):
    return _o._shape_str(s)


def _mat(fn, a, square=False):
    """``a`` as a float array of rank >= 2 (square when asked)."""
    a = _o._floatify(_o._to_array(a))
    if a.ndim < 2:
        raise ShapeError(f"{fn}: a must have at least two dimensions, got shape {_shape(a.shape)}")
    if square and a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"{fn}: a must be a (batch of) square matrices, got shape {_shape(a.shape)}")
    return a


def _mT(x):
    return _o.swapaxes(x, -1, -2)


def _sym(a):
    return (a + _mT(a)) * 0.5


def _eye_like(a):
    return _o.astype(_o.eye(a.shape[-1]), a.dtype)


def _diag(x):
    """The diagonals of a batch of square matrices: ``[..., n, n] -> [..., n]``."""
    return _o.sum(x * _eye_like(x), axis=-1)


def _broadcast_batch(fn, a, b, b_core):
    """Broadcasts the batch dims of ``a`` (2 core dims) and ``b`` (``b_core`` core dims)."""
    ba, bb = a.shape[:-2], b.shape[: b.ndim - b_core]
    try:
        batch = _o._bcast_shapes(fn, ba, bb)
    except Exception:
        raise ShapeError(f"{fn}: batch dimensions of a {_shape(a.shape)} and b {_shape(b.shape)} do not broadcast") from None
    return _o.broadcast_to(a, batch + a.shape[-2:]), _o.broadcast_to(b, batch + b.shape[b.ndim - b_core :])


def _common_float(a, b):
    dt = _dt.result_type("linalg", a.dtype, b.dtype)
    dt = dt if dt.is_float else _dt.float64
    return _o.astype(a, dt), _o.astype(b, dt)


def _trsm(a, b, left_side, lower, transpose_a, unit_diagonal):
    op = _o._op("triangular_solve", left_side=bool(left_side), lower=bool(lower), transpose_a=bool(transpose_a), unit_diagonal=bool(unit_diagonal))
    return bind(op, a, b)


def cholesky(a, *, upper=False, symmetrize_input=True):
    """Cholesky factor of a (batch of) symmetric positive definite matrices: lower
    triangular ``L`` with ``a = L @ L.T`` (``upper=True``: ``U`` with ``a = U.T @ U``).
    Non-positive-definite input gives NaNs in the factor's triangle, as JAX.

    Example:
        >>> qb.linalg.cholesky(qb.array([[4.0, 2.0], [2.0, 10.0]])).tolist()
        [[2.0, 0.0], [1.0, 3.0]]
    """
    a = _mat("cholesky", a, square=True)
    if symmetrize_input:
        a = _sym(a)
    l = bind(_o._op("cholesky", lower=True), a)
    return _mT(l) if upper else l


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, debug=None, check_finite=True):
    """Solves ``op(a) x = b`` for triangular ``a`` (``jax.scipy.linalg.solve_triangular``):
    ``trans`` 0/'N' (a), 1/'T' or 2/'C' (a.T); only the ``lower`` (else upper) triangle of
    ``a`` is read, its diagonal taken as ones with ``unit_diagonal``. ``b`` is ``[..., m]``
    or ``[..., m, n]``; batch dims broadcast.

    Example:
        >>> qb.linalg.solve_triangular(qb.array([[2.0, 0.0], [1.0, 3.0]]), qb.array([2.0, 7.0]), lower=True).tolist()
        [1.0, 2.0]
    """
    del overwrite_b, debug, check_finite
    transpose = {0: False, "N": False, 1: True, "T": True, 2: True, "C": True}.get(trans)
    if transpose is None:
        raise UnsupportedOperationError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    a = _mat("solve_triangular", a, square=True)
    b = _o._to_array(b)
    a, b = _common_float(a, b)
    vec = b.ndim == a.ndim - 1 or b.ndim == 1
    if b.ndim < 1 or (not vec and b.ndim < 2):
        raise ShapeError(f"solve_triangular: b must have at least one dimension, got shape {_shape(b.shape)}")
    if vec:
        b = _o.expand_dims(b, -1)
    if b.shape[-2] != a.shape[-1]:
        raise ShapeError(f"solve_triangular: a {_shape(a.shape)} and b {_shape(b.shape[:-1] if vec else b.shape)} have incompatible shapes")
    a, b = _broadcast_batch("solve_triangular", a, b, 2)
    x = _trsm(a, b, True, lower, transpose, unit_diagonal)
    return _o.squeeze(x, -1) if vec else x


def _lu(a):
    return bind(_o._op("lu"), a)


def lu_factor(a):
    """LU factorisation with partial pivoting (``jax.scipy.linalg.lu_factor``): ``(lu,
    piv)`` with ``l`` (unit diagonal) and ``u`` packed in ``lu``."""
    a = _mat("lu_factor", a)
    lu, piv, _perm = _lu(a)
    return lu, piv


def _perm_matrix(perm, dtype):
    """``P[..., i, j] = (perm[..., i] == j)``: ``P @ a`` is ``a`` with rows permuted."""
    n = perm.shape[-1]
    return _o.astype(_o.expand_dims(perm, -1) == _o.arange(n, dtype=_dt.int32), dtype)


def _lu_solve(lu, perm, b=None):
    """``x`` with ``l u x = P b`` for the factors packed in ``lu``; ``b`` None: the identity
    (``inv``), so ``P b`` is the permutation matrix itself. ``P b`` is a gather of ``b``'s
    rows (a product with the permutation matrix was an n^3 matmul: inv 256 1122 -> 892-916 us)."""
    if b is None:
        pb = _perm_matrix(perm, lu.dtype)
    else:
        pb = _ix.take_along_axis(b, _o.expand_dims(perm, -1), axis=-2, mode="promise_in_bounds")
    y = _trsm(lu, pb, True, True, False, True)
    return _trsm(lu, y, True, False, False, False)


def solve(a, b):
    """Solves ``a x = b`` (LU with partial pivoting). ``b`` is ``[m]`` (one vector) or
    ``[..., m, n]``; batch dims broadcast. Singular ``a`` gives inf/NaN, as JAX.

    Example:
        >>> qb.linalg.solve(qb.array([[2.0, 1.0], [1.0, 3.0]]), qb.array([3.0, 5.0])).tolist()
        [0.8, 1.4]
    """
    a = _mat("solve", a, square=True)
    b = _o._to_array(b)
    a, b = _common_float(a, b)
    vec = b.ndim == 1
    if b.ndim < 1:
        raise ShapeError(f"solve: b must have at least one dimension, got shape {_shape(b.shape)}")
    if vec:
        b = _o.expand_dims(b, -1)
    if b.shape[-2] != a.shape[-1]:
        raise ShapeError(f"solve: a {_shape(a.shape)} and b {_shape(b.shape[:-1] if vec else b.shape)} have incompatible shapes")
    a, b = _broadcast_batch("solve", a, b, 2)
    lu, _piv, perm = _lu(a)
    x = _lu_solve(lu, perm, b)
    return _o.squeeze(x, -1) if vec else x


def inv(a):
    """Inverse of a (batch of) square matrices (``solve(a, I)``: LU, then the two triangular
    solves of the row-permuted identity).

    Example:
        >>> qb.linalg.inv(qb.array([[2.0, 0.0], [0.0, 4.0]])).tolist()
        [[0.5, 0.0], [0.0, 0.25]]
    """
    a = _mat("inv", a, square=True)
    lu, _piv, perm = _lu(a)
    return _lu_solve(lu, perm)


def _parity(piv):
    """(-1) ** (number of row swaps) of LU pivots, as the float dtype of the caller."""
    k = piv.shape[-1]
    swaps = _o.sum(_o.astype(piv != _o.arange(k, dtype=_dt.int32), _dt.int32), axis=-1)
    return 1.0 - 2.0 * _o.astype(_o.remainder(swaps, 2), _dt.float64)


def det(a):
    """Determinant (product of the LU diagonal times the pivots' parity; 2 x 2 and 3 x 3
    matrices by their cofactor formulas, as JAX: elementwise over a batch, where an LU per
    matrix was 26x JAX's time for 10000 3 x 3 matrices).

    Example:
        >>> round(qb.linalg.det(qb.array([[1.0, 2.0], [3.0, 4.0]])).item(), 12)
        -2.0
    """
    a = _mat("det", a, square=True)
    n = a.shape[-1]
    if n in (2, 3):
        e = [[a[..., i, j] for j in range(n)] for i in range(n)]
        if n == 2:
            return e[0][0] * e[1][1] - e[0][1] * e[1][0]
        return (e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1])
                - e[0][1] * (e[1][0] * e[2][2] - e[1][2] * e[2][0])
                + e[0][2] * (e[1][0] * e[2][1] - e[1][1] * e[2][0]))
    lu, piv, _ = _lu(a)
    return _o.prod(_diag(lu), axis=-1) * _o.astype(_parity(piv), a.dtype)


def slogdet(a, *, method=None):
    """``(sign, log|det a|)`` from the LU factorisation (``method`` 'lu' or None).

    Example:
        >>> s, l = qb.linalg.slogdet(qb.array([[1.0, 2.0], [3.0, 4.0]]))
        >>> s.item(), round(l.item(), 12)
        (-1.0, 0.69314718056)
    """
    if method not in (None, "lu"):
        raise UnsupportedOperationError(f"slogdet: method must be None or 'lu', got {method!r}")
    a = _mat("slogdet", a, square=True)
    lu, piv, _ = _lu(a)
    d = _diag(lu)
    sign = _o.prod(_o.sign(d), axis=-1) * _o.astype(_parity(piv), a.dtype)
    return SlogdetResult(sign, _o.sum(_o.log(_o.abs(d)), axis=-1))


def qr(a, mode="reduced"):
    """QR decomposition (Householder): mode 'reduced' (``Q`` ``[..., m, k]``), 'complete'
    (``Q`` ``[..., m, m]``) or 'r' (``R`` only).

    Example:
        >>> q, r = qb.linalg.qr(qb.array([[3.0, 1.0], [4.0, 2.0]]))
        >>> [round(x, 12) for x in r.tolist()[0]]
        [-5.0, -2.2]
    """
    if mode not in ("reduced", "complete", "r"):
        raise UnsupportedOperationError(f"qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    a = _mat("qr", a)
    q, r = bind(_o._op("qr", full_matrices=mode == "complete"), a)
    return r if mode == "r" else QRResult(q, r)


def eigh(a, UPLO=None, symmetrize_input=True):
    """Eigenvalues (ascending) and eigenvectors (columns) of a (batch of) symmetric
    matrices. ``UPLO`` 'L' (default) or 'U' names the triangle read when
    ``symmetrize_input`` is False.

    Example:
        >>> w, v = qb.linalg.eigh(qb.array([[2.0, 1.0], [1.0, 2.0]]))
        >>> [round(x, 12) for x in w.tolist()]
        [1.0, 3.0]
    """
    if UPLO not in (None, "L", "U"):
        raise UnsupportedOperationError(f"eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
    a = _mat("eigh", a, square=True)
    if symmetrize_input:
        a = _sym(a)
    v, w = bind(_o._op("eigh", lower=UPLO != "U"), a)
    return EighResult(w, v)


def eigvalsh(a, UPLO="L", *, symmetrize_input=True):
    """Eigenvalues (ascending) of a (batch of) symmetric matrices."""
    return eigh(a, UPLO, symmetrize_input).eigenvalues


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """Singular value decomposition ``a = U @ diag(S) @ Vh`` (``S`` descending).

    Example:
        >>> [round(x, 12) for x in qb.linalg.svd(qb.array([[3.0, 0.0], [0.0, -4.0]]), compute_uv=False).tolist()]
        [4.0, 3.0]
    """
    del hermitian
    a = _mat("svd", a)
    u, s, vt = bind(_o._op("svd", full_matrices=bool(full_matrices) and bool(compute_uv)), a)
    return SVDResult(u, s, vt) if compute_uv else s


def svdvals(x):
    """Singular values (descending)."""
    return svd(x, compute_uv=False)


def _norm_axes(fn, x, axis):
    if axis is None:
        return tuple(range(x.ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out = []
    for ax in axes:
        if not -x.ndim <= ax < x.ndim:
            raise ShapeError(f"{fn}: axis {ax} is out of range for shape {_shape(x.shape)}")
        out.append(ax % x.ndim)
    return tuple(out)


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector or matrix norm (``jnp.linalg.norm``). Vector ``ord``: None/2, 1, inf, -inf, 0,
    any other number (``sum(|x|**ord)**(1/ord)``); matrix ``ord`` (two axes, or a 2-D input
    with ``axis=None``): None/'fro', 'nuc', 1, -1, 2, -2, inf, -inf.

    Example:
        >>> qb.linalg.norm(qb.array([3.0, -4.0]), ord=1).item()
        7.0
    """
    keepdims = _o._bool_arg("norm", "keepdims", keepdims)
    x = _o._floatify(_o._to_array(x))
    if axis is None and ord is None:
        r = _o.sqrt(_o.sum(x * x))
        return _o.reshape(r, (1,) * x.ndim) if keepdims else r
    axes = _norm_axes("norm", x, axis)
    if axis is None and x.ndim > 2:
        raise ShapeError(f"norm: ord={ord!r} needs axis for an input of rank {x.ndim}")
    if len(axes) == 1:
        ax = axes[0]
        ax_abs = _o.abs(x)
        if ord is None or ord == 2:
            return _o.sqrt(_o.sum(x * x, axis=ax, keepdims=keepdims))
        if isinstance(ord, str):
            raise UnsupportedOperationError(f"norm: ord {ord!r} is not a vector norm")
        if ord == float("inf"):
            return _o.max(ax_abs, axis=ax, keepdims=keepdims)
        if ord == -float("inf"):
            return _o.min(ax_abs, axis=ax, keepdims=keepdims)
        if ord == 0:
            return _o.sum(_o.astype(x != 0, x.dtype), axis=ax, keepdims=keepdims)
        if ord == 1:
            return _o.sum(ax_abs, axis=ax, keepdims=keepdims)
        p = float(ord)
        return _o.power(_o.sum(_o.power(ax_abs, p), axis=ax, keepdims=keepdims), 1.0 / p)
    if len(axes) != 2:
        raise ShapeError(f"norm: axis must name one or two axes, got {axis!r}")
    r, c = axes
    if r == c:
        raise ShapeError(f"norm: duplicate axes {axis!r}")
    if ord is None or ord == "fro":
        out = _o.sqrt(_o.sum(x * x, axis=axes, keepdims=keepdims))
        return out
    if ord in (1, -1):
        s = _o.sum(_o.abs(x), axis=r, keepdims=True)
        out = (_o.max if ord == 1 else _o.min)(s, axis=c, keepdims=True)
    elif ord in (float("inf"), -float("inf")):
        s = _o.sum(_o.abs(x), axis=c, keepdims=True)
        out = (_o.max if ord > 0 else _o.min)(s, axis=r, keepdims=True)
    elif ord in (2, -2, "nuc"):
        rest = [d for d in range(x.ndim) if d not in (r, c)]
        m = _o.transpose(x, rest + [r, c])
        s = svd(m, compute_uv=False)
        v = _o.max(s, axis=-1) if ord == 2 else _o.min(s, axis=-1) if ord == -2 else _o.sum(s, axis=-1)
        if not keepdims:
            return v
        shape = list(x.shape)
        shape[r] = shape[c] = 1
        return _o.reshape(v, tuple(shape))
    else:
        raise UnsupportedOperationError(f"norm: ord {ord!r} is not a matrix norm")
    if keepdims:
        return out
    return _o.squeeze(out, axis=(r, c))


def pinv(a, rtol=None, hermitian=False, *, rcond=None):
    """Moore-Penrose pseudo-inverse via the SVD; singular values at most
    ``rtol * max(S)`` (default ``10 * max(m, n) * eps``) are dropped."""
    del hermitian
    if rcond is not None:
        if rtol is not None:
            raise UnsupportedOperationError("pinv: only one of rtol and rcond may be specified")
        rtol = rcond
    a = _mat("pinv", a)
    m, n = a.shape[-2:]
    if rtol is None:
        rtol = 10.0 * max(m, n) * float(_dt_eps(a.dtype))
    u, s, vt = svd(a, full_matrices=False)
    cutoff = rtol * s[..., 0:1]
    keep = s > cutoff
    sinv = _o.where(keep, 1.0 / _o.where(keep, s, 1.0), 0.0)
    return _o.matmul(_mT(vt), _mT(u) * _o.expand_dims(sinv, -1))


def _dt_eps(dtype):
    import numpy as np

    return np.finfo(np.float32 if dtype == _dt.float32 else np.float64).eps


def lstsq(a, b, rcond=None, *, numpy_resid=False):
    """Least-squares solution of ``a x = b`` via the SVD: ``(x, resid, rank, s)`` as JAX
    (``resid`` always the full residuals unless ``numpy_resid``)."""
    a = _mat("lstsq", a)
    b = _o._to_array(b)
    a, b = _common_float(a, b)
    if a.ndim != 2:
        raise ShapeError(f"lstsq: a must be two-dimensional, got shape {_shape(a.shape)}")
    if b.ndim not in (1, 2) or b.shape[0] != a.shape[0]:
        raise ShapeError(f"lstsq: b must be [m] or [m, k] with m = {a.shape[0]}, got shape {_shape(b.shape)}")
    vec = b.ndim == 1
    if vec:
        b = _o.expand_dims(b, -1)
    m, n = a.shape
    if rcond is None:
        rcond = float(_dt_eps(a.dtype)) * max(m, n)
    elif rcond < 0:
        rcond = float(_dt_eps(a.dtype))
    u, s, vt = svd(a, full_matrices=False)
    mask = (s > 0) & (s >= rcond * s[0])
    rank = _o.sum(_o.astype(mask, _dt.int64))
    sinv = _o.where(mask, 1.0 / _o.where(mask, s, 1.0), 0.0)
    x = _o.matmul(_mT(vt), _o.expand_dims(sinv, -1) * _o.matmul(_mT(u), b))
    if numpy_resid and (int(rank) < n or m <= n):
        # Quabla arrays have positive extents: NumPy's empty residuals are a NumPy array.
        import numpy as np

        resid = np.zeros((0,), np.float32 if a.dtype == _dt.float32 else np.float64)
    else:
        r = b - _o.matmul(a, x)
        resid = _o.sum(r * r, axis=0)
    if vec:
        x = _o.ravel(x)
    return x, resid, rank, s


def matrix_power(a, n):
    """``a`` raised to the integer power ``n`` (repeated squaring; negative ``n`` inverts).

    Example:
        >>> qb.linalg.matrix_power(qb.array([[1.0, 1.0], [0.0, 1.0]]), 3).tolist()
        [[1.0, 3.0], [0.0, 1.0]]
    """
    import operator

    try:
        n = operator.index(n)
    except TypeError:
        raise UnsupportedOperationError(f"matrix_power: n must be an integer, got {n!r}") from None
    a = _o._to_array(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"matrix_power: a must be a (batch of) square matrices, got shape {_shape(a.shape)}")
    if n == 0:
        return _o.broadcast_to(_o.astype(_o.eye(a.shape[-1]), a.dtype), a.shape)
    if n < 0:
        a, n = inv(a), -n
    result = None
    z = a
    while True:
        if n & 1:
            result = z if result is None else _o.matmul(result, z)
        n >>= 1
        if not n:
            return result
        z = _o.matmul(z, z)
