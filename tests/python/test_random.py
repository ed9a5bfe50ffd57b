"""qb.random against jax.random (the installed JAX 0.10.2, x64, threefry partitionable): the
same seeds give bitwise-equal keys, splits, fold_ins, bits, uniforms, integers, permutations,
choices and categoricals; normal samples agree to 1 ulp (the CPU's erf_inv kernel is XLA's,
operation for operation, so they are bitwise equal but for rare 1-ulp differences of the f32
log); every distribution passes moment and
chi-square tests (SciPy's distributions as the oracle); samplers work under jit, vmap with
per-example keys and grad, and bad keys/dtypes raise typed errors."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats as st

import quabla as qb

jax.config.update("jax_enable_x64", True)

SEEDS = [0, 1, 42, -1, 2**32 + 7, 2**63 - 1, -(2**63), 123456789]
SHAPES = [(), (1,), (7,), (3, 4), (2, 3, 5)]


def same(q, j):
    q, j = np.asarray(q), np.asarray(j)
    assert q.shape == j.shape, (q.shape, j.shape)
    assert q.dtype == j.dtype, (q.dtype, j.dtype)
    np.testing.assert_array_equal(q, j)


@pytest.mark.parametrize("seed", SEEDS)
def test_keys_equal_prngkey(seed):
    same(qb.random.key(seed), jax.random.PRNGKey(seed))
    same(qb.random.PRNGKey(seed), jax.random.key_data(jax.random.key(seed)))


def test_traced_seeds_match():
    for seed in (5, -3, 2**40 + 1):
        same(qb.jit(qb.random.key)(qb.asarray(seed)), jax.random.PRNGKey(seed))
    same(qb.random.key(qb.asarray(np.int32(-3))), jax.random.PRNGKey(np.int32(-3)))


@pytest.mark.parametrize("num", [2, 5, (2, 3)])
def test_split_and_fold_in_are_bitwise_equal(num):
    k, jk = qb.random.key(7), jax.random.PRNGKey(7)
    same(qb.random.split(k, num), jax.random.split(jk, num))
    # Nested splits and fold_in chains.
    k2, jk2 = qb.random.split(k)[1], jax.random.split(jk)[1]
    for d in (0, 1, 2**32 - 1, 12345):
        same(qb.random.fold_in(k2, d), jax.random.fold_in(jk2, d))
        k2, jk2 = qb.random.fold_in(k2, d), jax.random.fold_in(jk2, d)
    same(qb.random.split(k2, 3), jax.random.split(jk2, 3))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["uint32", "uint8"])
def test_bits_are_bitwise_equal(shape, dtype):
    for seed in (0, 99):
        same(qb.random.bits(qb.random.key(seed), shape, dtype), jax.random.bits(jax.random.PRNGKey(seed), shape, dtype))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_uniform_is_bitwise_equal(shape, dtype):
    k, jk = qb.random.key(11), jax.random.PRNGKey(11)
    same(qb.random.uniform(k, shape, dtype), jax.random.uniform(jk, shape, dtype))
    same(qb.random.uniform(k, shape, dtype, -2.5, 3.3), jax.random.uniform(jk, shape, dtype, -2.5, 3.3))
    if shape:
        lo = np.linspace(-3, 1, shape[-1])
        same(qb.random.uniform(k, shape, dtype, lo, 7.25), jax.random.uniform(jk, shape, dtype, lo, 7.25))


def test_uniform_of_split_keys_is_bitwise_equal():
    ks, jks = qb.random.split(qb.random.key(3), 4), jax.random.split(jax.random.PRNGKey(3), 4)
    for i in range(4):
        same(qb.random.uniform(ks[i], (50,)), jax.random.uniform(jks[i], (50,)))
        same(qb.random.uniform(qb.random.fold_in(ks[i], i), (5,), "float32"), jax.random.uniform(jax.random.fold_in(jks[i], i), (5,), "float32"))


def ulp_distance(q, j):
    """|q - j| in units in the last place, through the ordered integer images of the bits."""
    q, j = np.asarray(q), np.asarray(j)
    assert q.dtype == j.dtype and q.shape == j.shape, (q.dtype, j.dtype, q.shape, j.shape)
    it = np.int32 if q.dtype == np.float32 else np.int64
    qi, ji = q.view(it).astype(np.int64), j.view(it).astype(np.int64)
    lo = np.iinfo(it).min
    qi, ji = np.where(qi < 0, lo - qi, qi), np.where(ji < 0, lo - ji, ji)
    return np.abs(qi - ji)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normal_is_within_one_ulp_of_jax(dtype):
    """The erf_inv kernel computes XLA's erf_inv operation for operation: over seeds, shapes,
    split and fold_in keys every sample is within 1 ulp of JAX's (in practice bitwise)."""
    worst, total, equal = 0, 0, 0
    keys = [(qb.random.key(s), jax.random.PRNGKey(s)) for s in SEEDS]
    k, jk = qb.random.split(qb.random.key(3), 3), jax.random.split(jax.random.PRNGKey(3), 3)
    keys += [(k[i], jk[i]) for i in range(3)]
    keys += [(qb.random.fold_in(k[1], 77), jax.random.fold_in(jk[1], 77))]
    for i, (qk, jkk) in enumerate(keys):
        for shape in SHAPES + [(20_000,)] * (i < 3):
            d = ulp_distance(qb.random.normal(qk, shape, dtype), jax.random.normal(jkk, shape, dtype))
            worst, total, equal = max(worst, int(d.max(initial=0))), total + d.size, equal + int((d == 0).sum())
    assert worst <= 1, worst
    assert equal / total > 0.999, equal / total


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_erfinv_matches_xla_on_a_dense_grid(dtype):
    """qb.scipy.special.erfinv against jax.scipy.special.erfinv over (-1, 1), the tails near
    +-1 (where the branches change) and the specials."""
    one = np.array(1, dtype)
    tail = 1 - np.logspace(-7 if dtype == "float32" else -15, -1, 5000).astype(dtype)
    x = np.concatenate([np.linspace(-1, 1, 20001, dtype=dtype), tail, -tail, np.nextafter(-one, 0)[None], [0.0, -0.0, 1.0, -1.0, 1.5, np.nan]]).astype(dtype)
    q = np.asarray(qb.jit(qb.scipy.special.erfinv)(qb.asarray(x)))
    j = np.asarray(jax.jit(jax.scipy.special.erfinv)(x))
    d = ulp_distance(np.nan_to_num(q, nan=7.0), np.nan_to_num(j, nan=7.0))
    assert d.max() <= 1, (d.max(), x[d.argmax()])
    assert (d == 0).mean() > 0.999


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint32", "uint8"])
def test_randint_is_bitwise_equal(dtype):
    k, jk = qb.random.key(21), jax.random.PRNGKey(21)
    info = np.iinfo(dtype)
    top = int(info.max) + (1 if info.bits < 64 else 0)  # JAX takes int64 bounds
    for lo, hi in ((0, 10), (-5, 17) if info.min < 0 else (3, 17), (int(info.min), top), (5, 5)):
        same(qb.random.randint(k, (300,), lo, hi, dtype), jax.random.randint(jk, (300,), lo, hi, dtype))
    same(qb.random.randint(k, (2, 3), np.array([0, 10, 20]), 40, dtype), jax.random.randint(jk, (2, 3), np.array([0, 10, 20]), 40, dtype))
    same(qb.random.randint(k, (4,), 0, 10), jax.random.randint(jk, (4,), 0, 10))


