"""``qb.scipy.stats``: distributions of ``jax.scipy.stats`` built from Quabla ops.

Owns: ``norm`` (pdf, logpdf, cdf, logcdf, ppf, sf, logsf, isf) with the signatures of
``jax.scipy.stats.norm`` (``loc``, ``scale``; broadcasting; differentiable), and with
jax.scipy.stats's functions and signatures ``expon``, ``laplace``, ``logistic``, ``cauchy``,
``uniform``, ``gamma``, ``chi2``, ``beta``, ``t``, ``poisson``, ``bernoulli`` and
``multivariate_normal`` (its Cholesky form; ``allow_singular`` unsupported, as JAX), with
JAX's values outside the support (log densities -inf).

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
    """(x - loc) / scale and scale, float arrays of one dtype (see ``_z``)."""
    return _z("norm", x, loc, scale)


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


# ---------------------------------------------------------------------------------------------
# The other distributions of jax.scipy.stats, with its signatures and its values outside the
# support (log densities -inf, probabilities 0 or 1).

_NEG_INF = -math.inf


def _args(name, x, *params):
    """``x`` and the parameters as float arrays of one dtype (integers become float64),
    broadcast together."""
    xs = [_floatify(_to_array(x))] + list(params)
    out = xs[:1]
    for p in params:
        a, b = _binary_operands(name, out[0], p)
        out = [a] + [_binary_operands(name, o, a)[0] for o in out[1:]] + [b]
    full = [_o.broadcast_to(v, out[0].shape) for v in out]
    if not full[0].dtype.is_float:
        full = [astype(v, float64) for v in full]
    return full


def _z(name, x, loc, scale, *params):
    """(x - loc) / scale, the broadcast shape parameters and scale."""
    x, loc, scale, *ps = _args(name, x, loc, scale, *params)
    return ((x - loc) / scale, scale, *ps)


def _dist(name, doc, **fns):
    ns = types.SimpleNamespace(**fns)
    ns.__doc__ = doc
    return ns


# expon
def _expon_logpdf(x, loc=0, scale=1):
    z, s = _z("expon.logpdf", x, loc, scale)
    return _o.where(z < 0, _NEG_INF, -z - _o.log(s))


def _expon_cdf(x, loc=0, scale=1):
    z, _ = _z("expon.cdf", x, loc, scale)
    return _o.where(z < 0, 0.0, -_o.expm1(-z))


def _expon_logcdf(x, loc=0, scale=1):
    z, _ = _z("expon.logcdf", x, loc, scale)
    return _o.where(z < 0, _NEG_INF, _o.log(-_o.expm1(-_o.where(z < 0, 1.0, z))))


def _expon_sf(x, loc=0, scale=1):
    z, _ = _z("expon.sf", x, loc, scale)
    return _o.where(z < 0, 1.0, _o.exp(-z))


def _expon_logsf(x, loc=0, scale=1):
    z, _ = _z("expon.logsf", x, loc, scale)
    return _o.where(z < 0, 0.0, -z)


def _expon_ppf(q, loc=0, scale=1):
    q, loc, scale = _args("expon.ppf", q, loc, scale)
    return _o.where((q < 0) | (q > 1), math.nan, loc - scale * _o.log1p(-q))


expon = _dist("expon", "The exponential distribution (jax.scipy.stats.expon): pdf, logpdf, cdf, logcdf, sf, logsf, ppf.",
              logpdf=_expon_logpdf, pdf=lambda x, loc=0, scale=1: _o.exp(_expon_logpdf(x, loc, scale)), cdf=_expon_cdf,
              logcdf=_expon_logcdf, sf=_expon_sf, logsf=_expon_logsf, ppf=_expon_ppf)


# laplace
def _laplace_logpdf(x, loc=0, scale=1):
    z, s = _z("laplace.logpdf", x, loc, scale)
    return -_o.abs(z) - _o.log(2.0 * s)


def _laplace_cdf(x, loc=0, scale=1):
    z, _ = _z("laplace.cdf", x, loc, scale)
    return _o.where(z < 0, 0.5 * _o.exp(_o.minimum(z, 0.0)), 1.0 - 0.5 * _o.exp(-_o.maximum(z, 0.0)))


laplace = _dist("laplace", "The Laplace distribution (jax.scipy.stats.laplace): pdf, logpdf, cdf.",
                logpdf=_laplace_logpdf, pdf=lambda x, loc=0, scale=1: _o.exp(_laplace_logpdf(x, loc, scale)), cdf=_laplace_cdf)


# logistic
def _logistic_logpdf(x, loc=0, scale=1):
    z, s = _z("logistic.logpdf", x, loc, scale)
    # -|z| - 2 log1p(exp(-|z|)): symmetric, no overflow.
    a = _o.abs(z)
    return -a - 2.0 * _o.log1p(_o.exp(-a)) - _o.log(s)


def _logistic_cdf(x, loc=0, scale=1):
    z, _ = _z("logistic.cdf", x, loc, scale)
    return _sp.expit(z)


def _logistic_sf(x, loc=0, scale=1):
    z, _ = _z("logistic.sf", x, loc, scale)
    return _sp.expit(-z)


def _logistic_ppf(q, loc=0, scale=1):
    q, loc, scale = _args("logistic.ppf", q, loc, scale)
    return loc + scale * _sp.logit(q)


logistic = _dist("logistic", "The logistic distribution (jax.scipy.stats.logistic): pdf, logpdf, cdf, sf, ppf, isf.",
                 logpdf=_logistic_logpdf, pdf=lambda x, loc=0, scale=1: _o.exp(_logistic_logpdf(x, loc, scale)),
                 cdf=_logistic_cdf, sf=_logistic_sf, ppf=_logistic_ppf,
                 isf=lambda q, loc=0, scale=1: _logistic_ppf(1.0 - _floatify(_to_array(q)), loc, scale))


# cauchy
def _arctan(z):
    from .._numpy import arctan

    return arctan(z)


def _cauchy_logpdf(x, loc=0, scale=1):
    z, s = _z("cauchy.logpdf", x, loc, scale)
    return -math.log(math.pi) - _o.log(s) - _o.log1p(z * z)


def _cauchy_cdf(x, loc=0, scale=1):
    z, _ = _z("cauchy.cdf", x, loc, scale)
    return 0.5 + _arctan(z) / math.pi


def _cauchy_sf(x, loc=0, scale=1):
    z, _ = _z("cauchy.sf", x, loc, scale)
    return 0.5 - _arctan(z) / math.pi


def _cauchy_ppf(q, loc=0, scale=1):
    q, loc, scale = _args("cauchy.ppf", q, loc, scale)
    return loc + scale * _o.tan(math.pi * (q - 0.5))


cauchy = _dist("cauchy", "The Cauchy distribution (jax.scipy.stats.cauchy): pdf, logpdf, cdf, logcdf, sf, logsf, ppf, isf.",
               logpdf=_cauchy_logpdf, pdf=lambda x, loc=0, scale=1: _o.exp(_cauchy_logpdf(x, loc, scale)), cdf=_cauchy_cdf,
               logcdf=lambda x, loc=0, scale=1: _o.log(_cauchy_cdf(x, loc, scale)), sf=_cauchy_sf,
               logsf=lambda x, loc=0, scale=1: _o.log(_cauchy_sf(x, loc, scale)), ppf=_cauchy_ppf,
               isf=lambda q, loc=0, scale=1: _cauchy_ppf(1.0 - _floatify(_to_array(q)), loc, scale))


# uniform
def _uniform_logpdf(x, loc=0, scale=1):
    x, loc, scale = _args("uniform.logpdf", x, loc, scale)
    return _o.where((x >= loc) & (x <= loc + scale), -_o.log(scale), _NEG_INF)


def _uniform_cdf(x, loc=0, scale=1):
    x, loc, scale = _args("uniform.cdf", x, loc, scale)
    return _o.clip((x - loc) / scale, 0.0, 1.0)


def _uniform_ppf(q, loc=0, scale=1):
    q, loc, scale = _args("uniform.ppf", q, loc, scale)
    return _o.where((q < 0) | (q > 1), math.nan, loc + q * scale)


uniform = _dist("uniform", "The uniform distribution on [loc, loc + scale] (jax.scipy.stats.uniform): pdf, logpdf, cdf, ppf.",
                logpdf=_uniform_logpdf, pdf=lambda x, loc=0, scale=1: _o.exp(_uniform_logpdf(x, loc, scale)), cdf=_uniform_cdf,
                ppf=_uniform_ppf)


# gamma and chi2
def _gamma_logpdf(x, a, loc=0, scale=1):
    z, s, a = _z("gamma.logpdf", x, loc, scale, a)
    zs = _o.where(z < 0, 1.0, z)
    return _o.where(z < 0, _NEG_INF, _sp.xlogy(a - 1.0, zs) - zs - _sp.gammaln(a) - _o.log(s))


def _gamma_cdf(x, a, loc=0, scale=1):
    z, _, a = _z("gamma.cdf", x, loc, scale, a)
    return _sp.gammainc(a, _o.maximum(z, 0.0))


def _gamma_sf(x, a, loc=0, scale=1):
    z, _, a = _z("gamma.sf", x, loc, scale, a)
    return _sp.gammaincc(a, _o.maximum(z, 0.0))


gamma = _dist("gamma", "The gamma distribution with shape a (jax.scipy.stats.gamma): pdf, logpdf, cdf, logcdf, sf, logsf.",
              logpdf=_gamma_logpdf, pdf=lambda x, a, loc=0, scale=1: _o.exp(_gamma_logpdf(x, a, loc, scale)), cdf=_gamma_cdf,
              logcdf=lambda x, a, loc=0, scale=1: _o.log(_gamma_cdf(x, a, loc, scale)), sf=_gamma_sf,
              logsf=lambda x, a, loc=0, scale=1: _o.log(_gamma_sf(x, a, loc, scale)))


def _times(v, c):
    """``c * v``, a Python number staying one (weak: it takes ``x``'s dtype)."""
    return c * v if isinstance(v, (int, float)) else c * _floatify(_to_array(v))


def _chi2(f):
    # chi2(df) is gamma(df / 2) with twice the scale.
    return lambda x, df, loc=0, scale=1: f(x, _times(df, 0.5), loc, _times(scale, 2.0))


chi2 = _dist("chi2", "The chi-square distribution with df degrees of freedom (jax.scipy.stats.chi2): pdf, logpdf, cdf, logcdf, sf, logsf.",
             **{n: _chi2(getattr(gamma, n)) for n in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")})


# beta
def _beta_logpdf(x, a, b, loc=0, scale=1):
    z, s, a, b = _z("beta.logpdf", x, loc, scale, a, b)
    inside = (z >= 0) & (z <= 1)
    zs = _o.where(inside, z, 0.5)
    lp = _sp.xlogy(a - 1.0, zs) + _sp.xlog1py(b - 1.0, -zs) - _sp.betaln(a, b) - _o.log(s)
    return _o.where(inside, lp, _NEG_INF)


def _beta_cdf(x, a, b, loc=0, scale=1):
    z, _, a, b = _z("beta.cdf", x, loc, scale, a, b)
    return _sp.betainc(a, b, _o.clip(z, 0.0, 1.0))


def _beta_sf(x, a, b, loc=0, scale=1):
    z, _, a, b = _z("beta.sf", x, loc, scale, a, b)
    return _sp.betainc(b, a, 1.0 - _o.clip(z, 0.0, 1.0))


beta = _dist("beta", "The beta distribution (jax.scipy.stats.beta): pdf, logpdf, cdf, logcdf, sf, logsf.",
             logpdf=_beta_logpdf, pdf=lambda x, a, b, loc=0, scale=1: _o.exp(_beta_logpdf(x, a, b, loc, scale)), cdf=_beta_cdf,
             logcdf=lambda x, a, b, loc=0, scale=1: _o.log(_beta_cdf(x, a, b, loc, scale)), sf=_beta_sf,
             logsf=lambda x, a, b, loc=0, scale=1: _o.log(_beta_sf(x, a, b, loc, scale)))


# t
def _t_logpdf(x, df, loc=0, scale=1):
    z, s, df = _z("t.logpdf", x, loc, scale, df)
    half = 0.5 * (df + 1.0)
    return _sp.gammaln(half) - _sp.gammaln(0.5 * df) - 0.5 * _o.log(df * math.pi) - _o.log(s) - half * _o.log1p(z * z / df)


t = _dist("t", "Student's t distribution with df degrees of freedom (jax.scipy.stats.t): pdf, logpdf.",
          logpdf=_t_logpdf, pdf=lambda x, df, loc=0, scale=1: _o.exp(_t_logpdf(x, df, loc, scale)))


# poisson and bernoulli
def _poisson_logpmf(k, mu, loc=0):
    k, mu, loc = _args("poisson.logpmf", k, mu, loc)
    x = k - loc
    ok = (x >= 0) & (x == _o.floor(x))
    xs = _o.where(ok, x, 0.0)
    return _o.where(ok, _sp.xlogy(xs, mu) - _sp.gammaln(xs + 1.0) - mu, _NEG_INF)


def _poisson_cdf(k, mu, loc=0):
    k, mu, loc = _args("poisson.cdf", k, mu, loc)
    x = _o.floor(k - loc)
    return _o.where(x < 0, 0.0, _sp.gammaincc(_o.maximum(x, 0.0) + 1.0, mu))


poisson = _dist("poisson", "The Poisson distribution (jax.scipy.stats.poisson): pmf, logpmf, cdf.",
                logpmf=_poisson_logpmf, pmf=lambda k, mu, loc=0: _o.exp(_poisson_logpmf(k, mu, loc)), cdf=_poisson_cdf)


def _bernoulli_logpmf(k, p, loc=0):
    k, p, loc = _args("bernoulli.logpmf", k, p, loc)
    x = k - loc
    ok = (x == 0) | (x == 1)
    return _o.where(ok, _sp.xlogy(x, p) + _sp.xlog1py(1.0 - x, -p), _NEG_INF)


def _bernoulli_cdf(k, p):
    k, p = _args("bernoulli.cdf", k, p)
    return _o.where(k < 0, 0.0, _o.where(k < 1, 1.0 - p, 1.0))


def _bernoulli_ppf(q, p):
    q, p = _args("bernoulli.ppf", q, p)
    return _o.where((q < 0) | (q > 1), math.nan, _o.where(q <= 1.0 - p, 0.0, 1.0))


bernoulli = _dist("bernoulli", "The Bernoulli distribution (jax.scipy.stats.bernoulli): pmf, logpmf, cdf, ppf.",
                  logpmf=_bernoulli_logpmf, pmf=lambda k, p, loc=0: _o.exp(_bernoulli_logpmf(k, p, loc)), cdf=_bernoulli_cdf,
                  ppf=_bernoulli_ppf)


# multivariate_normal
def _mvn_logpdf(x, mean, cov, allow_singular=None):
    from .. import linalg as _la
    from .._numpy import diagonal
    from ..errors import ShapeError, UnsupportedOperationError

    if allow_singular is not None:
        raise UnsupportedOperationError("multivariate_normal.logpdf: allow_singular is not supported (as JAX)", op="multivariate_normal")
    x, mean, cov = (_floatify(_to_array(v)) for v in (x, mean, cov))
    if mean.ndim == 0:
        x, mean = _binary_operands("multivariate_normal.logpdf", x, mean)
        return -0.5 * (x - mean) ** 2 / cov - 0.5 * (math.log(2.0 * math.pi) + _o.log(cov))
    n = mean.shape[-1]
    if cov.ndim < 2 or cov.shape[-2:] != (n, n) or x.shape[-1:] != (n,):
        raise ShapeError(f"multivariate_normal.logpdf: x {tuple(x.shape)}, mean {tuple(mean.shape)} and cov {tuple(cov.shape)} must be (..., n), (n,) and (n, n)")
    L = _la.cholesky(cov)
    d = x - mean
    y = _la.solve_triangular(L, _o.reshape(d, (-1, n)).T, lower=True)
    quad = _o.reshape(_o.sum(y * y, axis=0), d.shape[:-1])
    logdet = _o.sum(_o.log(diagonal(L, axis1=-2, axis2=-1)), axis=-1)
    return -0.5 * quad - logdet - 0.5 * n * math.log(2.0 * math.pi)


multivariate_normal = _dist("multivariate_normal", "The multivariate normal distribution (jax.scipy.stats.multivariate_normal): logpdf, pdf.",
                            logpdf=_mvn_logpdf, pdf=lambda x, mean, cov, allow_singular=None: _o.exp(_mvn_logpdf(x, mean, cov, allow_singular)))

__all__ += ["expon", "laplace", "logistic", "cauchy", "uniform", "gamma", "chi2", "beta", "t", "poisson", "bernoulli", "multivariate_normal"]
