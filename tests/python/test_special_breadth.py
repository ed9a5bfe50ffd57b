"""qb.scipy.special's breadth (gamma family, incomplete gamma and beta, zeta/polygamma, the
normal distribution function, Bessel i0/i1, erfcx, dawsn, entropies, Box-Cox, spence,
exponential integrals, bernoulli) against jax.scipy.special (x64) and scipy.special, and
qb.linalg's array-API forms against jnp.linalg: eager and jit, edge values, f32, gradients,
vmap, typed errors, and the docstring examples of both modules."""


import numpy as np
import pytest

import quabla as qb
from breadth_util import assert_close, check_all

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402
import jax.scipy.special as js  # noqa: E402

ss = pytest.importorskip("scipy.special")

sp = qb.scipy.special
L = qb.linalg
RNG = np.random.default_rng(11)
EDGE = np.array([-np.inf, -50.0, -2.5, -2.0, -1.0, -0.5, -0.0, 0.0, 1e-8, 0.5, 1.0, 2.0, 7.9, 8.5, 30.0, 200.0, np.inf, np.nan])


def _j(f):
    return lambda *a: np.asarray(f(*a))


UNARY = [  # name, oracle, points, rtol (f64)
    ("gamma", _j(js.gamma), EDGE, 1e-13),
    ("gammasgn", _j(js.gammasgn), EDGE, 0),
    ("loggamma", _j(js.loggamma), EDGE, 1e-14),
    ("ndtr", _j(js.ndtr), EDGE, 1e-13),
    ("log_ndtr", _j(js.log_ndtr), EDGE, 1e-13),
    ("ndtri", _j(js.ndtri), np.array([0.0, 1e-300, 1e-20, 0.01, 0.1, 0.5, 0.9, 0.99, 1 - 1e-10, 1.0, -0.1, 1.1, np.nan]), 1e-13),
    ("i0", _j(js.i0), EDGE, 1e-14),
    ("i0e", _j(js.i0e), EDGE, 1e-14),
    ("i1", _j(js.i1), EDGE, 1e-14),
    ("i1e", _j(js.i1e), EDGE, 1e-14),
    ("erfcx", _j(js.erfcx), EDGE, 1e-14),
    ("dawsn", _j(js.dawsn), EDGE, 1e-14),
    ("entr", _j(js.entr), EDGE, 1e-14),
    ("spence", _j(js.spence), np.abs(EDGE), 1e-14),
    ("exp1", ss.exp1, np.abs(EDGE), 1e-13),  # jax's exp1 loops forever on some of these
    ("expi", ss.expi, EDGE, 1e-13),
]


@pytest.mark.parametrize("name,oracle,x,rtol", UNARY, ids=[u[0] for u in UNARY])
def test_unary_values(name, oracle, x, rtol):
    f = getattr(sp, name)
    want = oracle(x)
    with np.errstate(all="ignore"):
        if name in ("exp1",):
            want = np.where(x < 0, np.nan, want)
    assert_close(f(qb.array(x)), want, rtol, 1e-14, name)
    assert_close(qb.jit(f)(qb.array(x)), want, rtol, 1e-14, name + " jit")
    # f32 in, f32 out, accurate to a few f32 ulps where the result is representable.
    x32 = x.astype(np.float32)
    r = f(qb.array(x32))
    assert r.dtype == qb.float32
    w32 = oracle(x32.astype(np.float64))
    with np.errstate(all="ignore"):
        if name == "exp1":
            w32 = np.where(x32 < 0, np.nan, w32)
        ok = np.isfinite(w32) & (np.abs(w32) < 1e30) & (np.abs(w32) > 1e-12)
    np.testing.assert_allclose(r.numpy()[ok], w32[ok], rtol=3e-6, err_msg=name + " f32")


GRAD_POINTS = np.array([0.3, 1.2, 2.5, 6.0, 9.5])
GRAD = [("gamma", js.gamma), ("loggamma", js.loggamma), ("ndtr", js.ndtr), ("log_ndtr", js.log_ndtr), ("i0", js.i0),
        ("i0e", js.i0e), ("i1", js.i1), ("i1e", js.i1e), ("erfcx", js.erfcx), ("dawsn", js.dawsn), ("entr", js.entr)]


