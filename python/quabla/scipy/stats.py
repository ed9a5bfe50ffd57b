"""``qb.scipy.stats``: distributions of ``jax.scipy.stats`` built from Quabla ops.

Owns: ``norm`` (pdf, logpdf, cdf, logcdf, ppf, sf, logsf, isf) with the signatures of
``jax.scipy.stats.norm`` (``loc``, ``scale``; broadcasting; differentiable), and with
jax.scipy.stats's functions and signatures ``expon``, ``laplace``, ``logistic``, ``cauchy``,
``uniform``, ``gamma``, ``chi2``, ``beta``, ``t``, ``poisson``, ``bernoulli`` and
``multivariate_normal`` (its Cholesky form; ``allow_singular`` unsupported, as JAX), with
JAX's values outside the support (log densities -inf); also ``betabinom``, ``binom``,
``dirichlet``, ``gennorm``, ``geom``, ``gumbel_l``, ``gumbel_r``, ``multinomial``, ``nbinom``,
``pareto``, ``truncnorm``, ``vonmises``, ``wrapcauchy``, the ``gaussian_kde`` class (a pytree),
and ``mode``, ``rankdata`` and ``sem``.

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


# ---------------------------------------------------------------------------------------------
# Breadth 2: the rest of jax.scipy.stats (discrete families, gumbel, pareto, truncnorm, the
# circular families, dirichlet, multinomial, gaussian_kde) and mode, rankdata, sem.

import operator as _operator
from typing import NamedTuple as _NamedTuple

from .. import dtypes as _dt
from ..errors import ArgumentTypeError, DTypeError, InvalidArgumentError, ShapeError, UnsupportedOperationError

__all__ += ["betabinom", "binom", "dirichlet", "gaussian_kde", "gennorm", "geom", "gumbel_l", "gumbel_r", "mode",
            "multinomial", "nbinom", "pareto", "rankdata", "sem", "truncnorm", "vonmises", "wrapcauchy"]

_NAN = math.nan


def _exp_of(f):
    """``exp(f(...))`` with f's signature (the pdf/pmf/cdf/sf of a log-form function)."""
    def g(*args, **kwargs):
        return _o.exp(f(*args, **kwargs))

    g.__name__ = f.__name__.replace("log", "", 1)
    return g


# betabinom
def _betabinom_logpmf(k, n, a, b, loc=0):
    """log P(k) of the beta-binomial distribution: log C(n, y) + betaln(y + a, n - y + b) -
    betaln(a, b) with y = floor(k) - loc (JAX's values: -inf outside 0 <= y <= n, NaN for
    n < 0, a <= 0 or b <= 0).

    Example:
        >>> round(qb.scipy.stats.betabinom.pmf(qb.array(2.0), 5.0, 2.0, 3.0).item(), 10)
        0.2380952381
    """
    k, n, a, b, loc = _args("betabinom.logpmf", k, n, a, b, loc)
    y = _o.floor(k) - loc
    combiln = -(_o.log1p(n) + _sp.betaln(n - y + 1.0, y + 1.0))
    lp = combiln + (_sp.betaln(y + a, n - y + b) - _sp.betaln(a, b))
    lp = _o.where((y == 0) & (n == 0), 0.0, lp)
    lp = _o.where((y < -loc) | (y > n) | (y + a <= 0), _NEG_INF, lp)
    return _o.where((n < 0) | (a <= 0) | (b <= 0), _NAN, lp)


betabinom = _dist("betabinom", "The beta-binomial distribution (jax.scipy.stats.betabinom): logpmf(k, n, a, b, loc=0), pmf.",
                  logpmf=_betabinom_logpmf, pmf=_exp_of(_betabinom_logpmf))


# binom
def _binom_logpmf(k, n, p, loc=0):
    """log P(k) of the binomial distribution: log C(n, y) + y log p + (n - y) log(1 - p), y =
    k - loc, -inf outside loc <= k < loc + n + 1 (as JAX's, which does not round k).

    Example:
        >>> round(qb.scipy.stats.binom.pmf(qb.array(2.0), 5.0, 0.5).item(), 10)
        0.3125
    """
    k, n, p, loc = _args("binom.logpmf", k, n, p, loc)
    y = k - loc
    comb = _sp.gammaln(n + 1.0) - (_sp.gammaln(y + 1.0) + _sp.gammaln(n - y + 1.0))
    lin = _sp.xlogy(y, p) + _sp.xlog1py(n - y, -p)
    lp = _o.where(((y == 0) & (n == 0)) | (lin == 0), 0.0, comb + lin)
    return _o.where((k >= loc) & (k < loc + n + 1.0), lp, _NEG_INF)


binom = _dist("binom", "The binomial distribution (jax.scipy.stats.binom): logpmf(k, n, p, loc=0), pmf.",
              logpmf=_binom_logpmf, pmf=_exp_of(_binom_logpmf))


# geom
def _geom_logpmf(k, p, loc=0):
    """log P(k) of the geometric distribution on k >= 1: (k - 1) log(1 - p) + log p (-inf for
    k - loc <= 0).

    Example:
        >>> round(qb.scipy.stats.geom.pmf(qb.array(2.0), 0.25).item(), 10)
        0.1875
    """
    k, p, loc = _args("geom.logpmf", k, p, loc)
    x = k - loc
    return _o.where(x <= 0, _NEG_INF, _sp.xlog1py(x - 1.0, -p) + _o.log(p))


geom = _dist("geom", "The geometric distribution (jax.scipy.stats.geom): logpmf(k, p, loc=0), pmf.",
             logpmf=_geom_logpmf, pmf=_exp_of(_geom_logpmf))


