"""``qb.scipy.special``: special functions with the signatures of ``jax.scipy.special``,
differentiable to any order (``gammaln``' is ``digamma``, whose derivative is a trigamma
built from elementwise ops; ``erfinv``' is ``sqrt(pi)/2 exp(erfinv(x)^2)``).

Owns: erf, erfc, erfinv, expit, logit, gammaln, digamma, xlogy, xlog1py, logsumexp.

Example:
    >>> round(qb.scipy.special.gammaln(qb.array(5.0)).item(), 10)
    3.1780538303
"""



from .. import _ops as _o
from .._ops import _binary_operands, _floatify, _op, _to_array, astype
from .._trace import bind
from ..dtypes import float64

__all__ = ["erf", "erfc", "erfinv", "expit", "logit", "gammaln", "digamma", "xlogy", "xlog1py", "logsumexp"]


def _unary(opname, x):
    return bind(_op(opname), _floatify(_to_array(x)))


def erf(x):
    """The error function 2/sqrt(pi) * integral_0^x exp(-t^2) dt.

    Example:
        >>> round(qb.scipy.special.erf(qb.array(1.0)).item(), 10)
        0.8427007929
    """
    return _unary("erf", x)


def erfc(x):
    """The complementary error function 1 - erf(x), accurate where erf(x) is close to 1.

    Example:
        >>> qb.scipy.special.erfc(qb.array(10.0)).item() > 0
        True
    """
    return _unary("erfc", x)


def erfinv(x):
    """The inverse error function on [-1, 1] (±inf at ±1, NaN outside).

    Example:
        >>> round(qb.scipy.special.erfinv(qb.array(0.5)).item(), 10)
        0.4769362762
    """
    return _unary("erf_inv", x)


def expit(x):
    """The logistic sigmoid 1 / (1 + exp(-x)).

    Example:
        >>> qb.scipy.special.expit(qb.array([0.0])).tolist()
        [0.5]
    """
    return _unary("logistic", x)


def logit(x):
    """log(x / (1 - x)), the inverse of expit.

    Example:
        >>> qb.scipy.special.logit(qb.array([0.5])).tolist()
        [0.0]
    """
    x = _floatify(_to_array(x))
    return _o.log(x / (1.0 - x))


def gammaln(x):
    """log|Gamma(x)| (+inf at the poles, the non-positive integers).

    Example:
        >>> round(qb.scipy.special.gammaln(qb.array(0.5)).item(), 10)
        0.5723649429
    """
    return _unary("lgamma", x)


def digamma(x):
    """The digamma function psi(x) = d/dx log Gamma(x) (NaN at the poles).

    Example:
        >>> round(qb.scipy.special.digamma(qb.array(1.0)).item(), 10)
        -0.5772156649
    """
    return _unary("digamma", x)


def _pair(name, x, y):
    x, y = _binary_operands(name, x, y)
    if not x.dtype.is_float:
        x, y = astype(x, float64), astype(y, float64)
    return x, y


def xlogy(x, y):
    """x * log(y), with 0 where x == 0 (also for y == 0), as jax.scipy.special.xlogy (the
    derivative in x is log(y) also at x == 0, as JAX's).

    Example:
        >>> qb.scipy.special.xlogy(qb.array([0.0, 2.0]), qb.array([0.0, 1.0])).tolist()
        [0.0, 0.0]
    """
    x, y = _pair("xlogy", x, y)
    # x == 0 with y <= 0 (or NaN) reads y as 1, so the value is 0; with y > 0 the product is
    # already 0 and its x-derivative log(y), as JAX's.
    safe = _o.where(_o.logical_and(x == 0, _o.logical_not(y > 0)), 1.0, y)
    return x * _o.log(safe)


def xlog1py(x, y):
    """x * log1p(y), with 0 where x == 0 (also for y == -1), as jax.scipy.special.xlog1py.

    Example:
        >>> qb.scipy.special.xlog1py(qb.array([0.0]), qb.array([-1.0])).tolist()
        [0.0]
    """
    x, y = _pair("xlog1py", x, y)
    safe = _o.where(_o.logical_and(x == 0, _o.logical_not(y > -1)), 0.0, y)
    return x * _o.log1p(safe)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))) over ``axis``, stable (jax.scipy.special.logsumexp).

    Example:
        >>> round(qb.scipy.special.logsumexp(qb.array([1.0, 1.0])).item(), 6)
        1.693147
    """
    return _o.logsumexp(a, axis, b=b, keepdims=keepdims, return_sign=return_sign, where=where)