def test_randint_int64_static_spans_below_2_16_are_bitwise_equal():
    # Bounds known at trace time with a span below 2**16 take the uint32 arithmetic
    # (random._small_span); the span 2**16 and traced bounds the 64-bit one: JAX's values
    # either way.
    k, jk = qb.random.key(9), jax.random.PRNGKey(9)
    for lo, hi in ((0, 2**16 - 1), (-7, 2**16 - 8), (0, 2**16), (2**62, 2**62 + 3), (np.int32(3), np.int64(90)), (-1, 0)):
        same(qb.random.randint(k, (2000,), lo, hi), jax.random.randint(jk, (2000,), lo, hi))
        same(qb.jit(lambda k: qb.random.randint(k, (5, 7), lo, hi))(k), jax.random.randint(jk, (5, 7), lo, hi))
    same(qb.jit(lambda k, lo, hi: qb.random.randint(k, (50,), lo, hi))(k, np.int64(-3), np.int64(40)), jax.random.randint(jk, (50,), -3, 40))


def test_randint_int64_wide_spans_are_bitwise_equal():
    k, jk = qb.random.key(4), jax.random.PRNGKey(4)
    for lo, hi in ((-(2**40), 2**41), (0, 2**62 + 12345), (-(2**62), 2**62)):
        same(qb.random.randint(k, (500,), lo, hi), jax.random.randint(jk, (500,), lo, hi))