# nbinom
def _nbinom_logpmf(k, n, p, loc=0):
    """log P(k) of the negative binomial distribution: log C(k + n - 1, n - 1) + n log p + k
    log(1 - p) (-inf for k < loc).

    Example:
        >>> round(qb.scipy.stats.nbinom.pmf(qb.array(2.0), 3.0, 0.5).item(), 10)
        0.1875
    """
    k, n, p, loc = _args("nbinom.logpmf", k, n, p, loc)
    y = k - loc
    comb = _sp.gammaln(y + n) - _sp.gammaln(n) - _sp.gammaln(y + 1.0)
    lin = _sp.xlogy(n, p) + _sp.xlogy(y, 1.0 - p)
    return _o.where(k < loc, _NEG_INF, comb + lin)


nbinom = _dist("nbinom", "The negative binomial distribution (jax.scipy.stats.nbinom): logpmf(k, n, p, loc=0), pmf.",
               logpmf=_nbinom_logpmf, pmf=_exp_of(_nbinom_logpmf))


# gennorm
def _gennorm_logpdf(x, beta):
    """log density of the generalized normal distribution: log(beta / 2) - lgamma(1 / beta) -
    |x|^beta.

    Example:
        >>> round(qb.scipy.stats.gennorm.pdf(qb.array(0.5), 2.0).item(), 10)
        0.4393912895
    """
    x, beta = _args("gennorm.logpdf", x, beta)
    return _o.log(0.5 * beta) - _sp.gammaln(1.0 / beta) - _o.power(_o.abs(x), beta)


def _gennorm_cdf(x, beta):
    """The distribution function 1/2 (1 + sign(x) P(1 / beta, |x|^beta)).

    Example:
        >>> round(qb.scipy.stats.gennorm.cdf(qb.array(0.0), 2.0).item(), 10)
        0.5
    """
    x, beta = _args("gennorm.cdf", x, beta)
    return 0.5 * (1.0 + _o.sign(x) * _sp.gammainc(1.0 / beta, _o.power(_o.abs(x), beta)))


gennorm = _dist("gennorm", "The generalized normal distribution (jax.scipy.stats.gennorm): logpdf(x, beta), pdf, cdf.",
                logpdf=_gennorm_logpdf, pdf=_exp_of(_gennorm_logpdf), cdf=_gennorm_cdf)


# gumbel_r and gumbel_l (NaN where scale <= 0, as JAX's)
def _gumbel(name, x, loc, scale):
    x, loc, scale = _args(name, x, loc, scale)
    return x, loc, scale, scale > 0


def _log1mexp(v):
    """log(1 - exp(-v)) for v >= 0, accurate on both sides of log 2."""
    small = v < math.log(2.0)
    return _o.where(small, _o.log(-_o.expm1(-v)), _o.log1p(-_o.exp(-v)))


