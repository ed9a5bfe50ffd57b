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
        if n == 3 and a.ndim > 2:
            # The batch last: each element a contiguous row. Read in place, the nine elements
            # of a matrix are strided loads LLVM does not interleave (more than 8): 100000
            # matrices 337 -> 166 us (JAX 133).
            a = _o.transpose(a, (a.ndim - 2, a.ndim - 1) + tuple(range(a.ndim - 2)))
            e = [[a[i, j] for j in range(n)] for i in range(n)]
        else:
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


# ---------------------------------------------------------------------------------------------
# The array-API forms of jnp.linalg: norms, condition number, rank, products and tensor solves.

__all__ += ["matrix_norm", "vector_norm", "cond", "matrix_rank", "multi_dot", "tensorinv", "tensorsolve", "trace", "diagonal",
            "outer", "cross", "matmul", "tensordot", "vecdot", "matrix_transpose"]


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The norm of each matrix over the last two axes (``jnp.linalg.matrix_norm``): ``ord``
    'fro', 'nuc', 1, -1, 2, -2, inf or -inf, as :func:`norm` with ``axis=(-2, -1)``.

    Example:
        >>> qb.linalg.matrix_norm(qb.array([[3.0, 0.0], [0.0, -4.0]]), ord=2).item()
        4.0
    """
    x = _o._floatify(_o._to_array(x))
    if x.ndim < 2:
        raise ShapeError(f"matrix_norm: x must have at least two dimensions, got shape {_shape(x.shape)}")
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The vector norm over ``axis`` (None: all elements, flattened; a tuple: those axes
    together) with ``ord`` 2, 1, inf, -inf, 0 or any other number (``jnp.linalg.vector_norm``).

    Example:
        >>> qb.linalg.vector_norm(qb.array([[3.0], [4.0]])).item()
        5.0
    """
    keepdims = _o._bool_arg("vector_norm", "keepdims", keepdims)
    x = _o._floatify(_o._to_array(x))
    if isinstance(ord, str):
        raise UnsupportedOperationError(f"vector_norm: ord {ord!r} is not a vector norm")
    if axis is None:
        r = norm(_o.ravel(x), ord=ord)
        return _o.reshape(r, (1,) * x.ndim) if keepdims else r
    if isinstance(axis, (tuple, list)) and len(axis) != 1:
        axes = _norm_axes("vector_norm", x, axis)
        rest = [d for d in range(x.ndim) if d not in axes]
        moved = _o.transpose(x, rest + list(axes))
        flat = _o.reshape(moved, tuple(x.shape[d] for d in rest) + (-1,)) if rest else _o.ravel(moved)
        r = norm(flat, ord=ord, axis=-1)
        if keepdims:
            r = _o.reshape(r, tuple(1 if d in axes else x.shape[d] for d in range(x.ndim)))
        return r
    ax = axis[0] if isinstance(axis, (tuple, list)) else axis
    return norm(x, ord=ord, axis=_norm_axes("vector_norm", x, ax)[0], keepdims=keepdims)


def cond(x, p=None):
    """The condition number of each matrix (``jnp.linalg.cond``): for ``p`` None, 2 or -2 the
    ratio of extreme singular values; otherwise (square matrices) ``norm(x, p) * norm(inv(x),
    p)``; NaN results of a NaN-free matrix are inf, as JAX's.

    Example:
        >>> round(qb.linalg.cond(qb.array([[1.0, 2.0], [2.0, 1.0]])).item(), 12)
        3.0
    """
    x = _mat("cond", x)
    if p is None or p == 2:
        s = svdvals(x)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = svdvals(x)
        r = s[..., -1] / s[..., 0]
    else:
        if x.shape[-1] != x.shape[-2]:
            raise ShapeError(f"cond: p={p!r} needs (a batch of) square matrices, got shape {_shape(x.shape)}")
        r = norm(x, ord=p, axis=(-2, -1)) * norm(inv(x), ord=p, axis=(-2, -1))
    x_nan = _o.any(x != x, axis=(-2, -1))
    return _o.where(_o.logical_and(r != r, _o.logical_not(x_nan)), float("inf"), r)