@pytest.mark.parametrize("name,jf", GRAD, ids=[g[0] for g in GRAD])
def test_unary_grads(name, jf):
    f = getattr(sp, name)
    x = np.concatenate([GRAD_POINTS, -GRAD_POINTS]) if name not in ("gamma", "loggamma", "entr") else GRAD_POINTS
    got = qb.vmap(qb.grad(f))(qb.array(x))
    assert_close(got, np.asarray(jax.vmap(jax.grad(jf))(x)), 1e-11, 1e-14, name)
    qb.test_util.check_grads(f, (qb.array(x[:3]),), order=2)


def test_grads_without_jax_rules():
    # ndtri, spence, exp1, expi: against finite differences of SciPy / the known derivatives.
    p = np.array([0.01, 0.3, 0.5, 0.97])
    assert_close(qb.vmap(qb.grad(sp.ndtri))(qb.array(p)), np.sqrt(2 * np.pi) * np.exp(ss.ndtri(p) ** 2 / 2), 1e-10)
    x = np.array([0.2, 1.0, 1.5, 3.0])
    assert_close(qb.vmap(qb.grad(sp.spence))(qb.array(x)), np.array([np.log(0.2) / 0.8, -1.0, np.log(1.5) / -0.5, np.log(3.0) / -2.0]), 1e-12)
    assert_close(qb.vmap(qb.grad(sp.exp1))(qb.array(x)), -np.exp(-x) / x, 1e-13)
    assert_close(qb.vmap(qb.grad(sp.expi))(qb.array(-x)), np.exp(-x) / -x, 1e-13)
    qb.test_util.check_grads(sp.ndtri, (qb.array([0.3, 0.5, 0.7]),), order=2)
    qb.test_util.check_grads(sp.expi, (qb.array(x),), order=1)


def test_binary_gamma_family():
    a = np.array([0.5, 2.0, 9.0, 30.0, 1e6, -1.5, 0.0, 3.0, np.nan])
    b = np.array([3.0, 8.0, 10.0, 1e3, 2e6, 2.5, 2.0, -0.5, 1.0])
    for name in ("betaln", "beta", "poch"):
        with np.errstate(all="ignore"):
            want = np.asarray(getattr(js, name)(a, b))
        assert_close(getattr(sp, name)(qb.array(a), qb.array(b)), want, 1e-12, 1e-300, name)
        assert_close(qb.jit(getattr(sp, name))(qb.array(a), qb.array(b)), want, 1e-12, 1e-300, name)
    n = np.array([5.0, 5.0, 10.0, -1.0, 4.0, 0.0, 3.5])
    k = np.array([2.0, 6.0, 3.0, 1.0, -1.0, 0.0, 1.5])
    for rep in (False, True):
        assert_close(sp.comb(qb.array(n), qb.array(k), repetition=rep), np.asarray(js.comb(n, k, repetition=rep)), 1e-12)
    assert_close(sp.factorial(qb.array(n)), np.asarray(js.factorial(n)), 1e-12)
    assert_close(sp.multigammaln(qb.array([3.0, 5.5]), 3), np.asarray(js.multigammaln(np.array([3.0, 5.5]), 3)), 1e-13)
    with pytest.raises(qb.UnsupportedOperationError, match="factorial"):
        sp.factorial(3, exact=True)
    pos_a, pos_b = np.array([0.7, 2.0, 3.5]), np.array([1.5, 3.0, 9.0])
    for name in ("betaln", "beta", "poch"):
        check_all(getattr(sp, name), _j(getattr(js, name)), [pos_a, pos_b], rtol=1e-12, atol=1e-14)
        gq = qb.grad(lambda x, y, f=getattr(sp, name): qb.sum(f(x, y)), argnums=(0, 1))(qb.array(pos_a), qb.array(pos_b))
        gj = jax.grad(lambda x, y, f=getattr(js, name): jnp.sum(f(x, y)), argnums=(0, 1))(pos_a, pos_b)
        assert_close(gq, tuple(np.asarray(g) for g in gj), 1e-10, 1e-14, name + " grad")


