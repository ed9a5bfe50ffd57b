"""``qb.scipy.stats``: distributions of ``jax.scipy.stats`` built from Quabla ops.

Owns: ``norm`` (pdf, logpdf, cdf, logcdf, ppf, sf, logsf, isf) with the signatures of
``jax.scipy.stats.norm`` (``loc``, ``scale``; broadcasting; differentiable).

Example:
    >>> round(qb.scipy.stats.norm.cdf(qb.array(0.0)).item(), 6)
    0.5
"""

import math
import types

from .. import _ops as _o
from .._ops import _binary_operands, _floatify, _to_array, astype
from ..dtypes import float64
from . import special as _sp

__all__ = ["norm"]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_SQRT2 = math.sqrt(2.0)


def _std(x, loc, scale):
    x = _floatify(_to_array(x))
    x, loc = _binary_operands("norm", x, loc)
    x, scale = _binary_operands("norm", x, scale)
    loc, scale = _binary_operands("norm", loc, scale)
    if not x.dtype.is_float:
        x, loc, scale = astype(x, float64), astype(loc, float64), astype(scale, float64)
    return (x - loc) / scale, scale


def logpdf(x, loc=0, scale=1):
    """log of the normal density: -z^2/2 - log(scale) - log(sqrt(2 pi)), z = (x - loc)/scale.

    Example:
        >>> round(qb.scipy.stats.norm.logpdf(qb.array(0.0)).item(), 6)
        -0.918939
    """
    z, s = _std(x, loc, scale)
    return -0.5 * z * z - _o.log(s) - _LOG_SQRT_2PI


def pdf(x, loc=0, scale=1):
    """The normal density exp(logpdf).

    Example:
        >>> round(qb.scipy.stats.norm.pdf(qb.array(0.0)).item(), 6)
        0.398942
    """
    return _o.exp(logpdf(x, loc, scale))


def _ndtr(z):
    """Phi(z) = erfc(-z / sqrt 2) / 2, accurate in both tails."""
    return 0.5 * _sp.erfc(-z / _SQRT2)


def _log_ndtr(z):
    """log Phi(z): log1p(-Phi(-z)) above 0, log(erfc(-z/sqrt 2)/2) down to z = -20 (erfc keeps its relative accuracy
    there), below it the asymptotic expansion -z^2/2 - log(-z) - log sqrt(2 pi) + log(1 - 1/z^2
    + 3/z^4 - ... + 10395/z^12) (relative error below 1e-13 for z < -20)."""
    lo = z < -20.0
    safe_hi = _o.where(lo, 0.0, z)
    # log1p(-Phi(-z)) above 0, where Phi(z) is close to 1.
    pos = safe_hi > 0
    up = _o.log1p(-_ndtr(-_o.where(pos, safe_hi, 1.0)))
    down = _o.log(_ndtr(_o.where(pos, -1.0, safe_hi)))
    hi = _o.where(pos, up, down)
    zs = _o.where(lo, z, -30.0)
    u = 1.0 / (zs * zs)
    series = 1.0 + u * (-1.0 + u * (3.0 + u * (-15.0 + u * (105.0 + u * (-945.0 + u * 10395.0)))))
    low = -0.5 * zs * zs - _o.log(-zs) - _LOG_SQRT_2PI + _o.log(series)
    return _o.where(lo, low, hi)


def cdf(x, loc=0, scale=1):
    """The normal distribution function Phi((x - loc) / scale).

    Example:
        >>> round(qb.scipy.stats.norm.cdf(qb.array(1.0)).item(), 6)
        0.841345
    """
    z, _ = _std(x, loc, scale)
    return _ndtr(z)


def logcdf(x, loc=0, scale=1):
    """log Phi((x - loc) / scale), accurate far in the lower tail (an asymptotic series below
    z = -20).

    Example:
        >>> round(qb.scipy.stats.norm.logcdf(qb.array(0.0)).item(), 6)
        -0.693147
    """
    z, _ = _std(x, loc, scale)
    return _log_ndtr(z)


def sf(x, loc=0, scale=1):
    """The survival function 1 - cdf, computed as cdf(-z).

    Example:
        >>> round(qb.scipy.stats.norm.sf(qb.array(1.0)).item(), 6)
        0.158655
    """
    z, _ = _std(x, loc, scale)
    return _ndtr(-z)


def logsf(x, loc=0, scale=1):
    """log sf = logcdf(-z).

    Example:
        >>> round(qb.scipy.stats.norm.logsf(qb.array(0.0)).item(), 6)
        -0.693147
    """
    z, _ = _std(x, loc, scale)
    return _log_ndtr(-z)


def ppf(q, loc=0, scale=1):
    """The quantile function loc + scale * sqrt(2) * erfinv(2q - 1) (NaN outside [0, 1]).

    Example:
        >>> round(qb.scipy.stats.norm.ppf(qb.array(0.975)).item(), 6)
        1.959964
    """
    q = _floatify(_to_array(q))
    return loc + scale * (_SQRT2 * _sp.erfinv(2.0 * q - 1.0))


def isf(q, loc=0, scale=1):
    """The inverse survival function ppf(1 - q).

    Example:
        >>> round(qb.scipy.stats.norm.isf(qb.array(0.025)).item(), 6)
        1.959964
    """
    q = _floatify(_to_array(q))
    return ppf(1.0 - q, loc, scale)


norm = types.SimpleNamespace(pdf=pdf, logpdf=logpdf, cdf=cdf, logcdf=logcdf, sf=sf, logsf=logsf, ppf=ppf, isf=isf)
norm.__doc__ = "The normal distribution (jax.scipy.stats.norm): pdf, logpdf, cdf, logcdf, sf, logsf, ppf, isf."
