"""``qb.scipy.sparse.linalg``: JAX's iterative linear solvers ``cg``, ``bicgstab`` and ``gmres``
(``jax.scipy.sparse.linalg``), matrix-free over pytrees, differentiable by implicit
differentiation (:func:`quabla._solvers.custom_linear_solve`: the derivative of a solve is
another solve, not the derivative of the iterations).

The iterations are JAX's: the stopping rule ``norm(r) <= max(tol * norm(b), atol)``,
``maxiter`` defaulting to ``10 * size(b)``, GMRES with restarts, classical Gram-Schmidt
Arnoldi, and either Givens rotations ('incremental') or the normal equations of the small
least-squares problem ('batched'). ``cg`` and ``bicgstab`` return ``(x, None)``; ``gmres``
returns ``(x, info)`` with ``info`` -1 when ``x`` is NaN, else 0, as JAX does.

Example:
    >>> import quabla.scipy.sparse.linalg
    >>> x, _ = qb.scipy.sparse.linalg.gmres(lambda v: 2.0 * v, qb.array([1.0, 3.0]))
    >>> [round(v, 6) for v in x.tolist()]
    [0.5, 1.5]
"""

import numpy as np

from ... import _ops as _o
from ... import tree as _tree
from ..._control import while_loop
from ..._ops import _to_array, astype
from ..._solvers import custom_linear_solve
from ..._trace import is_array
from ...errors import ArgumentTypeError, DTypeError, InvalidArgumentError, ShapeError
from ... import linalg as _la

__all__ = ["cg", "bicgstab", "gmres"]


def _vdot(x, y):
    out = None
    for a, b in zip(_tree.leaves(x), _tree.leaves(y)):
        v = _o.sum(a * b)
        out = v if out is None else out + v
    return out


def _norm(x):
    return _o.sqrt(_vdot(x, x))


def _mul(s, x):
    return _tree.map(lambda a: s * a, x)


def _add(x, y):
    return _tree.map(lambda a, b: a + b, x, y)


def _sub(x, y):
    return _tree.map(lambda a, b: a - b, x, y)


def _where(c, x, y):
    return _tree.map(lambda a, b: _o.where(c, a, b), x, y)


def _identity(x):
    return x


def _operator(fname, name, A):
    if A is None:
        return _identity
    if is_array(A) or isinstance(A, np.ndarray):
        a = _to_array(A)
        if a.ndim != 2 or a.shape[0] != a.shape[1]:
            raise ShapeError(f"{fname}: {name}, a linear operator, must be a square matrix, got shape {tuple(a.shape)}")
        if not a.dtype.is_float:
            raise DTypeError(f"{fname}: {name} must be a float matrix, got {a.dtype.name}")
        return lambda x: _o.matmul(a, x)
    if callable(A):
        return A
    raise ArgumentTypeError(f"{fname}: {name} must be a function or a square matrix, got {type(A).__name__}")


def _tree_arg(fname, name, x):
    leaves, tree = _tree.flatten(x)
    if not leaves:
        raise ArgumentTypeError(f"{fname}: {name} must hold at least one array")
    out = []
    for v in leaves:
        if isinstance(v, (str, bytes, bool)) or v is None or callable(v) and not is_array(v):
            raise ArgumentTypeError(f"{fname}: {name} must be an array or a pytree of arrays, got a {type(v).__name__}")
        try:
            a = _to_array(v)
        except Exception:
            raise ArgumentTypeError(f"{fname}: {name} must be an array or a pytree of arrays, got a {type(v).__name__}") from None
        if not a.dtype.is_float:
            raise DTypeError(f"{fname}: {name} must hold float arrays, got {a.dtype.name}")
        out.append(a)
    return _tree.unflatten(tree, out), tree, out