def test_zeta_polygamma():
    x = np.array([2.0, 3.0, 1.5, 1.0, 0.5, 4.0, 2.0, 30.0, 2.0])
    q = np.array([1.0, 2.0, 0.3, 1.0, 1.0, -2.0, -1.5, 0.5, 100.0])
    assert_close(sp.zeta(qb.array(x), qb.array(q)), ss.zeta(x, q), 1e-13, 0, "zeta")
    n = np.array([0, 1, 2, 3, 5, -1, 1])
    xx = np.array([0.5, 1.5, 3.0, 0.1, 7.0, 1.0, -0.5])
    assert_close(sp.polygamma(qb.array(n), qb.array(xx)), ss.polygamma(n, xx), 1e-12, 0, "polygamma")
    assert_close(qb.jit(sp.polygamma)(qb.array(n), qb.array(xx)), ss.polygamma(n, xx), 1e-12, 0, "polygamma jit")
    # Derivatives: d/dq zeta(s, q) = -s zeta(s + 1, q); psi^(n)' = psi^(n+1); d/ds by finite differences.
    s, qq = np.array([2.0, 3.5]), np.array([0.7, 2.0])
    gs, gq = qb.grad(lambda a, b: qb.sum(sp.zeta(a, b)), argnums=(0, 1))(qb.array(s), qb.array(qq))
    assert_close(gq, -s * ss.zeta(s + 1, qq), 1e-11)
    h = 1e-6
    assert_close(gs, (ss.zeta(s + h, qq) - ss.zeta(s - h, qq)) / (2 * h), 1e-7)
    g = qb.vmap(qb.grad(lambda v: sp.polygamma(2, v)))(qb.array(qq))
    assert_close(g, ss.polygamma(3, qq), 1e-11)
    assert sp.zeta(qb.array([2.0], dtype=qb.float32), 1.0).dtype == qb.float32
    with pytest.raises(qb.UnsupportedOperationError, match="Riemann"):
        sp.zeta(2.0)
    with pytest.raises(qb.DTypeError, match="polygamma"):
        sp.polygamma(qb.array(1.0), 2.0)


IG_A = np.array([0.5, 2.0, 9.0, 30.0, 0.1, 1e-3, 5.0, 0.0, 0.0, 2.0, -1.0, 2.0, np.nan, 100.0, 3.0, 2.0])
IG_X = np.array([0.3, 1.0, 12.0, 25.0, 5.0, 0.5, 0.0, 0.0, 2.0, np.inf, 1.0, -1.0, 1.0, 99.0, 700.0, 1e-300])


@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_incomplete_gamma(name):
    f, jf = getattr(sp, name), getattr(js, name)
    want = np.asarray(jf(IG_A, IG_X))
    assert_close(f(qb.array(IG_A), qb.array(IG_X)), want, 1e-11, 1e-300, name)
    assert_close(qb.jit(f)(qb.array(IG_A), qb.array(IG_X)), want, 1e-11, 1e-300, name)
    assert_close(ss.gammainc(2.0, 1.0) if name == "gammainc" else ss.gammaincc(2.0, 1.0), f(2.0, 1.0).item(), 1e-14)
    ok = slice(0, 6)
    a, x = IG_A[ok], IG_X[ok]
    gq = qb.vmap(qb.grad(f, argnums=(0, 1)))(qb.array(a), qb.array(x))
    gj = jax.vmap(jax.grad(jf, argnums=(0, 1)))(a, x)
    assert_close(gq, tuple(np.asarray(g) for g in gj), 1e-10, 1e-300, name + " grad")
    # Forward mode, jit, f32.
    _, t = qb.jit(lambda u, v: qb.jvp(f, (u, v), (qb.ones_like(u), qb.zeros_like(v))))(qb.array(a), qb.array(x))
    assert_close(t, np.asarray(gj[0]), 1e-10)
    r = f(qb.array(a, dtype=qb.float32), qb.array(x, dtype=qb.float32))
    assert r.dtype == qb.float32
    assert_close(r, want[ok], 5e-4, 1e-7)  # nearer the f64 values than JAX's f32 (1.4e-3 off at a = 1e-3)
    qb.test_util.check_grads(lambda v: f(qb.array(a), v), (qb.array(x),), order=2)