def test_permutation_choice_categorical_bernoulli_are_bitwise_equal():
    k, jk = qb.random.key(8), jax.random.PRNGKey(8)
    for n in (1, 10, 2000):
        same(qb.random.permutation(k, n), jax.random.permutation(jk, n))
    x = np.arange(24.0).reshape(4, 6)
    same(qb.random.permutation(k, x), jax.random.permutation(jk, x))
    same(qb.random.permutation(k, x, axis=1), jax.random.permutation(jk, x, axis=1))
    same(qb.random.permutation(k, x, axis=1, independent=True), jax.random.permutation(jk, x, axis=1, independent=True))
    same(qb.random.choice(k, 7, (5,)), jax.random.choice(jk, 7, (5,)))
    same(qb.random.choice(k, 7, (2, 3), replace=False), jax.random.choice(jk, 7, (2, 3), replace=False))
    same(qb.random.choice(k, x, (3,), axis=1), jax.random.choice(jk, x, (3,), axis=1))
    p = np.array([0.1, 0.2, 0.3, 0.4])
    same(qb.random.choice(k, 4, (60,), p=p), jax.random.choice(jk, 4, (60,), p=p))
    same(qb.random.choice(k, 4, (3,), replace=False, p=p), jax.random.choice(jk, 4, (3,), replace=False, p=p))
    lg = np.log(np.array([[0.1, 0.6, 0.3], [0.5, 0.25, 0.25]]))
    same(qb.random.categorical(k, lg), jax.random.categorical(jk, lg))
    same(qb.random.categorical(k, lg, axis=0), jax.random.categorical(jk, lg, axis=0))
    same(qb.random.categorical(k, lg, shape=(5, 2)), jax.random.categorical(jk, lg, shape=(5, 2)))
    same(qb.random.categorical(k, lg, shape=(2, 2), replace=False), jax.random.categorical(jk, lg, shape=(2, 2), replace=False))
    for pr in (0.3, np.array([0.1, 0.9, 0.5])):
        same(qb.random.bernoulli(k, pr, (1000, 3) if np.ndim(pr) else (1000,)), jax.random.bernoulli(jk, pr, (1000, 3) if np.ndim(pr) else (1000,)))
    same(qb.random.bernoulli(k, 0.3, (50,), mode="high"), jax.random.bernoulli(jk, 0.3, (50,), mode="high"))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_log_based_samplers_agree_to_rounding(dtype):
    k, jk = qb.random.key(2), jax.random.PRNGKey(2)
    tol = 1e-5 if dtype == "float32" else 1e-13
    for qf, jf in ((qb.random.exponential, jax.random.exponential), (qb.random.gumbel, jax.random.gumbel)):
        q, j = np.asarray(qf(k, (3000,), dtype)), np.asarray(jf(jk, (3000,), dtype))
        assert q.dtype == j.dtype
        np.testing.assert_allclose(q, j, rtol=tol, atol=tol)
    q, j = qb.random.gumbel(k, (500,), dtype, mode="high"), jax.random.gumbel(jk, (500,), dtype, mode="high")
    np.testing.assert_allclose(np.asarray(q), np.asarray(j), rtol=tol, atol=tol)
    q = np.asarray(qb.random.truncated_normal(k, -1.0, 2.0, (3000,), dtype))
    j = np.asarray(jax.random.truncated_normal(jk, -1.0, 2.0, (3000,), dtype))
    np.testing.assert_allclose(q, j, rtol=10 * tol, atol=10 * tol)
    assert q.min() > -1 and q.max() < 2


# ---------------------------------------------------------------------------------------------
# Statistics (SciPy's distributions as the oracle; n large enough that a 5-sigma bound holds)

N = 200_000