def _common(fname, A, b, x0, tol, atol, maxiter, M):
    b, b_tree, b_leaves = _tree_arg(fname, "b", b)
    if x0 is None:
        x0 = _tree.map(lambda a: _o.zeros(tuple(a.shape), a.dtype), b)
    else:
        x0, x_tree, x_leaves = _tree_arg(fname, "x0", x0)
        if x_tree != b_tree:
            raise ShapeError(f"{fname}: x0 and b must have matching tree structure: {x_tree} vs {b_tree}")
        if [tuple(a.shape) for a in x_leaves] != [tuple(a.shape) for a in b_leaves]:
            raise ShapeError(f"{fname}: arrays in x0 and b must have matching shapes: {[tuple(a.shape) for a in x_leaves]} vs {[tuple(a.shape) for a in b_leaves]}")
        x0 = _tree.unflatten(b_tree, [a if a.dtype is c.dtype else astype(a, c.dtype) for a, c in zip(x_leaves, b_leaves)])
    for name, v in (("tol", tol), ("atol", atol)):
        if isinstance(v, bool) or not (isinstance(v, (int, float, np.floating)) or is_array(v)):
            raise ArgumentTypeError(f"{fname}: {name} must be a number, got {type(v).__name__}")
    size = sum(int(np.prod(a.shape)) for a in b_leaves)
    if maxiter is None:
        maxiter = 10 * size
    elif isinstance(maxiter, bool) or not isinstance(maxiter, (int, np.integer)):
        raise ArgumentTypeError(f"{fname}: maxiter must be an int or None, got {type(maxiter).__name__}")
    A = _operator(fname, "A", A)
    M = _operator(fname, "M", M)
    return A, b, x0, int(maxiter), M, size


def _check_out(fname, A, b):
    out = A(b)
    o_leaves, o_tree = _tree.flatten(out)
    b_leaves, b_tree = _tree.flatten(b)
    if o_tree != b_tree or [tuple(_to_array(a).shape) for a in o_leaves] != [tuple(a.shape) for a in b_leaves]:
        raise ShapeError(f"{fname}: A must return the structure and shapes of b")


def _cg_solve(A, b, x0, tol, atol, maxiter, M):
    bs = _vdot(b, b)
    atol2 = _o.maximum(tol * tol * bs, atol * atol)
    plain = M is _identity

    def cond(v):
        _, r, gamma, _, k = v
        rs = gamma if plain else _vdot(r, r)
        return (rs > atol2) & (k < maxiter)

    def body(v):
        x, r, gamma, p, k = v
        Ap = A(p)
        alpha = gamma / _vdot(p, Ap)
        x = _add(x, _mul(alpha, p))
        r = _sub(r, _mul(alpha, Ap))
        z = M(r)
        gamma1 = _vdot(r, z)
        p = _add(z, _mul(gamma1 / gamma, p))
        return x, r, gamma1, p, k + 1

    r0 = _sub(b, A(x0))
    p0 = M(r0)
    gamma0 = _vdot(r0, p0)
    return while_loop(cond, body, (x0, r0, gamma0, p0, _to_array(0)))[0]


def _bicgstab_solve(A, b, x0, tol, atol, maxiter, M):
    bs = _vdot(b, b)
    atol2 = _o.maximum(tol * tol * bs, atol * atol)

    def cond(v):
        r, k = v[1], v[-1]
        return (_vdot(r, r) > atol2) & (k < maxiter) & (k >= 0)

    def body(v):
        x, r, rhat, alpha, omega, rho, p, q, k = v
        rho1 = _vdot(rhat, r)
        beta = rho1 / rho * alpha / omega
        p1 = _add(r, _mul(beta, _sub(p, _mul(omega, q))))
        phat = M(p1)
        q1 = A(phat)
        alpha1 = rho1 / _vdot(rhat, q1)
        s = _sub(r, _mul(alpha1, q1))
        early = _vdot(s, s) < atol2
        shat = M(s)
        t = A(shat)
        omega1 = _vdot(t, s) / _vdot(t, t)
        x1 = _where(early, _add(x, _mul(alpha1, phat)), _add(x, _add(_mul(alpha1, phat), _mul(omega1, shat))))
        r1 = _where(early, s, _sub(s, _mul(omega1, t)))
        k1 = _o.where((omega1 == 0) | (alpha1 == 0), -11, k + 1)
        k1 = _o.where(rho1 == 0, -10, k1)
        return x1, r1, rhat, alpha1, omega1, rho1, p1, q1, k1

    r0 = _sub(b, A(x0))
    one = _o.ones((), _tree.leaves(b)[0].dtype)
    return while_loop(cond, body, (x0, r0, r0, one, one, one, r0, r0, _to_array(0)))[0]


