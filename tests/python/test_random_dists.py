"""qb.random's further distributions against jax.random (the installed JAX, x64, threefry
partitionable): the same key gives JAX's samples (bitwise for the integer-valued ones and
float64 gamma; otherwise within a few ulps, up to the rounding of log/log1p/pow, which differ
from XLA's by a few ulps); eigh/svd multivariate normals (eigenvector signs differ from LAPACK's)
are checked by their moments; samplers work under jit, vmap over keys and grad where JAX
defines it, and bad arguments raise typed errors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats as st

import quabla as qb

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platform_name", "cpu")


def _p(d, v):
    return np.asarray(v, d)


# name -> (sampler taking (module, key, dtype), tolerance in eps of max(1, |jax value|))
CASES = {
    "laplace": (lambda m, k, d: m.laplace(k, (400,), d), 64),
    "logistic": (lambda m, k, d: m.logistic(k, (400,), d), 64),
    "cauchy": (lambda m, k, d: m.cauchy(k, (400,), d), 64),
    "rademacher": (lambda m, k, d: m.rademacher(k, (400,), "int32" if d == "float32" else None), 0),
    "lognormal": (lambda m, k, d: m.lognormal(k, 0.7, (400,), d), 16),
    "rayleigh": (lambda m, k, d: m.rayleigh(k, _p(d, [1.0, 2.5]), (200, 2), d), 16),
    "weibull_min": (lambda m, k, d: m.weibull_min(k, 1.5, 2.3, (400,), d), 128),
    "pareto": (lambda m, k, d: m.pareto(k, 3.0, (400,), d), 64),
    "maxwell": (lambda m, k, d: m.maxwell(k, (400,), d), 16),
    "double_sided_maxwell": (lambda m, k, d: m.double_sided_maxwell(k, 1.0, 2.0, (400,), d), 16),
    "triangular": (lambda m, k, d: m.triangular(k, 0.0, _p(d, [0.3, 1.0]), 2.0, (200, 2), d), 16),
    "wald": (lambda m, k, d: m.wald(k, 1.5, (400,), d), 64),
    "geometric": (lambda m, k, d: m.geometric(k, _p(d, [0.2, 0.9]), (200, 2)), 0),
    "gamma": (lambda m, k, d: m.gamma(k, _p(d, [0.2, 1.0, 3.0, 50.0]), (100, 4), d), 16),
    "loggamma": (lambda m, k, d: m.loggamma(k, _p(d, [0.2, 1.0, 3.0, 50.0]), (100, 4), d), 512),
    "beta": (lambda m, k, d: m.beta(k, 0.5, _p(d, [2.0, 0.3]), (200, 2), d), 64),
    "dirichlet": (lambda m, k, d: m.dirichlet(k, _p(d, [0.5, 1.0, 3.0]), (100,), d), 64),
    "chisquare": (lambda m, k, d: m.chisquare(k, 3.0, (300,), d), 16),
    "f": (lambda m, k, d: m.f(k, 3.0, 7.0, (300,), d), 16),
    "t": (lambda m, k, d: m.t(k, 4.0, (300,), d), 16),
    "generalized_normal": (lambda m, k, d: m.generalized_normal(k, 1.5, (300,), d), 16),
    "ball": (lambda m, k, d: m.ball(k, 3, 1.5, (100,), d), 64),
    "poisson": (lambda m, k, d: m.poisson(k, _p(d, [0.5, 3.0, 9.9, 10.0, 40.0, 1000.0]), (100, 6)), 0),
    "binomial": (lambda m, k, d: m.binomial(k, _p(d, [5.0, 30.0, 100.0, 1000.0]), _p(d, [0.3, 0.1, 0.7, 0.5]), (100, 4), d), 0),
    "multinomial": (lambda m, k, d: m.multinomial(k, _p(d, 50.0), _p(d, [0.2, 0.3, 0.5]), shape=(100, 3), dtype=d), 0),
    "multivariate_normal": (lambda m, k, d: m.multivariate_normal(k, _p(d, [1.0, 2.0]), _p(d, [[2.0, 0.5], [0.5, 1.0]]), (200,), d), 16),
    "orthogonal": (lambda m, k, d: m.orthogonal(k, 4, (3,), d), 16),
    "orthogonal_wide": (lambda m, k, d: m.orthogonal(k, 3, (), d, m=5), 16),
}


def close_to_jax(q, j, tol_eps, dtype):
    q, j = np.asarray(q), np.asarray(j)
    assert q.shape == j.shape and q.dtype == j.dtype, (q.shape, j.shape, q.dtype, j.dtype)
    if tol_eps == 0 or not np.issubdtype(j.dtype, np.floating):
        np.testing.assert_array_equal(q, j)
        return
    err = np.abs(q.astype(np.float64) - j.astype(np.float64)) / np.maximum(1.0, np.abs(j.astype(np.float64)))
    assert np.isnan(q).sum() == 0 and np.isnan(j).sum() == 0
    assert err.max() <= tol_eps * np.finfo(dtype).eps, (err.max() / np.finfo(dtype).eps, tol_eps)


# float32 for the cheap transforms and the gamma/binomial cores; the composites built on
# gamma (and the samplers whose dtype is not a float dtype) in float64 only, to keep this fast.
F64_ONLY = {"rademacher", "geometric", "poisson", "multinomial", "dirichlet", "chisquare", "f", "t", "generalized_normal", "ball", "orthogonal_wide"}


@pytest.mark.parametrize("name,dtype", [(n, d) for n in CASES for d in ("float64", "float32") if d == "float64" or n not in F64_ONLY])
def test_samples_equal_jax(name, dtype):
    fn, tol = CASES[name]
    close_to_jax(fn(qb.random, qb.random.key(5), dtype), fn(jax.random, jax.random.PRNGKey(5), dtype), tol, dtype)


def test_gamma_float64_is_bitwise_equal_over_seeds():
    # The rejection decisions depend on every rounding: c = (1/3) * rsqrt(d) and v = fma(x, c, 1)
    # as XLA computes them give JAX's bits exactly.
    for seed in (0, 1, 2**40 + 3):
        a = np.array([0.05, 0.7, 1.0, 1.3, 7.0, 1e4])
        q = qb.random.gamma(qb.random.key(seed), a, (150, 6))
        np.testing.assert_array_equal(np.asarray(q), np.asarray(jax.random.gamma(jax.random.PRNGKey(seed), a, (150, 6))))


def test_scalar_shapes_and_defaults_match_jax():
    k, jk = qb.random.key(3), jax.random.PRNGKey(3)
    for q, j in (
        (qb.random.gamma(k, 2.0), jax.random.gamma(jk, 2.0)),
        (qb.random.poisson(k, 4.0), jax.random.poisson(jk, 4.0)),
        (qb.random.laplace(k), jax.random.laplace(jk)),
        (qb.random.double_sided_maxwell(k, np.array([0.0, 1.0]), 1.0), jax.random.double_sided_maxwell(jk, np.array([0.0, 1.0]), 1.0)),
        (qb.random.geometric(k, np.float32(0.3), (4,), "int32"), jax.random.geometric(jk, np.float32(0.3), (4,), "int32")),
    ):
        assert np.asarray(q).shape == np.asarray(j).shape and np.asarray(q).dtype == np.asarray(j).dtype
        np.testing.assert_allclose(np.asarray(q), np.asarray(j), rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(qb.random.clone(k)), np.asarray(jax.random.clone(jk)))
    assert qb.random.key_impl(k) == str(jax.random.key_impl(jax.random.key(3)))


def test_jit_equals_eager():
    k = qb.random.key(9)
    for f in (
        lambda k: qb.random.gamma(k, qb.array([0.5, 3.0]), (4, 2)),
        lambda k: qb.random.poisson(k, qb.array([2.0, 30.0]), (3, 2)),
        lambda k: qb.random.binomial(k, 40.0, 0.4, (5,)),
        lambda k: qb.random.t(k, 3.0, (4,)),
        lambda k: qb.random.orthogonal(k, 3),
        lambda k: qb.random.laplace(k, (3,), "float32"),
    ):
        np.testing.assert_array_equal(np.asarray(qb.jit(f)(k)), np.asarray(f(k)))


def test_vmap_over_keys_matches_jax():
    ks, jks = qb.random.split(qb.random.key(13), 4), jax.random.split(jax.random.PRNGKey(13), 4)
    for qf, jf in (
        (lambda k: qb.random.gamma(k, 2.5, (3,)), lambda k: jax.random.gamma(k, 2.5, (3,))),
        (lambda k: qb.random.poisson(k, 5.0, (3,)), lambda k: jax.random.poisson(k, 5.0, (3,))),
        (lambda k: qb.random.cauchy(k, (3,)), lambda k: jax.random.cauchy(k, (3,))),
    ):
        np.testing.assert_allclose(np.asarray(qb.vmap(qf)(ks)), np.asarray(jax.vmap(jf)(jks)), rtol=1e-14)
        loop = np.stack([np.asarray(qf(ks[i])) for i in range(4)])
        np.testing.assert_array_equal(np.asarray(qb.jit(qb.vmap(qf))(ks)), loop)


def test_gradients_of_reparameterised_samplers_match_jax():
    k, jk = qb.random.key(1), jax.random.PRNGKey(1)
    for qf, jf, x in (
        (lambda s: qb.sum(qb.random.rayleigh(k, s, (5,))), lambda s: jnp.sum(jax.random.rayleigh(jk, s, (5,))), 1.3),
        (lambda s: qb.sum(qb.random.lognormal(k, s, (5,))), lambda s: jnp.sum(jax.random.lognormal(jk, s, (5,))), 0.4),
        (lambda c: qb.sum(qb.random.weibull_min(k, 2.0, c, (5,))), lambda c: jnp.sum(jax.random.weibull_min(jk, 2.0, c, (5,))), 1.7),
        (lambda b: qb.sum(qb.random.pareto(k, b, (5,))), lambda b: jnp.sum(jax.random.pareto(jk, b, (5,))), 2.5),
        (lambda m: qb.sum(qb.random.wald(k, m, (5,))), lambda m: jnp.sum(jax.random.wald(jk, m, (5,))), 1.2),
        (lambda r: qb.sum(qb.random.triangular(k, 0.0, 0.4, r, (5,))), lambda r: jnp.sum(jax.random.triangular(jk, 0.0, 0.4, r, (5,))), 2.0),
        (lambda th: qb.sum(th * qb.random.gamma(k, 2.0, (5,))), lambda th: jnp.sum(th * jax.random.gamma(jk, 2.0, (5,))), 0.5),
    ):
        np.testing.assert_allclose(float(qb.grad(qf)(x)), float(jax.grad(jf)(x)), rtol=1e-10)
    mean = np.array([1.0, -1.0])
    cov = np.array([[2.0, 0.3], [0.3, 1.0]])
    g = qb.grad(lambda c: qb.sum(qb.random.multivariate_normal(k, mean, c, (4,)) ** 2))(cov)
    jg = jax.grad(lambda c: jnp.sum(jax.random.multivariate_normal(jk, mean, c, (4,)) ** 2))(cov)
    np.testing.assert_allclose(np.asarray(g), np.asarray(jg), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_gamma_family_gradients_in_their_shape_parameters_match_jax(dt):
    # JAX's implicit reparameterisation: d x / d a = -(dP/da) / (dP/dx), in both modes.
    from jax import lax

    k, jk = qb.random.key(3), jax.random.PRNGKey(3)
    tol = 1e-9 if dt == np.float64 else 2e-4
    a = np.array([0.05, 0.3, 1.0, 2.5, 40.0, 700.0], dt)
    x = np.array([1e-3, 0.05, 3.0, 2.0, 45.0, 690.0], dt)
    np.testing.assert_allclose(np.asarray(qb.random.random_gamma_grad(qb.array(a), qb.array(x))), np.asarray(lax.random_gamma_grad(a, x)), rtol=tol)
    for qf, jf, p in (
        (lambda a: qb.sum(qb.random.gamma(k, a, (6,), dtype=dt)), lambda a: jnp.sum(jax.random.gamma(jk, a, (6,), dtype=dt)), 0.7),
        (lambda a: qb.sum(qb.random.gamma(k, a, (6,), dtype=dt)), lambda a: jnp.sum(jax.random.gamma(jk, a, (6,), dtype=dt)), 3.0),
        (lambda a: qb.sum(qb.random.loggamma(k, a, (6,), dtype=dt)), lambda a: jnp.sum(jax.random.loggamma(jk, a, (6,), dtype=dt)), 0.2),
        (lambda a: qb.sum(qb.random.beta(k, a, 2.0, (6,), dtype=dt)), lambda a: jnp.sum(jax.random.beta(jk, a, 2.0, (6,), dtype=dt)), 1.5),
        (lambda d: qb.sum(qb.random.chisquare(k, d, (6,), dtype=dt)), lambda d: jnp.sum(jax.random.chisquare(jk, d, (6,), dtype=dt)), 3.0),
        (lambda d: qb.sum(qb.random.t(k, d, (6,), dtype=dt)), lambda d: jnp.sum(jax.random.t(jk, d, (6,), dtype=dt)), 4.0),
    ):
        p = dt(p)
        np.testing.assert_allclose(float(qb.grad(qf)(qb.array(p))), float(jax.grad(jf)(p)), rtol=tol)
        np.testing.assert_allclose(float(qb.jvp(qf, (qb.array(p),), (qb.array(dt(1.0)),))[1]), float(jax.jvp(jf, (p,), (dt(1.0),))[1]), rtol=tol)
    al = np.array([1.5, 2.0, 0.7], dt)
    got = qb.jit(qb.grad(lambda a: qb.random.dirichlet(k, a, (2,), dtype=dt)[:, 0].sum()))(qb.array(al))
    want = jax.grad(lambda a: jax.random.dirichlet(jk, a, (2,), dtype=dt)[:, 0].sum())(al)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol, atol=tol)


def test_eigh_and_svd_multivariate_normals_have_the_right_law():
    cov = np.array([[2.0, 0.6, 0.0], [0.6, 1.0, 0.2], [0.0, 0.2, 0.5]])
    mean = np.array([1.0, -2.0, 0.5])
    for method in ("eigh", "svd", "cholesky"):
        x = np.asarray(qb.random.multivariate_normal(qb.random.key(4), mean, cov, (40_000,), method=method))
        np.testing.assert_allclose(x.mean(0), mean, atol=0.03)
        np.testing.assert_allclose(np.cov(x.T), cov, atol=0.05)
        # Each whitened coordinate is standard normal.
        z = np.linalg.solve(np.linalg.cholesky(cov), (x - mean).T).T
        for i in range(3):
            assert st.kstest(z[:, i], st.norm.cdf).pvalue > 1e-4


def test_laws_against_scipy():
    ks = qb.random.split(qb.random.key(2024), 4)
    n = 50_000
    for x, d in (
        (qb.random.gamma(ks[0], 0.4, (n,)), st.gamma(0.4)),
        (qb.random.beta(ks[1], 2.0, 0.7, (n,)), st.beta(2.0, 0.7)),
        (qb.random.t(ks[2], 5.0, (n,)), st.t(5.0)),
    ):
        assert st.kstest(np.asarray(x), d.cdf).pvalue > 1e-4
    c = np.asarray(qb.random.poisson(ks[3], 3.5, (n,)))
    counts = np.bincount(c, minlength=20)[:12]
    exp = n * st.poisson(3.5).pmf(np.arange(12))
    assert st.chisquare(counts, exp * counts.sum() / exp.sum()).pvalue > 1e-4


def test_bad_arguments_raise_typed_errors():
    k = qb.random.key(0)
    with pytest.raises(qb.ShapeError, match="gamma: expected a single key"):
        qb.random.gamma(qb.random.split(k, 3), 1.0)
    with pytest.raises(qb.DTypeError, match="laplace: dtype must be a float dtype"):
        qb.random.laplace(k, (2,), "int32")
    with pytest.raises(qb.DTypeError, match="poisson: dtype must be an integer dtype"):
        qb.random.poisson(k, 2.0, (2,), "float32")
    with pytest.raises(qb.ShapeError, match=r"pareto: parameter shapes \(3,\)"):
        qb.random.pareto(k, np.ones(3), (2,))
    with pytest.raises(qb.DTypeError, match="t: cannot safely cast df of dtype float64 to the sample dtype float32"):
        qb.random.t(k, np.ones(2), (2,), "float32")
    with pytest.raises(qb.ShapeError, match="dirichlet: alpha must have at least one dimension"):
        qb.random.dirichlet(k, 1.0)
    with pytest.raises(qb.ShapeError, match=r"multivariate_normal: cov must have shape \(\.\.\., 2, 2\)"):
        qb.random.multivariate_normal(k, np.zeros(2), np.eye(3))
    with pytest.raises(qb.InvalidArgumentError, match="method must be"):
        qb.random.multivariate_normal(k, np.zeros(2), np.eye(2), method="qr")
    with pytest.raises(qb.ArgumentTypeError, match="orthogonal: n must be an int"):
        qb.random.orthogonal(k, 2.5)
    with pytest.raises(qb.TracerError, match="generalized_normal: p must be a concrete number"):
        qb.jit(lambda p: qb.random.generalized_normal(k, p, (2,)))(qb.array(2.0))
    with pytest.raises(qb.InvalidArgumentError, match="generalized_normal: p must be positive"):
        qb.random.generalized_normal(k, -1.0)
    with pytest.raises(qb.ArgumentTypeError, match="ball: the dimension d must be a Python int"):
        qb.random.ball(k, 2.0)
    with pytest.raises(qb.DTypeError, match="rademacher: dtype must be a signed integer or float dtype"):
        qb.random.rademacher(k, (2,), "uint8")
    with pytest.raises(qb.ShapeError, match="multinomial: p must have at least one dimension"):
        qb.random.multinomial(k, 5.0, 0.5)