def test_betainc():
    a = np.array([0.5, 2.0, 20.0, 1.0, 0.0, 2.0, 3.0, 1e-4, 2.0, 5.0])
    b = np.array([0.5, 3.0, 1.0, 30.0, 2.0, 0.0, 3.0, 2.0, -1.0, 5.0])
    x = np.array([0.3, 0.4, 0.9, 0.01, 0.5, 0.5, 1.2, 0.2, 0.5, 1.0])
    want = np.asarray(js.betainc(a, b, x))
    assert_close(sp.betainc(qb.array(a), qb.array(b), qb.array(x)), want, 1e-12, 1e-300)
    assert_close(qb.jit(sp.betainc)(qb.array(a), qb.array(b), qb.array(x)), want, 1e-12, 1e-300)
    r = sp.betainc(qb.array(a, dtype=qb.float32), qb.array(b, dtype=qb.float32), qb.array(x, dtype=qb.float32))
    assert r.dtype == qb.float32
    assert_close(r, want, 3e-5, 1e-6)
    pa, pb, px = np.array([2.0, 2.5, 0.7]), np.array([3.0, 3.5, 4.0]), np.array([0.4, 0.7, 0.2])
    g = qb.vmap(qb.grad(sp.betainc, argnums=(0, 1, 2)))(qb.array(pa), qb.array(pb), qb.array(px))
    assert_close(g[2], np.asarray(jax.vmap(jax.grad(js.betainc, argnums=2))(pa, pb, px)), 1e-11)
    h = 1e-6
    assert_close(g[0], (ss.betainc(pa + h, pb, px) - ss.betainc(pa - h, pb, px)) / (2 * h), 1e-7)
    assert_close(g[1], (ss.betainc(pa, pb + h, px) - ss.betainc(pa, pb - h, px)) / (2 * h), 1e-7)


def test_entropies_boxcox_softmax():
    p = np.array([0.0, 0.5, 1.0, 2.0, -1.0, 0.3, 0.0])
    q = np.array([1.0, 0.25, 1.0, 0.0, 1.0, -1.0, 0.0])
    for name in ("rel_entr", "kl_div"):
        assert_close(getattr(sp, name)(qb.array(p), qb.array(q)), np.asarray(getattr(js, name)(p, q)), 1e-14, 0, name)
    pp, qq = np.array([0.2, 0.5, 1.5]), np.array([0.3, 0.25, 1.0])
    for name in ("rel_entr", "kl_div"):
        check_all(getattr(sp, name), _j(getattr(js, name)), [pp, qq], rtol=1e-13, atol=1e-14)
    x, lm = np.array([0.5, 2.0, 4.0, 3.0]), np.array([0.5, 0.0, -1.5, 2.0])
    for name in ("boxcox", "boxcox1p"):
        assert_close(getattr(sp, name)(qb.array(x), qb.array(lm)), np.asarray(getattr(js, name)(x, lm)), 1e-14, 0, name)
    lm = np.array([0.5, 0.3, -1.5, 2.0])  # away from lmbda == 0, where (as JAX) the lmbda-derivative is that of log(x)
    for name in ("boxcox", "boxcox1p"):
        check_all(getattr(sp, name), _j(getattr(js, name)), [x, lm], rtol=1e-13, atol=1e-14)
    z = RNG.normal(size=(3, 4))
    for name in ("softmax", "log_softmax"):
        for axis in (-1, 0):
            assert_close(getattr(sp, name)(qb.array(z), axis=axis), np.asarray(getattr(js, name)(z, axis=axis)), 1e-13, 1e-15)