def matrix_rank(M, rtol=None, *, hermitian=False, tol=None):
    """The number of singular values above the threshold (``jnp.linalg.matrix_rank``):
    ``rtol`` given (or its alias ``tol``) is compared with the singular values directly, as
    JAX does; by default the threshold is ``max(S) * max(m, n) * eps``. 1-D input: 1 if any
    element is nonzero. The result is int64.

    Example:
        >>> qb.linalg.matrix_rank(qb.array([[1.0, 2.0], [2.0, 4.0]])).item()
        1
    """
    if tol is not None:
        if rtol is not None:
            raise UnsupportedOperationError("matrix_rank: only one of tol and rtol may be specified")
        rtol = tol
    del hermitian
    M = _o._floatify(_o._to_array(M))
    if M.ndim < 2:
        return _o.astype(_o.any(M != 0), _dt.int64)
    s = svdvals(M)
    if rtol is None:
        rtol = _o.max(s, axis=-1) * (max(M.shape[-2:]) * float(_dt_eps(s.dtype)))
    rtol = _o.expand_dims(_o.astype(_o._to_array(rtol), s.dtype), -1)
    return _o.sum(_o.astype(s > rtol, _dt.int64), axis=-1)


def multi_dot(arrays, *, precision=None):
    """The product of a chain of matrices (``jnp.linalg.multi_dot``): the first may be 1-D
    (a row vector) and the last 1-D (a column vector); the others are 2-D. The order of
    the products is chosen by the classic dynamic program on the shapes.

    Example:
        >>> qb.linalg.multi_dot([qb.array([1.0, 2.0]), qb.eye(2), qb.array([3.0, 4.0])]).item()
        11.0
    """
    del precision
    arrs = [_o._to_array(a) for a in arrays]
    if len(arrs) < 2:
        raise ShapeError(f"multi_dot: needs at least two arrays, got {len(arrs)}")
    first_vec, last_vec = arrs[0].ndim == 1, arrs[-1].ndim == 1
    if first_vec:
        arrs[0] = _o.expand_dims(arrs[0], 0)
    if last_vec:
        arrs[-1] = _o.expand_dims(arrs[-1], -1)
    for i, a in enumerate(arrs):
        if a.ndim != 2:
            raise ShapeError(f"multi_dot: array {i} must be 2-D (the first and last may be 1-D), got shape {_shape(a.shape)}")
    for i in range(len(arrs) - 1):
        if arrs[i].shape[1] != arrs[i + 1].shape[0]:
            raise ShapeError(f"multi_dot: shapes {_shape(arrs[i].shape)} and {_shape(arrs[i + 1].shape)} (arrays {i} and {i + 1}) do not chain")
    dims = [a.shape[0] for a in arrs] + [arrs[-1].shape[1]]
    n = len(arrs)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def prod(i, j):
        if i == j:
            return arrs[i]
        k = split[i][j]
        return _o.matmul(prod(i, k), prod(k + 1, j))

    out = prod(0, n - 1)
    if first_vec and last_vec:
        return _o.reshape(out, ())
    if first_vec:
        return _o.squeeze(out, 0)
    if last_vec:
        return _o.squeeze(out, -1)
    return out