def moments_ok(x, mean, var, name):
    x = np.asarray(x, np.float64)
    se = math.sqrt(var / x.size)
    assert abs(x.mean() - mean) < 5 * se, (name, x.mean(), mean)
    assert abs(x.var() - var) < 0.02 * var + 5 * se, (name, x.var(), var)


def ks_ok(x, cdf, name):
    assert st.kstest(np.asarray(x, np.float64), cdf).pvalue > 1e-4, name


def test_continuous_distributions_have_the_right_moments_and_law():
    k = qb.random.key(2024)
    ks = qb.random.split(k, 6)
    u = qb.random.uniform(ks[0], (N,))
    moments_ok(u, 0.5, 1 / 12, "uniform")
    ks_ok(u, st.uniform.cdf, "uniform")
    z = qb.random.normal(ks[1], (N,))
    moments_ok(z, 0.0, 1.0, "normal")
    ks_ok(z, st.norm.cdf, "normal")
    assert abs(st.skew(np.asarray(z))) < 0.03 and abs(st.kurtosis(np.asarray(z))) < 0.06
    e = qb.random.exponential(ks[2], (N,))
    moments_ok(e, 1.0, 1.0, "exponential")
    ks_ok(e, st.expon.cdf, "exponential")
    g = qb.random.gumbel(ks[3], (N,))
    moments_ok(g, np.euler_gamma, math.pi**2 / 6, "gumbel")
    ks_ok(g, st.gumbel_r.cdf, "gumbel")
    t = qb.random.truncated_normal(ks[4], -0.5, 1.5, (N,))
    d = st.truncnorm(-0.5, 1.5)
    moments_ok(t, d.mean(), d.var(), "truncated_normal")
    ks_ok(t, d.cdf, "truncated_normal")
    z32 = qb.random.normal(ks[5], (N,), "float32")
    ks_ok(z32, st.norm.cdf, "normal f32")


def chi2_ok(counts, probs, name):
    counts = np.asarray(counts, np.float64)
    exp = counts.sum() * np.asarray(probs)
    assert st.chisquare(counts, exp).pvalue > 1e-4, (name, counts, exp)


def test_discrete_distributions_pass_chi_square():
    ks = qb.random.split(qb.random.key(77), 6)
    r = np.asarray(qb.random.randint(ks[0], (N,), 0, 10))
    chi2_ok(np.bincount(r, minlength=10), np.full(10, 0.1), "randint")
    r = np.asarray(qb.random.randint(ks[0], (N,), -3, 4, "int32"))
    chi2_ok(np.bincount(r + 3, minlength=7), np.full(7, 1 / 7), "randint int32")
    b = np.asarray(qb.random.bernoulli(ks[1], 0.3, (N,)))
    chi2_ok([(~b).sum(), b.sum()], [0.7, 0.3], "bernoulli")
    p = np.array([0.1, 0.2, 0.3, 0.4])
    c = np.asarray(qb.random.categorical(ks[2], np.log(p), shape=(N,)))
    chi2_ok(np.bincount(c, minlength=4), p, "categorical")
    c = np.asarray(qb.random.choice(ks[3], 4, (N,), p=p))
    chi2_ok(np.bincount(c, minlength=4), p, "choice p")
    # Permutations: every value lands in every position equally often.
    perms = np.asarray(qb.vmap(lambda kk: qb.random.permutation(kk, 5))(qb.random.split(ks[4], 4000)))
    assert (np.sort(perms, axis=1) == np.arange(5)).all()
    for pos in range(5):
        chi2_ok(np.bincount(perms[:, pos], minlength=5), np.full(5, 0.2), f"permutation position {pos}")
    bits = np.asarray(qb.random.bits(ks[5], (N,), "uint8"))
    chi2_ok(np.bincount(bits, minlength=256), np.full(256, 1 / 256), "bits uint8")


