"""``qb.scipy.linalg``: ``jax.scipy.linalg``'s Cholesky helpers and triangular solve, on the
dialect's linear-algebra ops (so they run under ``jit``, ``vmap`` and ``grad``).

Difference from SciPy (as JAX): ``cho_factor`` returns the factor with zeros, not the
input's entries, in the other triangle.
"""

from .. import _ops as _o
from .. import linalg as _la
from .._trace import bind

__all__ = ["cholesky", "cho_factor", "cho_solve", "solve_triangular", "lu_factor"]

solve_triangular = _la.solve_triangular
lu_factor = _la.lu_factor


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """Cholesky factor reading only the ``lower`` (else upper) triangle of ``a`` (no
    symmetrization, as ``jax.scipy.linalg.cholesky``); upper by default.

    Example:
        >>> qb.scipy.linalg.cholesky(qb.array([[4.0, 2.0], [2.0, 10.0]])).tolist()
        [[2.0, 1.0], [0.0, 3.0]]
    """
    del overwrite_a, check_finite
    a = _la._mat("cholesky", a, square=True)
    return bind(_o._op("cholesky", lower=bool(lower)), a)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """``(c, lower)``: the Cholesky factor of ``a`` and which triangle it is in, for
    :func:`cho_solve`."""
    return cholesky(a, lower, overwrite_a, check_finite), lower


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """Solves ``a x = b`` given ``cho_factor(a)`` (two triangular solves). ``b`` is ``[m]``
    or ``[..., m, n]``.

    Example:
        >>> c = qb.scipy.linalg.cho_factor(qb.array([[4.0, 2.0], [2.0, 10.0]]))
        >>> [round(x, 12) for x in qb.scipy.linalg.cho_solve(c, qb.array([8.0, 22.0])).tolist()]
        [1.0, 2.0]
    """
    del overwrite_b, check_finite
    c, lower = c_and_lower
    c = _la._mat("cho_solve", c, square=True)
    b = _o._to_array(b)
    c, b = _la._common_float(c, b)
    vec = b.ndim == 1
    if vec:
        b = _o.expand_dims(b, -1)
    if b.ndim < 2 or b.shape[-2] != c.shape[-1]:
        raise _la.ShapeError(f"cho_solve: c {_la._shape(c.shape)} and b {_la._shape(b.shape)} have incompatible shapes")
    c, b = _la._broadcast_batch("cho_solve", c, b, 2)
    # a = l lᵀ: solve l y = b then lᵀ x = y (upper: uᵀ y = b, then u x = y).
    y = _la._trsm(c, b, True, lower, not lower, False)
    x = _la._trsm(c, y, True, lower, lower, False)
    return _o.squeeze(x, -1) if vec else x