def tensorinv(a, ind=2):
    """The inverse of ``a`` seen as a square matrix of its first ``ind`` axes by the rest
    (``jnp.linalg.tensorinv``): the result has shape ``a.shape[ind:] + a.shape[:ind]``.

    Example:
        >>> qb.linalg.tensorinv(qb.eye(4).reshape((4, 2, 2)), ind=1).shape
        (2, 2, 4)
    """
    import math
    import operator

    try:
        ind = operator.index(ind)
    except TypeError:
        raise UnsupportedOperationError(f"tensorinv: ind must be an integer, got {ind!r}") from None
    a = _o._floatify(_o._to_array(a))
    if ind <= 0:
        raise ShapeError(f"tensorinv: ind must be positive, got {ind}")
    head, tail = a.shape[:ind], a.shape[ind:]
    if math.prod(head) != math.prod(tail):
        raise ShapeError(f"tensorinv: prod(a.shape[:ind]) must equal prod(a.shape[ind:]), got shape {_shape(a.shape)} with ind={ind}")
    return _o.reshape(inv(_o.reshape(a, (math.prod(head), math.prod(tail)))), tail + head)


def tensorsolve(a, b, axes=None):
    """Solves the tensor equation ``tensordot(a, x, x.ndim) = b`` for ``x``
    (``jnp.linalg.tensorsolve``); ``axes`` names axes of ``a`` moved to the end first.

    Example:
        >>> qb.linalg.tensorsolve(qb.eye(4).reshape((2, 2, 4)), qb.array([[1.0, 2.0], [3.0, 4.0]])).tolist()
        [1.0, 2.0, 3.0, 4.0]
    """
    import math

    a = _o._to_array(a)
    b = _o._to_array(b)
    a, b = _common_float(a, b)
    if axes is not None:
        axes = [ax % a.ndim for ax in ((axes,) if isinstance(axes, int) else axes)]
        rest = [d for d in range(a.ndim) if d not in axes]
        a = _o.transpose(a, rest + axes)
    out_shape = a.shape[b.ndim:]
    if a.shape[: b.ndim] != b.shape:
        raise ShapeError(f"tensorsolve: the leading shape of a {_shape(a.shape)} must match the shape of b {_shape(b.shape)}")
    bsize = math.prod(b.shape)
    if bsize != math.prod(out_shape):
        raise ShapeError(f"tensorsolve: a {_shape(a.shape)} is not square in its leading axes {_shape(b.shape)} and trailing axes {_shape(out_shape)}")
    return _o.reshape(solve(_o.reshape(a, (bsize, bsize)), _o.reshape(b, (bsize,))), out_shape)


def trace(x, /, *, offset=0, dtype=None):
    """The sum of each matrix's ``offset`` diagonal over the last two axes
    (``jnp.linalg.trace``; ``qb.trace`` sums over axes 0 and 1).

    Example:
        >>> qb.linalg.trace(qb.array([[1.0, 2.0], [3.0, 4.0]])).item()
        5.0
    """
    from . import _numpy

    return _numpy.trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def diagonal(x, /, *, offset=0):
    """The ``offset`` diagonal of each matrix over the last two axes (``jnp.linalg.diagonal``;
    ``qb.diagonal`` uses axes 0 and 1).

    Example:
        >>> qb.linalg.diagonal(qb.array([[1.0, 2.0], [3.0, 4.0]])).tolist()
        [1.0, 4.0]
    """
    from . import _numpy

    return _numpy.diagonal(x, offset=offset, axis1=-2, axis2=-1)