def test_bernoulli_and_log_ndtr_options():
    assert_close(sp.bernoulli(20), ss.bernoulli(20), 1e-11, 1e-15)
    assert sp.bernoulli(12).tolist()[12] == -691 / 2730
    assert_close(sp.bernoulli(20), np.asarray(js.bernoulli(20)), 1e-5, 1e-15)  # JAX's are approximate
    assert sp.bernoulli(0).tolist() == [1.0]
    for order in (0, 1, 5):
        x = np.array([-40.0, -25.0, -21.0])
        assert_close(sp.log_ndtr(qb.array(x), series_order=order), np.asarray(js.log_ndtr(x, series_order=order)), 1e-14)
    with pytest.raises(qb.InvalidArgumentError, match="series_order"):
        sp.log_ndtr(1.0, series_order=31)
    with pytest.raises(qb.InvalidArgumentError, match="bernoulli"):
        sp.bernoulli(-1)
    with pytest.raises(qb.ArgumentTypeError, match="bernoulli"):
        sp.bernoulli(2.5)


def test_vmap_of_loops_and_integer_inputs():
    a = np.array([[0.5, 2.0], [3.0, 9.0]])
    x = np.array([[0.3, 4.0], [1.0, 12.0]])
    got = qb.vmap(sp.gammainc)(qb.array(a), qb.array(x))
    assert_close(got, np.asarray(js.gammainc(a, x)), 1e-13)
    got = qb.vmap(sp.exp1)(qb.array(x))
    assert_close(got, ss.exp1(x), 1e-13)
    # Integer inputs are promoted to float64, as JAX with x64.
    r = sp.gamma(qb.array([1, 2, 5]))
    assert r.dtype == qb.float64
    assert_close(r, np.array([1.0, 1.0, 24.0]), 1e-14)


# ---------------------------------------------------------------------------------------------
# qb.linalg