def _isolve(fname, solver, A, b, x0, tol, atol, maxiter, M, symmetric):
    A, b, x0, maxiter, M, _ = _common(fname, A, b, x0, tol, atol, maxiter, M)
    _check_out(fname, A, b)

    def solve(mv, rhs):
        return solver(mv, rhs, x0, tol, atol, maxiter, M)

    x = custom_linear_solve(A, b, solve=solve, transpose_solve=solve, symmetric=symmetric)
    return x, None


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solves ``A x = b`` for a symmetric positive definite ``A`` by conjugate gradients
    (JAX's ``jax.scipy.sparse.linalg.cg``).

    Args:
        A: a square matrix or a function computing ``A x`` (pytree in, same pytree out).
        b: the right-hand side, an array or a pytree of float arrays.
        x0: the starting guess (zeros by default), structured like ``b``.
        tol: the relative tolerance: stop when ``norm(r) <= max(tol * norm(b), atol)``.
        atol: the absolute tolerance.
        maxiter: the most iterations (default ``10 * size(b)``).
        M: a preconditioner approximating ``A^-1`` (matrix or function).

    Returns:
        ``(x, None)``; derivatives of ``x`` come from another ``cg`` solve.

    Example:
        >>> import quabla.scipy.sparse.linalg
        >>> x, info = qb.scipy.sparse.linalg.cg(lambda v: 4.0 * v, qb.array([2.0, 8.0]))
        >>> [round(v, 6) for v in x.tolist()], info
        ([0.5, 2.0], None)
    """
    return _isolve("cg", _cg_solve, A, b, x0, tol, atol, maxiter, M, True)


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solves ``A x = b`` by the stabilized bi-conjugate gradient method (JAX's
    ``jax.scipy.sparse.linalg.bicgstab``); ``A`` need not be symmetric.

    Args:
        A: a square matrix or a function computing ``A x``.
        b: the right-hand side, an array or a pytree of float arrays.
        x0: the starting guess (zeros by default).
        tol: the relative tolerance: stop when ``norm(r) <= max(tol * norm(b), atol)``.
        atol: the absolute tolerance.
        maxiter: the most iterations (default ``10 * size(b)``).
        M: a preconditioner approximating ``A^-1``.

    Returns:
        ``(x, None)``; derivatives come from another ``bicgstab`` solve (transposed).

    Example:
        >>> import quabla.scipy.sparse.linalg
        >>> x, _ = qb.scipy.sparse.linalg.bicgstab(qb.array([[2.0, 1.0], [0.0, 1.0]]), qb.array([3.0, 1.0]))
        >>> [round(v, 6) for v in x.tolist()]
        [1.0, 1.0]
    """
    return _isolve("bicgstab", _bicgstab_solve, A, b, x0, tol, atol, maxiter, M, False)


def _eps(x):
    return float(np.finfo(x.dtype.np).eps)


def _safe_normalize(x, thresh=None):
    n = _norm(x)
    if thresh is None:
        thresh = _eps(n)
    use = n > thresh
    return _tree.map(lambda y: _o.where(use, y / n, 0.0), x), _o.where(use, n, 0.0)


def _col(V, k):
    """V[..., k] for each leaf (k traced)."""
    return _tree.map(lambda X: _o.sum(_o.where(_o.arange(X.shape[-1]) == k, X, 0.0), axis=-1), V)


def _set_col(V, k, v):
    return _tree.map(lambda X, y: _o.where(_o.arange(X.shape[-1]) == k, _o.expand_dims(y, -1), X), V, v)


def _set(vec, k, val):
    return _o.where(_o.arange(vec.shape[0]) == k, val, vec)


def _get(vec, k):
    return _o.sum(_o.where(_o.arange(vec.shape[0]) == k, vec, 0.0))


def _project(V, v):
    """V^T v (over all leaves): one coefficient per column."""
    out = None
    for X, y in zip(_tree.leaves(V), _tree.leaves(v)):
        X2 = _o.reshape(X, (-1, X.shape[-1]))
        h = _o.matmul(_o.reshape(y, (-1,)), X2)
        out = h if out is None else out + h
    return out


def _times(V, h):
    return _tree.map(lambda X: _o.matmul(X, h), V)


def _arnoldi(k, A, M, V, H):
    """Step k of Arnoldi: V[:, k+1] the orthonormalized M(A(V[:, k])); H[k, :] its overlaps."""
    eps = _eps(_tree.leaves(V)[0])
    v = M(A(_col(V, k)))
    _, n0 = _safe_normalize(v)
    h = _project(V, v)
    v = _sub(v, _times(V, h))
    unit, n1 = _safe_normalize(v, thresh=eps * n0)
    V = _set_col(V, k + 1, unit)
    h = _set(h, k + 1, n1)
    H = _o.where((_o.arange(H.shape[0]) == k)[:, None], h[None, :], H)
    return V, H, n1 == 0.0


def _givens(a, b):
    b_zero = _o.abs(b) == 0
    a_lt_b = _o.abs(a) < _o.abs(b)
    t = -_o.where(a_lt_b, a, b) / _o.where(a_lt_b, b, a)
    r = 1.0 / _o.sqrt(1.0 + t * t)
    cs = _o.where(b_zero, 1.0, _o.where(a_lt_b, r * t, r))
    sn = _o.where(b_zero, 0.0, _o.where(a_lt_b, r, r * t))
    return cs, sn


def _rotate(H, i, cs, sn):
    x1, y1 = _get(H, i), _get(H, i + 1)
    H = _set(H, i, cs * x1 - sn * y1)
    return _set(H, i + 1, sn * x1 + cs * y1)


def _restart_vectors(unit_residual, restart):
    return _tree.map(lambda x: _o.concatenate([_o.expand_dims(x, -1), _o.zeros(tuple(x.shape) + (restart,), x.dtype)], axis=-1), unit_residual)


def _finish(A, M, b, x0, V, y):
    x = _add(x0, _tree.map(lambda X: _o.matmul(X[..., :-1], y), V))
    unit, n = _safe_normalize(M(_sub(b, A(x))))
    return x, unit, n


def _gmres_incremental(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
    V = _restart_vectors(unit_residual, restart)
    dt = _tree.leaves(b)[0].dtype
    R = _o.eye(restart, restart + 1, dtype=dt)
    cs_all = _o.zeros((restart,), dt)
    sn_all = _o.zeros((restart,), dt)
    beta = _set(_o.zeros((restart + 1,), dt), 0, astype(residual_norm, dt))

    def body(c):
        k, _, V, R, beta, cs_all, sn_all = c
        V, H, _ = _arnoldi(k, A, M, V, R)
        row = _o.sum(_o.where((_o.arange(restart) == k)[:, None], H, 0.0), axis=0)
        for i in range(restart):
            rot = _rotate(row, i, _get(cs_all, i), _get(sn_all, i))
            row = _o.where(i < k, rot, row)
        cs, sn = _givens(_get(row, k), _get(row, k + 1))
        cs_all, sn_all = _set(cs_all, k, cs), _set(sn_all, k, sn)
        row = _rotate(row, k, cs, sn)
        R = _o.where((_o.arange(restart) == k)[:, None], row[None, :], R)
        beta = _rotate(beta, k, cs, sn)
        return k + 1, _o.abs(_get(beta, k + 1)), V, R, beta, cs_all, sn_all

    c = while_loop(lambda c: (c[0] < restart) & (c[1] > ptol), body, (_to_array(0), residual_norm, V, R, beta, cs_all, sn_all))
    _, _, V, R, beta, _, _ = c
    y = _la.solve_triangular(_o.transpose(R[:, :-1]), beta[:-1], lower=False)
    return _finish(A, M, b, x0, V, y)


def _gmres_batched(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
    V = _restart_vectors(unit_residual, restart)
    dt = _tree.leaves(b)[0].dtype
    H = _o.eye(restart, restart + 1, dtype=dt)

    def body(c):
        V, H, _, k = c
        V, H, brk = _arnoldi(k, A, M, V, H)
        return V, H, brk, k + 1

    V, H, _, _ = while_loop(lambda c: (c[3] < restart) & (~c[2]), body, (V, H, _to_array(False), _to_array(0)))
    beta = _set(_o.zeros((restart + 1,), dt), 0, astype(residual_norm, dt))
    y = _la.solve(_o.matmul(H, _o.transpose(H)), _o.matmul(H, beta))
    return _finish(A, M, b, x0, V, y)


def gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None, solve_method="batched"):
    """Solves ``A x = b`` by restarted GMRES (JAX's ``jax.scipy.sparse.linalg.gmres``).

    Args:
        A: a square matrix or a function computing ``A x``.
        b: the right-hand side, an array or a pytree of float arrays.
        x0: the starting guess (zeros by default).
        tol: the relative tolerance: stop when ``norm(r) <= max(tol * norm(b), atol)``.
        atol: the absolute tolerance.
        restart: the Krylov subspace size built between restarts (at most ``size(b)``).
        maxiter: the most restarts (default ``10 * size(b)``).
        M: a preconditioner approximating ``A^-1``.
        solve_method: ``'batched'`` (least squares at the end of each restart) or
            ``'incremental'`` (Givens rotations, stopping early within a restart).

    Returns:
        ``(x, info)``: ``info`` is -1 when ``x`` is NaN, else 0 (JAX's convention).

    Example:
        >>> import quabla.scipy.sparse.linalg
        >>> x, info = qb.scipy.sparse.linalg.gmres(qb.array([[3.0, 1.0], [1.0, 2.0]]), qb.array([4.0, 3.0]))
        >>> [round(v, 6) for v in x.tolist()], info.item()
        ([1.0, 1.0], 0)
    """
    fname = "gmres"
    if solve_method not in ("incremental", "batched"):
        raise InvalidArgumentError(f"{fname}: invalid solve_method {solve_method!r}, must be either 'incremental' or 'batched'")
    if isinstance(restart, bool) or not isinstance(restart, (int, np.integer)) or restart < 1:
        raise ArgumentTypeError(f"{fname}: restart must be a positive int, got {restart!r}")
    A, b, x0, maxiter, M, size = _common(fname, A, b, x0, tol, atol, maxiter, M)
    _check_out(fname, A, b)
    restart = min(int(restart), size)
    b_norm = _norm(b)
    atol_ = _o.maximum(tol * b_norm, atol)
    ptol = _norm(M(b)) * _o.minimum(1.0, atol_ / b_norm)
    step = _gmres_incremental if solve_method == "incremental" else _gmres_batched

    def solve(mv, rhs):
        unit, n = _safe_normalize(M(_sub(rhs, mv(x0))))

        def body(v):
            x, k, u, rn = v
            x, u, rn = step(mv, rhs, x, u, rn, ptol, restart, M)
            return x, k + 1, u, rn

        return while_loop(lambda v: (v[1] < maxiter) & (v[3] > atol_), body, (x0, _to_array(0), unit, n))[0]

    x = custom_linear_solve(A, b, solve=solve, transpose_solve=solve)
    info = _o.where(_o.isnan(_norm(x)) if hasattr(_o, "isnan") else _norm(x) != _norm(x), -1, 0)
    return x, info