def _gumbel_r_logpdf(x, loc=0, scale=1):
    """log density of the right-skewed Gumbel distribution: -log(scale) - (z + exp(-z)).

    Example:
        >>> round(qb.scipy.stats.gumbel_r.pdf(qb.array(0.0)).item(), 10)
        0.3678794412
    """
    x, loc, scale, ok = _gumbel("gumbel_r.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return _o.where(ok, _sp.xlogy(-1.0, scale) - (z + _o.exp(-z)), _NAN)


def _gumbel_r_logcdf(x, loc=0, scale=1):
    """log F = -exp(-z).

    Example:
        >>> round(qb.scipy.stats.gumbel_r.cdf(qb.array(0.0)).item(), 10)
        0.3678794412
    """
    x, loc, scale, ok = _gumbel("gumbel_r.logcdf", x, loc, scale)
    return _o.where(ok, -_o.exp(-(x - loc) / scale), _NAN)


def _gumbel_r_ppf(p, loc=0, scale=1):
    """The quantile loc - scale log(-log p) on 0 < p < 1 (NaN elsewhere, as JAX's).

    Example:
        >>> round(qb.scipy.stats.gumbel_r.ppf(qb.array(0.5)).item(), 10)
        0.3665129206
    """
    p, loc, scale = _args("gumbel_r.ppf", p, loc, scale)
    ok = (p > 0) & (p < 1)
    return _o.where(ok, loc - scale * _o.log(_sp.xlogy(-1.0, p)), _NAN)


def _gumbel_r_sf(x, loc=0, scale=1):
    """The survival function 1 - exp(-exp(-z)).

    Example:
        >>> round(qb.scipy.stats.gumbel_r.sf(qb.array(0.0)).item(), 10)
        0.6321205588
    """
    x, loc, scale, ok = _gumbel("gumbel_r.sf", x, loc, scale)
    return _o.where(ok, 1.0 - _o.exp(-_o.exp((loc - x) / scale)), _NAN)


def _gumbel_r_logsf(x, loc=0, scale=1):
    """log(1 - exp(-exp(-z))), accurate in both tails.

    Example:
        >>> round(qb.scipy.stats.gumbel_r.logsf(qb.array(0.0)).item(), 10)
        -0.4586751454
    """
    x, loc, scale, ok = _gumbel("gumbel_r.logsf", x, loc, scale)
    return _o.where(ok, _log1mexp(_o.exp((loc - x) / scale)), _NAN)


gumbel_r = _dist("gumbel_r", "The right-skewed Gumbel distribution (jax.scipy.stats.gumbel_r): logpdf, pdf, logcdf, cdf, ppf, sf, logsf.",
                 logpdf=_gumbel_r_logpdf, pdf=_exp_of(_gumbel_r_logpdf), logcdf=_gumbel_r_logcdf, cdf=_exp_of(_gumbel_r_logcdf),
                 ppf=_gumbel_r_ppf, sf=_gumbel_r_sf, logsf=_gumbel_r_logsf)


def _gumbel_l_logpdf(x, loc=0, scale=1):
    """log density of the left-skewed Gumbel distribution: -log(scale) + z - exp(z).

    Example:
        >>> round(qb.scipy.stats.gumbel_l.pdf(qb.array(0.0)).item(), 10)
        0.3678794412
    """
    x, loc, scale, ok = _gumbel("gumbel_l.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return _o.where(ok, _sp.xlogy(-1.0, scale) + (z - _o.exp(z)), _NAN)


def _gumbel_l_logcdf(x, loc=0, scale=1):
    """log F = log(1 - exp(-exp(z))).

    Example:
        >>> round(qb.scipy.stats.gumbel_l.cdf(qb.array(0.0)).item(), 10)
        0.6321205588
    """
    x, loc, scale, ok = _gumbel("gumbel_l.logcdf", x, loc, scale)
    return _o.where(ok, _o.log(-_o.expm1(-_o.exp((x - loc) / scale))), _NAN)


def _gumbel_l_logsf(x, loc=0, scale=1):
    """log S = -exp(z).

    Example:
        >>> round(qb.scipy.stats.gumbel_l.sf(qb.array(0.0)).item(), 10)
        0.3678794412
    """
    x, loc, scale, ok = _gumbel("gumbel_l.logsf", x, loc, scale)
    return _o.where(ok, -_o.exp((x - loc) / scale), _NAN)


def _gumbel_l_ppf(p, loc=0, scale=1):
    """The quantile loc + scale log(-log(1 - p)) on 0 < p < 1 (NaN elsewhere).

    Example:
        >>> round(qb.scipy.stats.gumbel_l.ppf(qb.array(0.5)).item(), 10)
        -0.3665129206
    """
    p, loc, scale = _args("gumbel_l.ppf", p, loc, scale)
    ok = (p > 0) & (p < 1)
    return _o.where(ok, loc + scale * _o.log(_sp.xlog1py(-1.0, -p)), _NAN)


gumbel_l = _dist("gumbel_l", "The left-skewed Gumbel distribution (jax.scipy.stats.gumbel_l): logpdf, pdf, logcdf, cdf, ppf, sf, logsf.",
                 logpdf=_gumbel_l_logpdf, pdf=_exp_of(_gumbel_l_logpdf), logcdf=_gumbel_l_logcdf, cdf=_exp_of(_gumbel_l_logcdf),
                 ppf=_gumbel_l_ppf, sf=_exp_of(_gumbel_l_logsf), logsf=_gumbel_l_logsf)


# pareto
def _pareto(name, x, b, loc, scale):
    x, b, loc, scale = _args(name, x, b, loc, scale)
    return x, b, (x - loc) / scale, x < loc + scale


def _pareto_logpdf(x, b, loc=0, scale=1):
    """log density of the Pareto distribution: -log(scale / b) - (b + 1) log z (-inf below
    loc + scale).

    Example:
        >>> round(qb.scipy.stats.pareto.pdf(qb.array(2.0), 3.0).item(), 10)
        0.1875
    """
    x, b, z, below = _pareto("pareto.logpdf", x, b, loc, scale)
    _, _, loc, scale = _args("pareto.logpdf", x, b, loc, scale)
    return _o.where(below, _NEG_INF, -(_o.log(scale / b) + (b + 1.0) * _o.log(z)))


def _pareto_cdf(x, b, loc=0, scale=1):
    """The distribution function 1 - z^-b (0 below loc + scale).

    Example:
        >>> round(qb.scipy.stats.pareto.cdf(qb.array(2.0), 3.0).item(), 10)
        0.875
    """
    x, b, z, below = _pareto("pareto.cdf", x, b, loc, scale)
    return _o.where(below, 0.0, 1.0 - _o.power(z, -b))


def _pareto_logcdf(x, b, loc=0, scale=1):
    """log(1 - z^-b) (-inf below loc + scale).

    Example:
        >>> round(qb.scipy.stats.pareto.logcdf(qb.array(2.0), 3.0).item(), 10)
        -0.1335313926
    """
    x, b, z, below = _pareto("pareto.logcdf", x, b, loc, scale)
    return _o.where(below, _NEG_INF, _o.log1p(-_o.power(z, -b)))


def _pareto_logsf(x, b, loc=0, scale=1):
    """log S = -b log z (0 below loc + scale).

    Example:
        >>> round(qb.scipy.stats.pareto.sf(qb.array(2.0), 3.0).item(), 10)
        0.125
    """
    x, b, z, below = _pareto("pareto.logsf", x, b, loc, scale)
    return _o.where(below, 0.0, -(b * _o.log(z)))


def _pareto_ppf(q, b, loc=0, scale=1):
    """The quantile loc + scale (1 - q)^(-1/b) (NaN outside [0, 1]).

    Example:
        >>> round(qb.scipy.stats.pareto.ppf(qb.array(0.875), 3.0).item(), 10)
        2.0
    """
    q, b, loc, scale = _args("pareto.ppf", q, b, loc, scale)
    v = loc + scale * _o.power(1.0 - q, -(1.0 / b))
    return _o.where((q != q) | (q < 0) | (q > 1), _NAN, v)


pareto = _dist("pareto", "The Pareto distribution (jax.scipy.stats.pareto): logpdf(x, b, loc=0, scale=1), pdf, cdf, logcdf, sf, logsf, ppf.",
               logpdf=_pareto_logpdf, pdf=_exp_of(_pareto_logpdf), cdf=_pareto_cdf, logcdf=_pareto_logcdf,
               sf=_exp_of(_pareto_logsf), logsf=_pareto_logsf, ppf=_pareto_ppf)


# truncnorm
def _log_diff(x, y):
    """log(exp(x) - exp(y)) (NaN where y > x, as JAX's logsumexp with b = [1, -1])."""
    st = _o.stack([x, y])
    w = _o.stack([_o.ones_like(x), -_o.ones_like(y)])
    return _o.logsumexp(st, 0, b=w)


def _log_gauss_mass(a, b):
    """log(Phi(b) - Phi(a)): the tails as differences of log_ndtr, the centre by log1p."""
    left = b <= 0
    right = a > 0
    central = _o.logical_not(left | right)
    at = _o.where(right, -b, a)
    bt = _o.where(right, -a, b)
    tail = _log_diff(_sp.log_ndtr(bt), _sp.log_ndtr(at))
    mid = _o.log1p(-_sp.ndtr(a) - _sp.ndtr(-b))
    return _o.where(central, mid, tail)


def _truncnorm_logpdf(x, a, b, loc=0, scale=1):
    """log density of the normal truncated to [a, b] (standardized bounds): norm.logpdf -
    log(Phi(b) - Phi(a)); -inf outside, NaN where a >= b.

    Example:
        >>> round(qb.scipy.stats.truncnorm.pdf(qb.array(0.0), -1.0, 1.0).item(), 10)
        0.5843685673
    """
    x, a, b, loc, scale = _args("truncnorm.logpdf", x, a, b, loc, scale)
    val = logpdf(x, loc, scale) - _log_gauss_mass(a, b)
    z = (x - loc) / scale
    val = _o.where((z < a) | (z > b), _NEG_INF, val)
    return _o.where(a >= b, _NAN, val)


def _truncnorm_logcdf(x, a, b, loc=0, scale=1):
    """log F of the truncated normal (log1p(-sf) where F is close to 1): 0 at or above b,
    -inf at or below a, NaN where a >= b.

    Example:
        >>> round(qb.scipy.stats.truncnorm.cdf(qb.array(0.0), -1.0, 1.0).item(), 10)
        0.5
    """
    x, a, b, loc, scale = _args("truncnorm.logcdf", x, a, b, loc, scale)
    z = (x - loc) / scale
    lab = _log_gauss_mass(a, b)
    lcdf = _log_gauss_mass(a, z) - lab
    lsf = _log_gauss_mass(z, b) - lab
    out = _o.where(z > a, lcdf, 0.0)
    out = _o.where(lcdf > -0.1, _o.log1p(-_o.exp(lsf)), out)
    out = _o.where(z <= a, _NEG_INF, out)
    out = _o.where(z >= b, 0.0, out)
    return _o.where(a >= b, _NAN, out)


def _truncnorm_logsf(x, a, b, loc=0, scale=1):
    """log S of the truncated normal, as logcdf of the mirrored distribution.

    Example:
        >>> round(qb.scipy.stats.truncnorm.sf(qb.array(0.0), -1.0, 1.0).item(), 10)
        0.5
    """
    x, a, b, loc, scale = _args("truncnorm.logsf", x, a, b, loc, scale)
    return _truncnorm_logcdf(-x, -b, -a, -loc, scale)


truncnorm = _dist("truncnorm", "The truncated normal distribution (jax.scipy.stats.truncnorm): logpdf(x, a, b, loc=0, scale=1), pdf, logcdf, cdf, logsf, sf.",
                  logpdf=_truncnorm_logpdf, pdf=_exp_of(_truncnorm_logpdf), logcdf=_truncnorm_logcdf,
                  cdf=_exp_of(_truncnorm_logcdf), logsf=_truncnorm_logsf, sf=_exp_of(_truncnorm_logsf))


# vonmises and wrapcauchy
def _vonmises_logpdf(x, kappa):
    """log density of the von Mises distribution: kappa (cos x - 1) - log(2 pi i0e(kappa))
    (NaN for kappa <= 0).

    Example:
        >>> round(qb.scipy.stats.vonmises.pdf(qb.array(0.0), 1.0).item(), 10)
        0.3417104886
    """
    x, kappa = _args("vonmises.logpdf", x, kappa)
    v = kappa * (_o.cos(x) - 1.0) - _o.log(2.0 * math.pi * _sp.i0e(kappa))
    return _o.where(kappa > 0, v, _NAN)


vonmises = _dist("vonmises", "The von Mises distribution (jax.scipy.stats.vonmises): logpdf(x, kappa), pdf.",
                 logpdf=_vonmises_logpdf, pdf=_exp_of(_vonmises_logpdf))


def _wrapcauchy_logpdf(x, c):
    """log density of the wrapped Cauchy distribution on [0, 2 pi]: log(1 - c^2) - log(2 pi)
    - log(1 + c^2 - 2 c cos x) (-inf outside [0, 2 pi], NaN unless 0 < c < 1).

    Example:
        >>> round(qb.scipy.stats.wrapcauchy.pdf(qb.array(1.0), 0.5).item(), 10)
        0.1681930325
    """
    x, c = _args("wrapcauchy.logpdf", x, c)
    v = _o.log(1.0 - c * c) - math.log(2.0 * math.pi) - _o.log(1.0 + c * c - 2.0 * c * _o.cos(x))
    inside = (x >= 0) & (x <= 2.0 * math.pi)
    return _o.where((c > 0) & (c < 1), _o.where(inside, v, _NEG_INF), _NAN)


wrapcauchy = _dist("wrapcauchy", "The wrapped Cauchy distribution (jax.scipy.stats.wrapcauchy): logpdf(x, c), pdf.",
                   logpdf=_wrapcauchy_logpdf, pdf=_exp_of(_wrapcauchy_logpdf))


# dirichlet
def _dirichlet_logpdf(x, alpha):
    """log density of the Dirichlet distribution over axis 0 of ``x`` (K entries, or K - 1
    with the last implied), ``alpha`` of shape (K,); -inf off the simplex (entries > 0
    summing to 1 within 1e-6).

    Example:
        >>> round(qb.scipy.stats.dirichlet.pdf(qb.array([0.2, 0.3, 0.5]), qb.array([1.0, 2.0, 3.0])).item(), 10)
        4.5
    """
    x, alpha = _args_nobcast("dirichlet.logpdf", x, alpha)
    if alpha.ndim != 1:
        raise ShapeError(f"dirichlet.logpdf: alpha must be one-dimensional, got shape {tuple(alpha.shape)}")
    K = alpha.shape[0]
    if x.ndim == 0 or x.shape[0] not in (K, K - 1):
        raise ShapeError(f"dirichlet.logpdf: x must have {K} or {K - 1} entries along axis 0 (alpha {tuple(alpha.shape)}), got shape {tuple(x.shape)}")
    if x.shape[0] != K:
        x = _o.concatenate([x, 1.0 - _o.sum(x, axis=0, keepdims=True)], axis=0)
    norm_term = _o.sum(_sp.gammaln(alpha)) - _sp.gammaln(_o.sum(alpha))
    al = _o.reshape(alpha, (K,) + (1,) * (x.ndim - 1))
    lp = _o.sum(_sp.xlogy(al - 1.0, x), axis=0) - norm_term
    simplex = _o.all(x > 0, axis=0) & (_o.abs(_o.sum(x, axis=0) - 1.0) < 1e-6)
    return _o.where(simplex, lp, _NEG_INF)


def _args_nobcast(name, *xs):
    """The arrays as floats of one promoted dtype, not broadcast."""
    arrs = [_to_array(v) if not _o._is_scalar(v) else v for v in xs]
    first = _floatify(_to_array(arrs[0])) if _o._is_scalar(arrs[0]) else arrs[0]
    dt = first.dtype
    for a in arrs[1:]:
        if not _o._is_scalar(a):
            dt = _dt.result_type(name, dt, a.dtype)
    if not dt.is_float:
        dt = float64
    return [_to_array(a, dt) if _o._is_scalar(a) else astype(a, dt) for a in arrs]


dirichlet = _dist("dirichlet", "The Dirichlet distribution (jax.scipy.stats.dirichlet): logpdf(x, alpha), pdf.",
                  logpdf=_dirichlet_logpdf, pdf=_exp_of(_dirichlet_logpdf))


# multinomial
def _multinomial_logpmf(x, n, p):
    """log P(x) of the multinomial distribution over the last axis: log n! + sum(x log p -
    log x!); -inf unless the counts (all of ``x``, as JAX) sum to n. ``x`` and ``n`` must be
    integers (DTypeError otherwise).

    Example:
        >>> round(qb.scipy.stats.multinomial.pmf(qb.array([1, 1]), qb.array(2), qb.array([0.5, 0.5])).item(), 10)
        0.5
    """
    x, n = _to_array(x), _to_array(n)
    if not (x.dtype.is_int and n.dtype.is_int):
        raise DTypeError(f"multinomial.logpmf: x and n must be of integer type, got x {x.dtype} and n {n.dtype}")
    p = _floatify(_to_array(p))
    if not p.dtype.is_float:
        p = astype(p, float64)
    xf, nf = astype(x, p.dtype), astype(n, p.dtype)
    lp = _sp.gammaln(nf + 1.0) + _o.sum(_sp.xlogy(xf, p) - _sp.gammaln(xf + 1.0), axis=-1)
    return _o.where(_o.sum(xf) == nf, lp, _NEG_INF)


multinomial = _dist("multinomial", "The multinomial distribution (jax.scipy.stats.multinomial): logpmf(x, n, p), pmf.",
                    logpmf=_multinomial_logpmf, pmf=_exp_of(_multinomial_logpmf))


# mode, rankdata, sem


class ModeResult(_NamedTuple):
    """The result of :func:`mode`: the modal values and their counts."""

    mode: object
    count: object


def _axis_arg(name, axis, ndim):
    try:
        ax = _operator.index(axis)
    except TypeError:
        raise ArgumentTypeError(f"{name}: axis must be an int or None, got {type(axis).__name__}") from None
    if not -ndim <= ax < ndim:
        raise InvalidArgumentError(f"{name}: axis {ax} is out of bounds for an array of {ndim} dimensions")
    return ax % ndim


def _nan_policy(name, nan_policy):
    if nan_policy not in ("propagate", "omit", "raise"):
        raise InvalidArgumentError(f"{name}: illegal nan_policy {nan_policy!r}; expected one of 'propagate', 'omit', 'raise'")
    if nan_policy == "omit":
        raise UnsupportedOperationError(f"{name}: nan_policy='omit' is not implemented (as JAX)")
    if nan_policy == "raise":
        raise UnsupportedOperationError(f"{name}: nan_policy='raise' is not supported under tracing; check for NaNs outside {name} (as JAX)")


def _rows(name, a, axis):
    """``a`` with ``axis`` moved last and the rest flattened: (rows, restore)."""
    from .._shape import moveaxis

    a = _to_array(a)
    if a.ndim == 0:
        a = _o.reshape(a, (1,))
    if axis is None:
        return _o.reshape(a, (1, -1)), None, a
    ax = _axis_arg(name, axis, a.ndim)
    moved = moveaxis(a, ax, -1)
    return _o.reshape(moved, (-1, moved.shape[-1])), (ax, moved.shape), a


def _isnan_any(x):
    return x != x if x.dtype.is_float else _o.zeros_like(x) != 0


def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """The most frequent value along ``axis`` (None: the whole array) and its count; the
    smallest value among ties, NaNs counted together (as jax.scipy.stats.mode). ``nan_policy``
    other than 'propagate' is UnsupportedOperationError, as JAX.

    Args:
        a: an array.
        axis: an int or None.
        nan_policy: 'propagate'.
        keepdims: keep the reduced axis with length 1.

    Returns:
        ModeResult(mode, count): the values in a's dtype, the counts as int64.

    Example:
        >>> r = qb.scipy.stats.mode(qb.array([1.0, 2.0, 2.0, 3.0]))
        >>> (r.mode.item(), r.count.item())
        (2.0, 2)
    """
    from .._conv import cummax
    from .._indexing import take_along_axis
    from .._numpy import sort

    _nan_policy("mode", nan_policy)
    if not isinstance(keepdims, bool):
        raise ArgumentTypeError(f"mode: keepdims must be a bool, got {type(keepdims).__name__}")
    rows, info, a = _rows("mode", a, axis)
    if a.dtype == _dt.bool_:
        rows = astype(rows, _dt.int32)
    s = sort(rows, axis=-1)
    n = s.shape[-1]
    idx = _o.broadcast_to(_o.arange(n, dtype=_dt.int64), s.shape)
    if n > 1:
        prev, cur = s[:, :-1], s[:, 1:]
        same = (cur == prev) | (_isnan_any(cur) & _isnan_any(prev))
        start = _o.concatenate([_o.ones((s.shape[0], 1), _dt.bool_), _o.logical_not(same)], axis=-1)
    else:
        start = _o.ones(s.shape, _dt.bool_)
    first = cummax(_o.where(start, idx, 0), axis=-1)
    cnt = idx - first + 1
    pos = _o.argmax(cnt, axis=-1)
    vals = take_along_axis(s, _o.reshape(pos, (-1, 1)), axis=-1)[:, 0]
    counts = astype(_o.max(cnt, axis=-1), _dt.int64)
    if a.dtype == _dt.bool_:
        vals = astype(vals, _dt.bool_)
    if info is None:
        shape = tuple(1 for _ in a.shape) if keepdims else ()
    else:
        ax, mshape = info
        shape = tuple(1 if i == ax else d for i, d in enumerate(a.shape)) if keepdims else mshape[:-1]
    return ModeResult(_o.reshape(vals, shape), _o.reshape(counts, shape))


_RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """Ranks of the data from 1, ties by ``method`` ('average', 'min', 'max', 'dense',
    'ordinal'), over the flattened array (axis None) or along ``axis``; all NaN where a slice
    holds a NaN (as jax.scipy.stats.rankdata). Results are float64.

    Args:
        a: an array.
        method: the tie rule.
        axis: None or an int.
        nan_policy: 'propagate' ('omit' and 'raise' are UnsupportedOperationError, as JAX).

    Returns:
        The ranks, float64, of a's flattened shape (axis None) or a's shape.

    Example:
        >>> qb.scipy.stats.rankdata(qb.array([3.0, 1.0, 3.0, 2.0])).tolist()
        [3.5, 1.0, 3.5, 2.0]
    """
    from .._conv import cummax, cummin, cumsum
    from .._indexing import take_along_axis
    from .._numpy import argsort
    from .._shape import moveaxis

    _nan_policy("rankdata", nan_policy)
    if not isinstance(method, str) or method not in _RANK_METHODS:
        raise InvalidArgumentError(f"rankdata: unknown method {method!r}; expected one of {_RANK_METHODS}")
    a0 = _to_array(a)
    if a0.ndim == 0 and axis is not None:
        raise InvalidArgumentError(f"rankdata: axis {axis} is out of bounds for a 0-d array")
    rows, info, a = _rows("rankdata", a0, axis)
    if a.dtype == _dt.bool_:
        rows = astype(rows, _dt.int32)
    m, n = rows.shape
    sorter = argsort(rows, axis=-1)
    srt = take_along_axis(rows, sorter, axis=-1)
    inv = argsort(sorter, axis=-1)
    if method == "ordinal":
        ranks_sorted = None
        out = astype(inv, float64) + 1.0
    else:
        idx = _o.broadcast_to(_o.arange(n, dtype=_dt.int64), (m, n))
        if n > 1:
            newrun = srt[:, 1:] != srt[:, :-1]
            true_col = _o.ones((m, 1), _dt.bool_)
            start = _o.concatenate([true_col, newrun], axis=-1)
            end = _o.concatenate([newrun, true_col], axis=-1)
        else:
            start = end = _o.ones((m, n), _dt.bool_)
        if method == "dense":
            ranks_sorted = astype(cumsum(astype(start, _dt.int64), axis=-1), float64)
        else:
            first = astype(cummax(_o.where(start, idx, 0), axis=-1), float64)
            last = astype(cummin(_o.where(end, idx, n - 1), axis=-1, reverse=True), float64)
            ranks_sorted = {"min": first + 1.0, "max": last + 1.0, "average": 0.5 * (first + last) + 1.0}[method]
        out = take_along_axis(ranks_sorted, inv, axis=-1)
    nan_row = _o.any(_isnan_any(rows), axis=-1, keepdims=True)
    out = _o.where(nan_row, _NAN, out)
    if info is None:
        return _o.reshape(out, (-1,))
    ax, mshape = info
    return moveaxis(_o.reshape(out, mshape), -1, ax)


def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """The standard error of the mean, std(a, ddof) / sqrt(n), along ``axis`` (None: all);
    ``nan_policy='omit'`` ignores NaNs (nanstd over the non-NaN count), as
    jax.scipy.stats.sem; 'raise' is InvalidArgumentError (JAX's ValueError).

    Args:
        a: an array.
        axis: an int or None.
        ddof: the delta degrees of freedom.
        nan_policy: 'propagate' or 'omit'.
        keepdims: keep the reduced axis.

    Returns:
        The standard errors, in a's promoted float dtype.

    Example:
        >>> round(qb.scipy.stats.sem(qb.array([1.0, 2.0, 4.0])).item(), 10)
        0.8819171037
    """
    from .._math import nanstd

    b = _floatify(_to_array(a))
    if not b.dtype.is_float:
        b = astype(b, float64)
    if axis is not None:
        _axis_arg("sem", axis, max(b.ndim, 1))
    if nan_policy == "propagate":
        size = math.prod(b.shape) if axis is None else b.shape[axis]
        return _o.std(b, axis, ddof=ddof, keepdims=keepdims) / math.sqrt(size)
    if nan_policy == "omit":
        count = _o.sum(astype(b == b, b.dtype), axis, keepdims=keepdims)
        return nanstd(b, axis, ddof=ddof, keepdims=keepdims) / _o.sqrt(count)
    raise InvalidArgumentError(f"sem: nan_policy {nan_policy!r} is not supported (use 'propagate' or 'omit')")


# gaussian_kde

from .. import tree_util as _tree_util  # noqa: E402


def _kde_float(name, v):
    v = _to_array(v)
    if v.dtype == _dt.bool_ or not (v.dtype.is_float or v.dtype.is_int):
        raise DTypeError(f"{name}: expected a real array, got {v.dtype}")
    return _floatify(v) if v.dtype.is_float else astype(v, float64)


@_tree_util.register_pytree_node_class
class gaussian_kde:
    """A Gaussian kernel density estimate (jax.scipy.stats.gaussian_kde), a pytree of
    (neff, dataset, weights, covariance, inv_cov).

    Args:
        dataset: the data points, shape (d, n) (a 1-d array is one variable).
        bw_method: 'scott' (default), 'silverman', a scalar factor, or a callable of the kde
            returning the factor.
        weights: optional weights of shape (n,) (normalized to sum to 1).

    Example:
        >>> kde = qb.scipy.stats.gaussian_kde(qb.array([0.0, 1.0, 2.0]))
        >>> round(kde.evaluate(qb.array([1.0])).item(), 6)
        0.318156
    """

    __slots__ = ("neff", "dataset", "weights", "covariance", "inv_cov")

    def __init__(self, dataset, bw_method=None, weights=None):
        from .. import linalg as _la
        from .._math import cov as _cov
        from .._numpy import atleast_2d

        dataset = atleast_2d(_kde_float("gaussian_kde", dataset))
        if dataset.ndim != 2:
            raise ShapeError(f"gaussian_kde: dataset must be at most 2-d (d, n), got shape {tuple(dataset.shape)}")
        if not math.prod(dataset.shape) > 1:
            raise InvalidArgumentError("gaussian_kde: `dataset` input should have multiple elements")
        d, n = dataset.shape
        if weights is not None:
            w = _kde_float("gaussian_kde", weights)
            dt = _dt.result_type("gaussian_kde", dataset.dtype, w.dtype)
            dataset, w = astype(dataset, dt), astype(w, dt)
            if w.ndim == 0:
                w = _o.reshape(w, (1,))
            if w.ndim != 1:
                raise ShapeError(f"gaussian_kde: `weights` input should be one-dimensional, got shape {tuple(w.shape)}")
            if w.shape[0] != n:
                raise ShapeError(f"gaussian_kde: `weights` input should be of length n={n}, got {w.shape[0]}")
            w = w / _o.sum(w)
        else:
            w = _o.full((n,), 1.0 / n, dtype=dataset.dtype)
        self._set("dataset", dataset)
        self._set("weights", w)
        neff = self._set("neff", 1.0 / _o.sum(w * w))
        bw = "scott" if bw_method is None else bw_method
        if isinstance(bw, str) and bw == "scott":
            factor = _o.power(neff, -1.0 / (d + 4))
        elif isinstance(bw, str) and bw == "silverman":
            factor = _o.power(neff * (d + 2) / 4.0, -1.0 / (d + 4))
        elif (isinstance(bw, (int, float)) and not isinstance(bw, bool)) or (hasattr(bw, "ndim") and hasattr(bw, "dtype") and bw.ndim == 0):
            factor = bw
        elif callable(bw):
            factor = bw(self)
        else:
            raise InvalidArgumentError(f"gaussian_kde: `bw_method` should be 'scott', 'silverman', a scalar, or a callable, got {bw!r}")
        data_cov = atleast_2d(_cov(dataset, rowvar=True, bias=False, aweights=w))
        data_inv = _la.inv(data_cov)
        self._set("covariance", data_cov * factor ** 2)
        self._set("inv_cov", data_inv / factor ** 2)

    def _set(self, name, value):
        object.__setattr__(self, name, value)
        return value

    def tree_flatten(self):
        """The children (neff, dataset, weights, covariance, inv_cov) and no aux data."""
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        """Rebuilds a kde from :meth:`tree_flatten`'s children."""
        kde = cls.__new__(cls)
        for name, v in zip(cls.__slots__, children):
            kde._set(name, v)
        return kde

    @property
    def d(self):
        """The number of dimensions."""
        return self.dataset.shape[0]

    @property
    def n(self):
        """The number of data points."""
        return self.dataset.shape[1]

    def _points(self, name, points):
        from .._numpy import atleast_2d

        pts = atleast_2d(_kde_float(f"gaussian_kde.{name}", points))
        if pts.ndim != 2:
            raise ShapeError(f"gaussian_kde.{name}: points must be at most 2-d, got shape {tuple(pts.shape)}")
        dd, m = pts.shape
        if dd != self.d:
            if dd == 1 and m == self.d:
                pts = _o.reshape(pts, (self.d, 1))
            else:
                raise ShapeError(f"gaussian_kde.{name}: points have dimension {dd}, dataset has dimension {self.d}")
        return pts

    def _kernel_args(self, pts):
        """(log_norm, -0.5 * squared whitened distances (m, n)) and the weights."""
        from .. import linalg as _la

        dt = _dt.result_type("gaussian_kde", self.dataset.dtype, pts.dtype)
        data, pts = astype(self.dataset, dt), astype(pts, dt)
        W = _la.cholesky(astype(self.inv_cov, dt))
        P = _o.matmul(data.T, W)
        X = _o.matmul(pts.T, W)
        diff = _o.expand_dims(X, 1) - _o.expand_dims(P, 0)
        from .._numpy import diagonal

        log_norm = _o.sum(_o.log(diagonal(W))) - 0.5 * self.d * math.log(2.0 * math.pi)
        return log_norm - 0.5 * _o.sum(diff * diff, axis=-1), astype(self.weights, dt)

    def evaluate(self, points):
        """The density at ``points`` ((d, m), or (d,) for one point of d dims).

        Args:
            points: the evaluation points.

        Returns:
            The densities, shape (m,).

        Example:
            >>> kde = qb.scipy.stats.gaussian_kde(qb.array([0.0, 1.0, 2.0]))
            >>> round(kde(qb.array([0.0, 1.0])).tolist()[1], 6)
            0.318156
        """
        arg, w = self._kernel_args(self._points("evaluate", points))
        return _o.sum(w * _o.exp(arg), axis=1)

    def __call__(self, points):
        """Same as :meth:`evaluate`."""
        return self.evaluate(points)

    def pdf(self, x):
        """Same as :meth:`evaluate`.

        Example:
            >>> kde = qb.scipy.stats.gaussian_kde(qb.array([0.0, 1.0, 2.0]))
            >>> round(kde.pdf(qb.array([1.0])).item(), 6)
            0.318156
        """
        return self.evaluate(x)

    def logpdf(self, x):
        """The log density at ``x`` (a log-sum-exp over the data points).

        Example:
            >>> kde = qb.scipy.stats.gaussian_kde(qb.array([0.0, 1.0, 2.0]))
            >>> round(kde.logpdf(qb.array([1.0])).item(), 6)
            -1.145213
        """
        arg, w = self._kernel_args(self._points("logpdf", x))
        return _o.logsumexp(_o.log(w) + arg, 1)

    def integrate_gaussian(self, mean, cov):
        """The integral of the kde times a Gaussian with ``mean`` (d,) and ``cov`` (d, d).

        Example:
            >>> kde = qb.scipy.stats.gaussian_kde(qb.array([0.0, 1.0, 2.0]))
            >>> round(kde.integrate_gaussian(qb.array([1.0]), qb.array([[1.0]])).item(), 6)
            0.256727
        """
        from .._numpy import atleast_1d, atleast_2d

        mean = atleast_1d(_o.squeeze(_kde_float("gaussian_kde.integrate_gaussian", mean)))
        cov = atleast_2d(_kde_float("gaussian_kde.integrate_gaussian", cov))
        if tuple(mean.shape) != (self.d,):
            raise ShapeError(f"gaussian_kde.integrate_gaussian: mean does not have dimension {self.d} (shape {tuple(mean.shape)})")
        if tuple(cov.shape) != (self.d, self.d):
            raise ShapeError(f"gaussian_kde.integrate_gaussian: covariance does not have dimension {self.d} (shape {tuple(cov.shape)})")
        return self._convolve(self.covariance + cov, self.dataset, self.weights, _o.reshape(mean, (self.d, 1)))[0]

    def _convolve(self, total_cov, target, weights, means):
        """sum_j w_j N(target_j - mean_k; 0, total_cov) for each column k of ``means``."""
        from .._numpy import diagonal
        from . import linalg as _sl

        chol = _sl.cho_factor(total_cov)
        norm = 1.0 / (math.sqrt(2.0 * math.pi) ** self.d * _o.prod(diagonal(chol[0])))
        k = means.shape[1]
        diff = _o.expand_dims(target, 2) - _o.expand_dims(means, 1)  # (d, n, k)
        flat = _o.reshape(diff, (self.d, -1))
        alpha = _sl.cho_solve(chol, flat)
        arg = _o.reshape(0.5 * _o.sum(flat * alpha, axis=0), (target.shape[1], k))
        return norm * _o.sum(_o.exp(-arg) * _o.expand_dims(weights, 1), axis=0)

    def integrate_box_1d(self, low, high):
        """The mass of a 1-d kde between the scalars ``low`` and ``high``.

        Example:
            >>> kde = qb.scipy.stats.gaussian_kde(qb.array([0.0, 1.0, 2.0]))
            >>> round(kde.integrate_box_1d(-100.0, 100.0).item(), 6)
            1.0
        """
        if self.d != 1:
            raise InvalidArgumentError("gaussian_kde.integrate_box_1d: only handles 1-d pdfs")
        lo, hi = _to_array(low), _to_array(high)
        if lo.ndim != 0 or hi.ndim != 0:
            raise ShapeError("gaussian_kde.integrate_box_1d: the limits of integration must be scalars")
        sigma = _o.squeeze(_o.sqrt(self.covariance))
        lo_z = _o.squeeze((lo - self.dataset) / sigma)
        hi_z = _o.squeeze((hi - self.dataset) / sigma)
        return _o.sum(self.weights * (_sp.ndtr(hi_z) - _sp.ndtr(lo_z)))

    def integrate_kde(self, other):
        """The integral of the product of this kde and ``other`` (same dimension).

        Example:
            >>> kde = qb.scipy.stats.gaussian_kde(qb.array([0.0, 1.0, 2.0]))
            >>> round(kde.integrate_kde(kde).item(), 6)
            0.239644
        """
        if not isinstance(other, gaussian_kde):
            raise ArgumentTypeError(f"gaussian_kde.integrate_kde: other must be a gaussian_kde, got {type(other).__name__}")
        if other.d != self.d:
            raise ShapeError(f"gaussian_kde.integrate_kde: KDEs are not the same dimensionality ({self.d} vs {other.d})")
        sm, lg = (self, other) if self.n < other.n else (other, self)
        res = self._convolve(self.covariance + other.covariance, lg.dataset, lg.weights, sm.dataset)
        return _o.sum(res * sm.weights)

    def resample(self, key, shape=()):
        """Draws ``shape`` samples with a ``qb.random`` key: data points chosen by weight plus
        Gaussian noise of the kde's covariance; shape (d, *shape) (JAX's layout; the numbers
        follow qb.random's streams).

        Example:
            >>> kde = qb.scipy.stats.gaussian_kde(qb.array([0.0, 1.0, 2.0]))
            >>> kde.resample(qb.random.key(0), (5,)).shape
            (1, 5)
        """
        from .. import random as _rnd

        if not isinstance(shape, (tuple, list)) or not all(isinstance(s, int) and not isinstance(s, bool) for s in shape):
            raise ArgumentTypeError(f"gaussian_kde.resample: shape must be a tuple of ints, got {shape!r}")
        shape = tuple(shape)
        ind_key, eps_key = _rnd.split(key)
        ind = _rnd.choice(ind_key, self.n, shape=shape, p=self.weights)
        eps = _rnd.multivariate_normal(eps_key, _o.zeros((self.d,), self.covariance.dtype), self.covariance, shape=shape,
                                       dtype=self.dataset.dtype)
        eps = _o.transpose(eps) if eps.ndim > 1 else eps
        return self.dataset[:, ind] + eps

    def integrate_box(self, low_bounds, high_bounds, maxpts=None):
        """Not supported (only 1-d boxes: :meth:`integrate_box_1d`), as JAX."""
        raise UnsupportedOperationError("gaussian_kde.integrate_box: only 1D box integrations are supported; use `integrate_box_1d`")

    def set_bandwidth(self, bw_method=None):
        """Not supported (the bandwidth is fixed at construction), as JAX."""
        raise UnsupportedOperationError("gaussian_kde.set_bandwidth: dynamically changing the bandwidth method is not supported")