def _jl(name):
    return lambda *a, **k: np.asarray(getattr(jnp.linalg, name)(*a, **k))


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_matrix_norm(ord):
    a = RNG.normal(size=(2, 3, 4))
    for keep in (False, True):
        assert_close(L.matrix_norm(qb.array(a), ord=ord, keepdims=keep), _jl("matrix_norm")(a, ord=ord, keepdims=keep), 1e-12, 1e-13)
    assert_close(qb.jit(lambda v: L.matrix_norm(v, ord=ord))(qb.array(a)), _jl("matrix_norm")(a, ord=ord), 1e-12, 1e-13)
    if ord in ("fro", "nuc"):
        check_all(lambda v: L.matrix_norm(v, ord=ord), lambda v: _jl("matrix_norm")(v, ord=ord), [a[0]], rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("ord", [2, 1, np.inf, -np.inf, 0, 3])
def test_vector_norm(ord):
    v = RNG.normal(size=(3, 4, 2))
    for axis in (None, 0, -1, (0, 2), (1,)):
        for keep in (False, True):
            assert_close(L.vector_norm(qb.array(v), ord=ord, axis=axis, keepdims=keep), _jl("vector_norm")(v, ord=ord, axis=axis, keepdims=keep), 1e-12, 1e-13)
    if ord in (2, 1, 3):
        check_all(lambda u: L.vector_norm(u, ord=ord, axis=(0, 2)), lambda u: _jl("vector_norm")(u, ord=ord, axis=(0, 2)), [v], rtol=1e-12, atol=1e-13)


def test_cond_rank():
    a = RNG.normal(size=(2, 3, 3))
    for p in (None, 2, -2, 1, -1, "fro", "nuc", np.inf, -np.inf):
        assert_close(L.cond(qb.array(a), p), _jl("cond")(a, p), 1e-11, 0, str(p))
    sing = np.array([[1.0, 2.0], [0.0, 0.0]])
    assert L.cond(qb.array(sing), 1).item() == np.inf
    r = RNG.normal(size=(4, 2)) @ RNG.normal(size=(2, 5))
    for args in ((r,), (r, 0.5), (np.stack([r, r[:, ::-1]]),)):
        got = L.matrix_rank(*[qb.array(x) if isinstance(x, np.ndarray) else x for x in args])
        assert got.dtype == qb.int64
        assert got.tolist() == np.asarray(jnp.linalg.matrix_rank(*args)).tolist()
    assert L.matrix_rank(qb.array(r), tol=100.0).item() == 0
    assert L.matrix_rank(qb.array([0.0, 1.0])).item() == 1
    with pytest.raises(qb.ShapeError, match="cond"):
        L.cond(qb.ones((2, 3)), 1)
    with pytest.raises(qb.UnsupportedOperationError, match="matrix_rank"):
        L.matrix_rank(qb.ones((2, 2)), 0.1, tol=0.1)


def test_multi_dot_and_tensor_solves():
    ms = [RNG.normal(size=(5,)), RNG.normal(size=(5, 3)), RNG.normal(size=(3, 7)), RNG.normal(size=(7, 2))]
    check_all(lambda *xs: L.multi_dot(xs), lambda *xs: _jl("multi_dot")(list(xs)), ms, rtol=1e-12, atol=1e-13, vmap=False)
    m2 = ms[1:]
    assert_close(L.multi_dot([qb.array(m) for m in m2]), _jl("multi_dot")(m2), 1e-12, 1e-13)
    assert_close(L.multi_dot([qb.array(ms[0]), qb.array(ms[1]), qb.array(RNG.normal(size=3))]).shape, np.zeros(()).shape)
    with pytest.raises(qb.ShapeError, match="multi_dot"):
        L.multi_dot([qb.ones((2, 3)), qb.ones((2, 3))])
    t = RNG.normal(size=(4, 2, 2)) + 3 * np.eye(4).reshape(4, 2, 2)
    assert_close(L.tensorinv(qb.array(t), ind=1), _jl("tensorinv")(t, ind=1), 1e-12, 1e-13)
    a = RNG.normal(size=(2, 3, 6)) + 4 * np.eye(6).reshape(2, 3, 6)
    b = RNG.normal(size=(2, 3))
    check_all(L.tensorsolve, _jl("tensorsolve"), [a, b], rtol=1e-11, atol=1e-12, vmap=False)
    a2 = np.moveaxis(a, 2, 0)
    assert_close(L.tensorsolve(qb.array(a2), qb.array(b), axes=(0,)), _jl("tensorsolve")(a2, b, axes=(0,)), 1e-11, 1e-12)
    with pytest.raises(qb.ShapeError, match="tensorinv"):
        L.tensorinv(qb.ones((2, 3)), ind=1)
    with pytest.raises(qb.ShapeError, match="tensorsolve"):
        L.tensorsolve(qb.ones((2, 3, 6)), qb.ones((3, 2)))


def test_array_api_forms():
    a = RNG.normal(size=(2, 3, 4))
    for off in (0, 1, -1):
        assert_close(L.trace(qb.array(a), offset=off), _jl("trace")(a, offset=off), 1e-13)
        assert_close(L.diagonal(qb.array(a), offset=off), _jl("diagonal")(a, offset=off), 1e-13)
    x, y = RNG.normal(size=(4, 3)), RNG.normal(size=(3,))
    assert_close(L.cross(qb.array(x), qb.array(y)), _jl("cross")(x, y), 1e-13)
    assert_close(L.cross(qb.array(x.T), qb.array(x.T[:, ::-1]), axis=0), _jl("cross")(x.T, x.T[:, ::-1], axis=0), 1e-13)
    assert_close(L.vecdot(qb.array(x), qb.array(y)), _jl("vecdot")(x, y), 1e-13)
    assert_close(L.outer(qb.array(y), qb.array(y[:2])), _jl("outer")(y, y[:2]), 1e-13)
    assert_close(L.matmul(qb.array(a), qb.array(a[0].T)), _jl("matmul")(a, a[0].T), 1e-13)
    assert_close(L.tensordot(qb.array(a), qb.array(a[0].T), axes=1), _jl("tensordot")(a, a[0].T, axes=1), 1e-13)
    assert_close(L.matrix_transpose(qb.array(a)), _jl("matrix_transpose")(a), 0)
    assert L.matmul(qb.ones((2, 2), dtype=qb.float32), qb.ones((2, 2), dtype=qb.float32)).dtype == qb.float32
    with pytest.raises(qb.ShapeError, match="outer"):
        L.outer(qb.ones((2, 2)), qb.ones(2))
    with pytest.raises(qb.ShapeError, match="cross"):
        L.cross(qb.ones(2), qb.ones(2))
    with pytest.raises(qb.ShapeError, match="matrix_transpose"):
        L.matrix_transpose(qb.ones(3))


# The docstring examples of qb.scipy.special and qb.linalg run in tests/python/test_docs.py.