def test_more_distributions_pass_their_tests():
    ks = qb.random.split(qb.random.key(31), 7)
    # choice without replacement: no repeats, every item equally likely in every slot.
    draws = np.asarray(qb.vmap(lambda kk: qb.random.choice(kk, 6, (3,), replace=False))(qb.random.split(ks[0], 6000)))
    assert all(len(set(r)) == 3 for r in draws.tolist())
    for pos in range(3):
        chi2_ok(np.bincount(draws[:, pos], minlength=6), np.full(6, 1 / 6), f"choice replace=False slot {pos}")
    # categorical without replacement: the first draw follows p.
    p = np.array([0.5, 0.3, 0.2])
    c = np.asarray(qb.vmap(lambda kk: qb.random.categorical(kk, np.log(p), shape=(2,), replace=False))(qb.random.split(ks[1], 6000)))
    assert (c[:, 0] != c[:, 1]).all()
    chi2_ok(np.bincount(c[:, 0], minlength=3), p, "categorical replace=False")
    for dtype, hi in (("uint8", 200), ("uint32", 13), ("int64", 9)):
        r = np.asarray(qb.random.randint(ks[2], (N,), 0, hi, dtype)).astype(np.int64)
        chi2_ok(np.bincount(r, minlength=hi), np.full(hi, 1 / hi), f"randint {dtype}")
    u32 = qb.random.uniform(ks[3], (N,), "float32")
    moments_ok(u32, 0.5, 1 / 12, "uniform f32")
    ks_ok(u32, st.uniform.cdf, "uniform f32")
    for name, x, d in (
        ("exponential f32", qb.random.exponential(ks[4], (N,), "float32"), st.expon),
        ("gumbel f32", qb.random.gumbel(ks[5], (N,), "float32"), st.gumbel_r),
        ("truncated_normal f32", qb.random.truncated_normal(ks[6], -2.0, 0.5, (N,), "float32"), st.truncnorm(-2.0, 0.5)),
    ):
        moments_ok(x, d.mean(), d.var(), name)
        ks_ok(x, d.cdf, name)


def test_long_permutations_and_choices_are_bitwise_equal():
    """The sort steps are O(n log n) now: long axes work and still give JAX's bits."""
    k, jk = qb.random.key(12), jax.random.PRNGKey(12)
    same(qb.random.permutation(k, 200_000), jax.random.permutation(jk, 200_000))
    same(qb.random.choice(k, 50_000, (1000,), replace=False), jax.random.choice(jk, 50_000, (1000,), replace=False))


# ---------------------------------------------------------------------------------------------
# Transformations


def test_jit_equals_eager():
    k = qb.random.key(9)
    for f in (
        lambda k: qb.random.normal(k, (4, 5)),
        lambda k: qb.random.uniform(k, (6,), "float32", -1.0, 2.0),
        lambda k: qb.random.randint(k, (7,), -4, 9),
        lambda k: qb.random.split(k, 3),
        lambda k: qb.random.permutation(k, 6),
        lambda k: qb.random.categorical(k, qb.zeros((2, 3))),
    ):
        same(qb.jit(f)(k), f(k))


def test_counters_are_traced_not_constants():
    # The counters are an iota op of the program: evaluated eagerly they entered it as a
    # dense constant of the sample count (4 MB of literal text for 1e6 samples, the first
    # call 2.5x JAX's), also when the key is a constant of the traced function.
    n = 50_000
    f = qb.jit(lambda c: qb.random.uniform(qb.random.key(3), (n,), "float32") + c)
    text = f.lower(np.float32(0)).as_text()
    assert "quabla.iota" in text
    assert len(text) < 100_000, len(text)
    same(f(np.float32(0)), jax.random.uniform(jax.random.PRNGKey(3), (n,), "float32"))


def test_vmap_with_per_example_keys_matches_jax():
    ks, jks = qb.random.split(qb.random.key(13), 6), jax.random.split(jax.random.PRNGKey(13), 6)
    same(qb.vmap(lambda k: qb.random.uniform(k, (3,)))(ks), jax.vmap(lambda k: jax.random.uniform(k, (3,)))(jks))
    same(qb.jit(qb.vmap(lambda k: qb.random.randint(k, (3,), 0, 100)))(ks), jax.vmap(lambda k: jax.random.randint(k, (3,), 0, 100))(jks))
    same(qb.vmap(lambda k: qb.random.split(k))(ks), jax.vmap(lambda k: jax.random.split(k))(jks))
    same(qb.vmap(lambda k, i: qb.random.fold_in(k, i))(ks, qb.arange(6)), jax.vmap(lambda k, i: jax.random.fold_in(k, i))(jks, jnp.arange(6)))
    same(qb.vmap(lambda k: qb.random.permutation(k, 5))(ks), jax.vmap(lambda k: jax.random.permutation(k, 5))(jks))
    q = qb.vmap(lambda k: qb.random.normal(k, (3,)))(ks)
    assert ulp_distance(q, jax.vmap(lambda k: jax.random.normal(k, (3,)))(jks)).max() <= 1
    # vmap over keys equals a loop over them.
    loop = np.stack([np.asarray(qb.random.bits(ks[i], (4,))) for i in range(6)])
    same(qb.vmap(lambda k: qb.random.bits(k, (4,)))(ks), loop)


