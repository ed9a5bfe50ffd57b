"""qb.scipy.stats's distributions against jax.scipy.stats (x64): every function at points in
and out of the support, eagerly and under jit, gradients in x and the parameters, f32."""

import numpy as np
import pytest

import quabla as qb
from breadth_util import assert_close

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.scipy.stats as js  # noqa: E402

S = qb.scipy.stats
X = np.array([-1.5, -0.2, 0.0, 0.3, 0.9, 1.0, 2.5, 7.0])
CONT = [("expon", ()), ("laplace", ()), ("logistic", ()), ("cauchy", ()), ("uniform", ()), ("gamma", (1.7,)), ("chi2", (3.0,)),
        ("beta", (2.0, 3.5)), ("t", (4.0,))]


@pytest.mark.parametrize("name,params", CONT, ids=[c[0] for c in CONT])
def test_continuous(name, params):
    for f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"):
        if not hasattr(getattr(js, name), f):
            continue
        q, j = getattr(getattr(S, name), f), getattr(getattr(js, name), f)
        for loc, scale in ((0, 1), (0.5, 2.0)):
            assert_close(q(qb.array(X), *params, loc, scale), j(X, *params, loc, scale), 1e-10, 1e-12, what=f"{name}.{f}")
        assert_close(qb.jit(lambda x: q(x, *params, 0.5, 2.0))(qb.array(X)), j(X, *params, 0.5, 2.0), 1e-10, 1e-12, what=f"jit {name}.{f}")
        assert q(qb.array(X.astype(np.float32)), *params).dtype == qb.float32
    for f in ("ppf", "isf"):
        if hasattr(getattr(js, name), f):
            p = np.array([0.01, 0.3, 0.5, 0.99])
            assert_close(getattr(getattr(S, name), f)(qb.array(p), 0.5, 2.0), getattr(getattr(js, name), f)(p, 0.5, 2.0), 1e-10, 1e-12)
    inside = X[(X > 0.05) & (X < 0.95)]
    g = qb.grad(lambda x, s: getattr(S, name).logpdf(x, *params, 0.0, s).sum(), argnums=(0, 1))(qb.array(inside), qb.array(1.3))
    gj = jax.grad(lambda x, s: getattr(js, name).logpdf(x, *params, 0.0, s).sum(), argnums=(0, 1))(inside, 1.3)
    assert_close(g, gj, 1e-9, 1e-11)


def test_shape_parameter_gradients():
    x = np.array([0.4, 1.3, 2.2])
    for q, j in ((lambda a: S.gamma.logpdf(x, a).sum(), lambda a: js.gamma.logpdf(x, a).sum()),
                 (lambda d: S.t.logpdf(x, d).sum(), lambda d: js.t.logpdf(x, d).sum()),
                 (lambda a: S.gamma.cdf(x, 1.5, 0.0, a).sum(), lambda a: js.gamma.cdf(x, 1.5, 0.0, a).sum())):
        assert_close(qb.grad(q)(qb.array(2.5)), jax.grad(j)(2.5), 1e-9, 1e-11)


def test_discrete():
    k = np.array([-1.0, 0.0, 1.0, 2.0, 2.5, 5.0])
    for f in ("logpmf", "pmf", "cdf"):
        assert_close(getattr(S.poisson, f)(qb.array(k), 2.3), getattr(js.poisson, f)(k, 2.3), 1e-10, 1e-12, what=f)
        assert_close(getattr(S.poisson, f)(qb.array(k), 2.3, 1.0), getattr(js.poisson, f)(k, 2.3, 1.0), 1e-10, 1e-12, what=f)
        assert_close(getattr(S.bernoulli, f)(qb.array(k), 0.3), getattr(js.bernoulli, f)(k, 0.3), 1e-12, 1e-12, what=f)
    p = np.array([0.0, 0.5, 0.7, 0.71, 1.0])
    assert_close(S.bernoulli.ppf(qb.array(p), 0.3), js.bernoulli.ppf(p, 0.3))
    assert_close(qb.grad(lambda m: S.poisson.logpmf(qb.array(k), m).sum())(qb.array(2.3)), jax.grad(lambda m: js.poisson.logpmf(k, m).sum())(2.3), 1e-12, 1e-12)


def test_multivariate_normal():
    mean, cov = np.array([1.0, -1.0]), np.array([[2.0, 0.3], [0.3, 1.0]])
    x = np.random.default_rng(0).normal(size=(4, 2))
    assert_close(S.multivariate_normal.logpdf(qb.array(x), qb.array(mean), qb.array(cov)), js.multivariate_normal.logpdf(x, mean, cov), 1e-12, 1e-12)
    assert_close(S.multivariate_normal.pdf(qb.array(x[0]), qb.array(mean), qb.array(cov)), js.multivariate_normal.pdf(x[0], mean, cov), 1e-12, 1e-12)
    assert_close(S.multivariate_normal.logpdf(qb.array(0.3), 0.1, 2.0), js.multivariate_normal.logpdf(0.3, 0.1, 2.0), 1e-12, 1e-12)
    g = qb.grad(lambda c: S.multivariate_normal.logpdf(qb.array(x), qb.array(mean), c).sum())(qb.array(cov))
    gj = jax.grad(lambda c: js.multivariate_normal.logpdf(x, mean, c).sum())(cov)
    assert_close(g, gj, 1e-9, 1e-11)
    with pytest.raises(qb.ShapeError, match="multivariate_normal.logpdf"):
        S.multivariate_normal.logpdf(qb.ones((4, 3)), qb.ones(2), qb.array(cov))
