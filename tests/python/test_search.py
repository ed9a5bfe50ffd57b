"""Searching and counting (qb.searchsorted, digitize, bincount, histogram, interp) against
jax.numpy (x64; histogram against NumPy): sides, duplicates, values outside, decreasing bins, weights, densities,
periods, jit with static lengths, gradients, and typed errors."""

import numpy as np
import pytest

import quabla as qb

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

RNG = np.random.default_rng(9)


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("n", [1, 2, 7, 64, 1000])
def test_searchsorted(side, n):
    a = np.sort(np.round(RNG.standard_normal(n), 1))  # duplicates
    v = np.concatenate([np.round(RNG.standard_normal((5, 7)), 1).ravel(), a[:3], [-9.0, 9.0]])
    want = jnp.searchsorted(a, v, side=side)
    np.testing.assert_array_equal(np.asarray(qb.searchsorted(a, v, side=side)), np.asarray(want))
    np.testing.assert_array_equal(np.asarray(qb.jit(lambda a, v: qb.searchsorted(a, v, side=side))(a, v)), np.asarray(want))
    order = RNG.permutation(n)
    np.testing.assert_array_equal(np.asarray(qb.searchsorted(a[order], v, side=side, sorter=np.argsort(a[order], kind="stable"))), np.asarray(want))


@pytest.mark.parametrize("right", [False, True])
def test_digitize(right):
    x = np.round(RNG.standard_normal(50), 1)
    for bins in [np.array([-1.0, 0.0, 0.5, 2.0]), np.array([2.0, 0.5, 0.0, -1.0])]:
        np.testing.assert_array_equal(np.asarray(qb.digitize(x, bins, right=right)), np.asarray(jnp.digitize(x, bins, right=right)))


def test_bincount():
    x = np.array([0, 1, 1, -1, 5, 3, 3, 3])
    for kw in [dict(), dict(minlength=9), dict(length=4)]:
        np.testing.assert_array_equal(np.asarray(qb.bincount(x, **kw)), np.asarray(jnp.bincount(x, **kw)))
    w = RNG.standard_normal(8)
    np.testing.assert_allclose(np.asarray(qb.bincount(x, w, length=6)), np.asarray(jnp.bincount(x, w, length=6)), rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(qb.jit(lambda x: qb.bincount(x, length=7))(x)), np.asarray(jnp.bincount(x, length=7)))
    g = qb.grad(lambda w: (qb.bincount(x, w, length=6) ** 2).sum())(w)
    gj = jax.grad(lambda w: (jnp.bincount(x, w, length=6) ** 2).sum())(w)
    np.testing.assert_allclose(np.asarray(g), np.asarray(gj), rtol=1e-12)


def test_histogram():
    a = np.concatenate([RNG.standard_normal(200), [0.0, 1.0, -5.0, 5.0]])
    w = RNG.uniform(size=a.size)
    for kw in [dict(bins=10), dict(bins=4, range=(0.0, 1.0)), dict(bins=np.array([-1.0, 0.0, 0.3, 2.0])), dict(bins=7, weights=w), dict(bins=5, range=(-2.0, 2.0), density=True)]:
        # Against NumPy: jnp.histogram's edges of range None differ from NumPy's in an ulp
        # (a value on an edge changes bins); Quabla's are NumPy's linspace.
        c, e = qb.histogram(a, **kw)
        cj, ej = np.histogram(a, **kw)
        np.testing.assert_allclose(np.asarray(c), np.asarray(cj), rtol=1e-12, err_msg=str(kw))
        np.testing.assert_allclose(np.asarray(e), np.asarray(ej), rtol=1e-12, err_msg=str(kw))
    c = qb.jit(lambda a: qb.histogram(a, bins=6, range=(-1.0, 1.0))[0])(a)
    np.testing.assert_allclose(np.asarray(c), np.asarray(jnp.histogram(a, bins=6, range=(-1.0, 1.0))[0]))