def test_grad_flows_to_parameters_not_keys():
    k, jk = qb.random.key(1), jax.random.PRNGKey(1)
    g = qb.grad(lambda mu, s: qb.sum((mu + s * qb.random.normal(k, (5,))) ** 2), argnums=(0, 1))(1.5, 0.7)
    jg = jax.grad(lambda mu, s: jnp.sum((mu + s * jax.random.normal(jk, (5,))) ** 2), argnums=(0, 1))(1.5, 0.7)
    np.testing.assert_allclose([float(v) for v in g], [float(v) for v in jg], rtol=1e-12)
    g = qb.grad(lambda a, b: qb.sum(qb.random.uniform(k, (5,), minval=a, maxval=b)), argnums=(0, 1))(-1.0, 2.0)
    jg = jax.grad(lambda a, b: jnp.sum(jax.random.uniform(jk, (5,), minval=a, maxval=b)), argnums=(0, 1))(-1.0, 2.0)
    np.testing.assert_allclose([float(v) for v in g], [float(v) for v in jg], rtol=1e-12)
    # A key passed as an argument next to the differentiated one.
    g = qb.grad(lambda key, mu: qb.sum(mu * qb.random.exponential(key, (4,))), argnums=1)(k, 2.0)
    np.testing.assert_allclose(float(g), float(np.sum(np.asarray(jax.random.exponential(jk, (4,))))), rtol=1e-12)
    g = qb.jit(qb.grad(lambda lg: qb.sum(lg * qb.random.gumbel(k, (3,)))))(qb.zeros((3,)))
    np.testing.assert_allclose(np.asarray(g), np.asarray(jax.random.gumbel(jk, (3,))), rtol=1e-12)


def test_bad_keys_and_dtypes_raise_typed_errors():
    k = qb.random.key(0)
    with pytest.raises(qb.ShapeError, match=r"uniform: expected a single key, a uint32 array of shape \(2,\), got uint32 of shape \(3, 2\)"):
        qb.random.uniform(qb.random.split(k, 3))
    with pytest.raises(qb.ShapeError, match="normal: expected a single key"):
        qb.random.normal(qb.array([1, 2]))
    with pytest.raises(qb.DTypeError, match="bits: dtype must be an unsigned integer dtype"):
        qb.random.bits(k, (2,), "int32")
    with pytest.raises(qb.DTypeError, match="uniform: dtype must be a float dtype"):
        qb.random.uniform(k, (2,), "int32")
    with pytest.raises(qb.DTypeError, match="randint: dtype must be an integer dtype"):
        qb.random.randint(k, (2,), 0, 3, "float32")
    with pytest.raises(qb.ShapeError, match="fold_in: data must be a scalar"):
        qb.random.fold_in(k, qb.arange(3))
    with pytest.raises(qb.DTypeError, match="key: the seed 36893488147419103232 does not fit in 64 bits"):
        qb.random.key(2**65)
    with pytest.raises(qb.ShapeError, match=r"uniform: .*\(4,\)"):
        qb.random.uniform(k, (3,), minval=np.zeros(4))
    with pytest.raises(qb.ShapeError, match="choice: cannot take a larger sample"):
        qb.random.choice(k, 3, (4,), replace=False)
    with pytest.raises(qb.DTypeError, match="bernoulli: the probability p must have a float dtype"):
        qb.random.bernoulli(k, qb.array([1]))


@pytest.mark.parametrize("module", ["quabla.random", "quabla._bits"])
def test_docstring_examples(module):
    import doctest
    import importlib

    r = doctest.testmod(importlib.import_module(module), extraglobs={"qb": qb}, optionflags=doctest.ELLIPSIS)
    assert r.attempted > 0 and r.failed == 0, r