def outer(x1, x2, /):
    """The outer product of two 1-D arrays (``jnp.linalg.outer``: other ranks are a
    ShapeError, where ``qb.outer`` flattens).

    Example:
        >>> qb.linalg.outer(qb.array([1.0, 2.0]), qb.array([3.0, 4.0])).tolist()
        [[3.0, 4.0], [6.0, 8.0]]
    """
    x1, x2 = _o._to_array(x1), _o._to_array(x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ShapeError(f"outer: x1 and x2 must be 1-D, got shapes {_shape(x1.shape)} and {_shape(x2.shape)}")
    from . import _numpy

    return _numpy.outer(x1, x2)


def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-vectors along ``axis`` (``jnp.linalg.cross``: both inputs
    have extent 3 there; the other axes broadcast).

    Example:
        >>> qb.linalg.cross(qb.array([1.0, 0.0, 0.0]), qb.array([0.0, 1.0, 0.0])).tolist()
        [0.0, 0.0, 1.0]
    """
    x1, x2 = _o._to_array(x1), _o._to_array(x2)
    for nm, v in (("x1", x1), ("x2", x2)):
        if v.ndim == 0 or not -v.ndim <= axis < v.ndim or v.shape[axis] != 3:
            raise ShapeError(f"cross: {nm} must have extent 3 along axis {axis}, got shape {_shape(v.shape)}")
    x1, x2 = _o._common("cross", [x1, x2])
    a, b = _last(x1, axis), _last(x2, axis)
    c = [a[..., i] for i in range(3)], [b[..., i] for i in range(3)]
    (a0, a1, a2), (b0, b1, b2) = c
    out = _o.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    ax = axis % out.ndim
    return out if ax == out.ndim - 1 else _o.transpose(out, list(range(ax)) + [out.ndim - 1] + list(range(ax, out.ndim - 1)))


def _last(x, axis):
    """``x`` with its axis ``axis`` moved last."""
    a = axis % x.ndim
    return x if a == x.ndim - 1 else _o.transpose(x, [d for d in range(x.ndim) if d != a] + [a])


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    """Matrix product with NumPy's broadcasting rules (``jnp.linalg.matmul``; the same as
    ``qb.matmul``; ``preferred_element_type`` casts the result).

    Example:
        >>> qb.linalg.matmul(qb.array([[1.0, 2.0]]), qb.array([[3.0], [4.0]])).tolist()
        [[11.0]]
    """
    del precision
    r = _o.matmul(x1, x2)
    return r if preferred_element_type is None else _o.astype(r, _dt.dtype(preferred_element_type))


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None):
    """Tensor contraction over ``axes`` (an int: the last ``axes`` of x1 with the first of
    x2; or a pair of axis sequences), ``jnp.linalg.tensordot``'s keyword-only form.

    Example:
        >>> qb.linalg.tensordot(qb.ones((2, 3)), qb.ones((3, 4)), axes=1).shape
        (2, 4)
    """
    del precision
    r = _o.tensordot(x1, x2, axes=axes)
    return r if preferred_element_type is None else _o.astype(r, _dt.dtype(preferred_element_type))


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """The dot product of vectors along ``axis``, other axes broadcast (``jnp.linalg.vecdot``).

    Example:
        >>> qb.linalg.vecdot(qb.array([[1.0, 2.0], [3.0, 4.0]]), qb.array([1.0, 1.0])).tolist()
        [3.0, 7.0]
    """
    if precision is not None or preferred_element_type is not None:
        raise UnsupportedOperationError("vecdot: precision and preferred_element_type are not supported", op="vecdot")
    x1, x2 = _o._common("vecdot", [x1, x2])
    for nm, v in (("x1", x1), ("x2", x2)):
        if v.ndim == 0 or not -v.ndim <= axis < v.ndim:
            raise ShapeError(f"vecdot: axis {axis} is out of range for {nm} of shape {_shape(v.shape)}")
    a, b = _last(x1, axis), _last(x2, axis)
    if a.shape[-1] != b.shape[-1]:
        raise ShapeError(f"vecdot: the vector axes must match, got shapes {_shape(x1.shape)} and {_shape(x2.shape)} with axis={axis}")
    return _o.sum(a * b, -1, dtype=a.dtype)


def matrix_transpose(x, /):
    """Swaps the last two axes (``jnp.linalg.matrix_transpose``; needs rank >= 2).

    Example:
        >>> qb.linalg.matrix_transpose(qb.ones((2, 3))).shape
        (3, 2)
    """
    x = _o._to_array(x)
    if x.ndim < 2:
        raise ShapeError(f"matrix_transpose: x must have at least two dimensions, got shape {_shape(x.shape)}")
    return _mT(x)