def test_interp():
    xp = np.sort(RNG.uniform(-2, 2, 12))
    fp = RNG.standard_normal(12)
    x = np.concatenate([RNG.uniform(-3, 3, 40), xp[:4], [-3.0, 3.0]])
    for kw in [dict(), dict(left=-7.0, right=7.0), dict(period=1.5)]:
        np.testing.assert_allclose(np.asarray(qb.interp(x, xp, fp, **kw)), np.asarray(jnp.interp(x, xp, fp, **kw)), rtol=1e-12, atol=1e-12, err_msg=str(kw))
    g = qb.grad(lambda x: qb.interp(x, xp, fp).sum())(x[:40])
    gj = jax.grad(lambda x: jnp.interp(x, xp, fp).sum())(x[:40])
    np.testing.assert_allclose(np.asarray(g), np.asarray(gj), rtol=1e-10, atol=1e-10)
    gf = qb.grad(lambda fp: (qb.interp(x, xp, fp) ** 2).sum())(fp)
    gfj = jax.grad(lambda fp: (jnp.interp(x, xp, fp) ** 2).sum())(fp)
    np.testing.assert_allclose(np.asarray(gf), np.asarray(gfj), rtol=1e-10, atol=1e-10)


def test_errors():
    with pytest.raises(qb.ShapeError, match="searchsorted"):
        qb.searchsorted(np.ones((2, 2)), 1.0)
    with pytest.raises(qb.ShapeError, match="side"):
        qb.searchsorted(np.ones(3), 1.0, side="middle")
    with pytest.raises(qb.DTypeError, match="bincount"):
        qb.bincount(np.ones(3))
    with pytest.raises(qb.TracerError, match="length"):
        qb.jit(lambda x: qb.bincount(x))(np.array([1, 2]))
    with pytest.raises(qb.TracerError, match="range"):
        qb.jit(lambda a: qb.histogram(a)[0])(np.ones(3))
    with pytest.raises(qb.ShapeError, match="interp"):
        qb.interp(1.0, np.ones(3), np.ones(2))


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "nearest", "midpoint"])
def test_quantile(method):
    a = RNG.standard_normal((7, 9, 5))
    a[3, 2, 1] = np.nan  # its column's quantiles are NaN
    for axis in [None, 0, 1, 2]:
        for q in [0.37, np.array([0.0, 0.25, 0.5, 1.0])]:
            for keepdims in [False, True]:
                got = qb.quantile(a, q, axis=axis, method=method, keepdims=keepdims)
                want = jnp.quantile(a, q, axis=axis, method=method, keepdims=keepdims)
                np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12, atol=1e-12, err_msg=str((axis, q, keepdims)))
    jitted = qb.jit(lambda a: qb.quantile(a, np.array([0.1, 0.9]), axis=1, method=method))(a)
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(jnp.quantile(a, jnp.array([0.1, 0.9]), axis=1, method=method)), rtol=1e-12, atol=1e-12)


def test_median_percentile_and_gradients():
    a = RNG.standard_normal((6, 11))
    np.testing.assert_allclose(np.asarray(qb.median(a, axis=1)), np.asarray(jnp.median(a, axis=1)), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(qb.median(a)), np.asarray(jnp.median(a)), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(qb.percentile(a, [10.0, 90.0], axis=0)), np.asarray(jnp.percentile(a, jnp.array([10.0, 90.0]), axis=0)), rtol=1e-12)
    g = qb.grad(lambda a: (qb.quantile(a, 0.3, axis=1) ** 2).sum())(a)
    gj = jax.grad(lambda a: (jnp.quantile(a, 0.3, axis=1) ** 2).sum())(a)
    np.testing.assert_allclose(np.asarray(g), np.asarray(gj), rtol=1e-10, atol=1e-12)
    with pytest.raises(qb.errors.InvalidArgumentError, match="quantile"):  # JAX: a ValueError (not a shape error)
        qb.quantile(a, 0.5, method="cubic")
