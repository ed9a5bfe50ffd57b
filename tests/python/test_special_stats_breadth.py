"""qb.scipy.special's expn, fresnel, sici, hyp1f1, hyp2f1, owens_t, bessel_jn and
qb.scipy.stats's betabinom, binom, dirichlet, gennorm, geom, gumbel_l/r, multinomial, nbinom,
pareto, truncnorm, vonmises, wrapcauchy, gaussian_kde, mode, rankdata and sem against
jax.scipy (JAX 0.10.2, x64): values in and out of the support (JAX's NaN/inf edges), jit,
gradients, vmap, f32, typed errors.

JAX's answers are recorded at the end of this file (compiling JAX's while-loop special
functions takes minutes on this machine): ``QB_REGEN_REFS=1 pytest <this file>`` recomputes
every one with jax and rewrites that block."""

import os

import numpy as np
import pytest

import quabla as qb
import quabla.scipy.special as S
import quabla.scipy.stats as ST
from breadth_util import assert_close
from quabla.errors import ArgumentTypeError, DTypeError, InvalidArgumentError, ShapeError, UnsupportedOperationError

_REGEN = os.environ.get("QB_REGEN_REFS") == "1"
if _REGEN:
    import jax

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
    import jax.numpy as jnp
    import jax.scipy.special as js
    import jax.scipy.stats as jst
else:
    jax = jnp = js = jst = None
_RECORD = {}


def _enc(v):
    if isinstance(v, (tuple, list)):
        return ("tuple", [_enc(t) for t in v])
    a = np.asarray(v)
    return (a.dtype.name, a.shape, [x.item() for x in a.ravel()])


def _dec(e):
    if e[0] == "tuple":
        return tuple(_dec(t) for t in e[1])
    return np.array(e[2], dtype=e[0]).reshape(e[1])


def J(label, thunk):
    """JAX's answer ``thunk()``, recorded under ``label`` (computed when regenerating)."""
    if _REGEN and label not in _RECORD:
        _RECORD[label] = _enc(thunk())
    return _dec(_RECORD[label] if _REGEN else _REF[label])


@pytest.fixture(scope="module", autouse=True)
def _write_refs():
    yield
    if _REGEN:
        src = open(__file__).read()
        cut = src.rindex("\n# ---- recorded JAX answers") + 1
        body = "# ---- recorded JAX answers (QB_REGEN_REFS=1 regenerates) ----\nnan, inf = float('nan'), float('inf')\n_REF = {\n"
        body += "".join(f"    {k!r}: {v!r},\n" for k, v in sorted(_RECORD.items())) + "}\n"
        open(__file__, "w").write(src[:cut] + body)


def _jargs(args):
    return [jnp.asarray(a) for a in args]


def _cmp(label, qf, jf, args, rtol=1e-10, atol=1e-13, f32_rtol=None, jit=False):
    want = J(label, lambda: jf(*_jargs(args)))
    got = qf(*[qb.array(a) for a in args])
    assert_close(got, want, rtol, atol, label)
    if jit:
        assert_close(qb.jit(qf)(*[qb.array(a) for a in args]), want, rtol, atol, "jit " + label)
    if f32_rtol is not None:
        a32 = [np.asarray(a, np.float32) for a in args]
        g32 = qf(*[qb.array(a) for a in a32])
        w32 = J(label + "/f32", lambda: jf(*_jargs(a32)))
        for g, w in zip(g32 if isinstance(g32, tuple) else (g32,), w32 if isinstance(w32, tuple) else (w32,)):
            assert g.dtype == qb.float32
            np.testing.assert_allclose(g.numpy(), w, rtol=f32_rtol, atol=f32_rtol * 1e-2, equal_nan=True, err_msg="f32 " + label)


def _grads(label, qf, jf, points, argnums, rtol=1e-8):
    for k, pt in enumerate(points):
        for i in argnums:
            g = qb.grad(qf, argnums=i)(*[qb.array(v) for v in pt]).item()
            w = J(f"{label}/d{i}/{k}", lambda: float(jax.grad(jf, argnums=i)(*[jnp.asarray(v) for v in pt])))
            np.testing.assert_allclose(g, float(w), rtol=rtol, atol=1e-12, err_msg=f"{label} d/d{i} at {pt}")


# --- special -----------------------------------------------------------------------------


def test_expn():
    n = np.array([0.0, 1.0, 2.0, 3.0, 5.0, 10.0, -1.0, 2.5, 0.5, 6000.0])
    x = np.array([0.0, 1e-3, 0.5, 1.0, 1.5, 3.0, 20.0, 800.0, -0.5, np.inf, np.nan])
    N, X = np.meshgrid(n, x)
    _cmp("expn", S.expn, lambda *a: js.expn(*a), (N, X), f32_rtol=1e-5, jit=True)
    _grads("expn", S.expn, lambda *a: js.expn(*a), [(1.0, 0.5), (2.0, 2.0), (3.0, 0.3)], [1])
    # Second derivative: E_{n-2}.
    h = qb.grad(qb.grad(lambda x: S.expn(qb.array(3.0), x)))(qb.array(0.7)).item()
    np.testing.assert_allclose(h, float(J("expn/h", lambda: js.expn(1.0, 0.7))), rtol=1e-10)


def test_fresnel_sici():
    x = np.array([0.0, 0.3, -0.3, 1.2, 1.6, 1.601, 3.0, -5.0, 10.0, 100.7, 4e4, 1e6, np.inf, -np.inf, np.nan])
    _cmp("fresnel", S.fresnel, lambda x: js.fresnel(x), (x,), f32_rtol=1e-5, jit=True)
    x = np.array([0.0, 0.3, -0.3, 1.2, 4.0, 4.01, 7.9, 8.1, -50.0, 1e8, 2e9, np.inf, -np.inf, np.nan])
    _cmp("sici", S.sici, lambda x: js.sici(x), (x,), f32_rtol=1e-5)
    for k in (0, 1):
        _grads(f"fresnel{k}", lambda x: S.fresnel(x)[k], lambda x: js.fresnel(x)[k], [(0.5,), (2.0,), (-3.3,)], [0])
        _grads(f"sici{k}", lambda x: S.sici(x)[k], lambda x: js.sici(x)[k], [(0.5,), (-5.3,)], [0])


def test_hyp1f1():
    a = np.array([0.0, 1.0, 0.5, 2.0, -1.5, 3.0])
    b = np.array([0.0, 1.0, 2.5, 0.5, 3.0, -0.5])
    x = np.array([0.0, 1.0, -2.0, 10.0, 99.0, 120.0, -120.5, -150.0])
    A, B, X = np.meshgrid(a, b, x, indexing="ij")
    _cmp("hyp1f1", S.hyp1f1, lambda *v: js.hyp1f1(*v), (A, B, X), rtol=1e-9, f32_rtol=1e-4)
    _grads("hyp1f1", S.hyp1f1, lambda *v: js.hyp1f1(*v), [(1.0, 2.0, 0.5), (0.5, 1.5, -2.0), (2.0, 0.7, 3.0)], [0, 1, 2])
    h = qb.grad(qb.grad(S.hyp1f1, argnums=2), argnums=2)(qb.array(1.0), qb.array(2.0), qb.array(0.5)).item()
    hj = J("hyp1f1/h", lambda: jax.grad(jax.grad(js.hyp1f1, argnums=2), argnums=2)(1.0, 2.0, 0.5))
    np.testing.assert_allclose(h, float(hj), rtol=1e-9)


def test_hyp2f1():
    a = np.array([0.0, 1.0, 0.5, -2.0, 2.3, -3.0])
    b = np.array([1.0, -1.0, 1.5, 2.0, 0.7])
    c = np.array([0.0, -2.0, 2.5, 1.0, 3.3, 4.0])
    x = np.array([0.0, 0.3, -0.5, 0.95, 1.0, 1.5, -3.0])
    A, B, C, X = np.meshgrid(a, b, c, x, indexing="ij")
    _cmp("hyp2f1", S.hyp2f1, lambda *v: js.hyp2f1(*v), (A, B, C, X), rtol=1e-8, atol=1e-12, f32_rtol=1e-3, jit=True)
    _grads("hyp2f1", S.hyp2f1, lambda *v: js.hyp2f1(*v), [(1.0, 2.0, 3.5, 0.5), (0.5, 1.5, 2.5, -0.3), (2.0, 0.7, 4.2, 0.2)], [0, 1, 2, 3])


def test_owens_t_bessel_jn():
    h = np.array([0.0, 0.3, -1.0, 2.0, 0.5, np.inf, np.nan])
    a = np.array([0.0, 0.5, 1.0, -1.0, 2.0, -3.0, 10.0, np.inf, np.nan])
    H, A = np.meshgrid(h, a)
    _cmp("owens_t", S.owens_t, lambda *v: js.owens_t(*v), (H, A), f32_rtol=1e-5, jit=True)
    _grads("owens_t", S.owens_t, lambda *v: js.owens_t(*v), [(0.5, 0.5), (-1.0, 2.0), (2.0, -0.7)], [0, 1])
    z = np.array([0.1, 1.0, -2.0, 5.0, 20.0, 0.0])
    for v, n_iter in ((0, 50), (3, 50), (60, 20)):
        _cmp(f"bessel_jn{v}", lambda z: S.bessel_jn(z, v=v, n_iter=n_iter), lambda z: js.bessel_jn(z, v=v, n_iter=n_iter), (z,),
             rtol=1e-9, atol=1e-12, f32_rtol=1e-4 if v == 3 else None)
    _grads("bessel_jn", lambda z: S.bessel_jn(z, v=2)[2], lambda z: js.bessel_jn(z, v=2)[2], [(0.5,), (3.0,)], [0])
    got = qb.vmap(lambda z: S.bessel_jn(z, v=1))(qb.array([1.0, 2.0]))
    assert_close(got, J("bessel_jn/vmap", lambda: js.bessel_jn(jnp.array([1.0, 2.0]), v=1)).T, 1e-10, 1e-12)
    got = qb.vmap(S.hyp1f1)(qb.array([1.0, 0.5]), qb.array([2.0, 1.5]), qb.array([0.3, -4.0]))
    assert_close(got, J("hyp1f1/vmap", lambda: js.hyp1f1(jnp.array([1.0, 0.5]), jnp.array([2.0, 1.5]), jnp.array([0.3, -4.0]))), 1e-10, 1e-12)


def test_special_errors():
    with pytest.raises(ArgumentTypeError):
        S.bessel_jn(qb.array(1.0), v=1.5)
    with pytest.raises(InvalidArgumentError):
        S.bessel_jn(qb.array(1.0), v=-1)
    with pytest.raises(ShapeError):
        S.hyp2f1(qb.array([1.0, 2.0]), 1.0, 1.0, qb.array([0.1, 0.2, 0.3]))
    for f in (S.expn, S.owens_t):
        with pytest.raises(qb.errors.QuablaError if hasattr(qb.errors, "QuablaError") else Exception):
            f("a", None)


# --- stats -------------------------------------------------------------------------------


def _dist(name, fns, args, rtol=1e-10, atol=1e-13, jit_fn=None):
    for f in fns:
        q = getattr(getattr(ST, name), f)
        jf = lambda *v, f=f: getattr(getattr(jst, name), f)(*v)  # noqa: E731
        _cmp(f"{name}.{f}", q, jf, args, rtol, atol)
        a32 = [np.asarray(a, np.float32) for a in args]
        assert q(*[qb.array(a) for a in a32]).dtype == qb.float32, f"{name}.{f} f32"
    f = jit_fn or fns[0]
    want = J(f"{name}.{f}", None)
    assert_close(qb.jit(getattr(getattr(ST, name), f))(*[qb.array(a) for a in args]), want, rtol, atol, f"jit {name}.{f}")


def test_discrete():
    k = np.array([-1.0, 0.0, 1.0, 2.0, 2.5, 3.0, 5.0, 7.0])[:, None]
    _dist("binom", ["logpmf", "pmf"], (k, np.array([0.0, 5.0, 6.0]), np.array([0.3, 0.0, 1.0])))
    _dist("betabinom", ["logpmf", "pmf"], (k, np.array([0.0, 5.0, -1.0]), np.array([2.0, 0.5, 1.0]), np.array([3.0, 1.5, -1.0])))
    _dist("nbinom", ["logpmf", "pmf"], (k, np.array([1.0, 3.0, 2.5]), np.array([0.3, 0.5, 1.0])))
    _dist("geom", ["logpmf", "pmf"], (k, np.array([0.3, 1.0, 0.5]), np.array([0.0, 0.0, 1.0])))
    x = np.array([[1, 2, 0], [0, 0, 3], [2, 2, 2]])
    p = np.array([0.2, 0.3, 0.5])
    for f in ("logpmf", "pmf"):
        assert_close(getattr(ST.multinomial, f)(qb.array(x[0]), qb.array(3), qb.array(p)), J(f"multinomial.{f}/1", lambda: getattr(jst.multinomial, f)(x[0], 3, p)))
        assert_close(getattr(ST.multinomial, f)(qb.array(x), qb.array(3), qb.array(p)), J(f"multinomial.{f}/2", lambda: getattr(jst.multinomial, f)(x, 3, p)))
    with pytest.raises(DTypeError):
        ST.multinomial.logpmf(qb.array([1.0, 2.0]), qb.array(3), qb.array(p[:2]))
    # Gradients in the continuous parameters.
    _grads("binom", lambda p: ST.binom.logpmf(qb.array(2.0), 5.0, p), lambda p: jst.binom.logpmf(2.0, 5.0, p), [(0.3,)], [0])
    _grads("betabinom", lambda a, b: ST.betabinom.logpmf(qb.array(2.0), 5.0, a, b), lambda a, b: jst.betabinom.logpmf(2.0, 5.0, a, b), [(2.0, 3.0)], [0, 1])
    _grads("nbinom", lambda n, p: ST.nbinom.logpmf(qb.array(2.0), n, p), lambda n, p: jst.nbinom.logpmf(2.0, n, p), [(2.5, 0.4)], [0, 1])
    _grads("geom", lambda p: ST.geom.logpmf(qb.array(3.0), p), lambda p: jst.geom.logpmf(3.0, p), [(0.3,)], [0])


X = np.array([-3.0, -0.7, 0.0, 0.4, 1.0, 1.5, 3.2, 6.5, np.inf, -np.inf])[:, None]


def test_continuous():
    ls = (np.array([0.0, 0.5, -1.0]), np.array([1.0, 2.0, -1.0]))
    _dist("gumbel_r", ["logpdf", "pdf", "logcdf", "cdf", "sf", "logsf"], (X,) + ls)
    _dist("gumbel_l", ["logpdf", "pdf", "logcdf", "cdf", "sf", "logsf"], (X,) + ls)
    q = np.array([-0.1, 0.0, 0.01, 0.5, 0.99, 1.0, 1.2])[:, None]
    _dist("gumbel_r", ["ppf"], (q,) + ls)
    _dist("gumbel_l", ["ppf"], (q,) + ls)
    pb = (np.array([1.5, 3.0, 0.5]), np.array([0.0, 0.5, -1.0]), np.array([1.0, 2.0, 0.5]))
    _dist("pareto", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"], (X,) + pb)
    _dist("pareto", ["ppf"], (q,) + pb)
    _dist("gennorm", ["logpdf", "pdf", "cdf"], (X[:-2], np.array([0.5, 1.0, 2.0, 3.5])), rtol=1e-9)
    _dist("truncnorm", ["logpdf", "pdf", "logcdf", "cdf", "logsf", "sf"],
          (X, np.array([-1.0, 0.5, -30.0, 2.0, 1.0]), np.array([1.0, 2.0, -20.0, 1.0, 40.0]), 0.3, 1.5), rtol=1e-9, atol=1e-12)
    _dist("vonmises", ["logpdf", "pdf"], (X, np.array([0.5, 2.0, 0.0, -1.0])))
    _dist("wrapcauchy", ["logpdf", "pdf"], (X, np.array([0.5, 0.9, 0.0, 1.0])))
    # Gradients in x and the parameters.
    pts = {"gumbel_r": (0.3, 0.5, 1.7), "gumbel_l": (0.3, 0.5, 1.7), "pareto": (2.5, 1.5, 0.2, 1.1), "gennorm": (0.7, 1.5),
           "truncnorm": (0.2, -1.0, 1.5, 0.1, 1.2), "vonmises": (0.4, 1.3), "wrapcauchy": (0.4, 0.6)}
    for name, pt in pts.items():
        # JAX's gumbel logpdf has no scale derivative (xlogy(-1, scale) meets a float0): x and loc only.
        nums = range(2) if name.startswith("gumbel") else range(len(pt))
        _grads(name, getattr(ST, name).logpdf, lambda *v, name=name: getattr(jst, name).logpdf(*v), [pt], nums, rtol=1e-7)
    g = qb.grad(ST.gumbel_r.logpdf, argnums=2)(qb.array(0.3), qb.array(0.5), qb.array(1.7)).item()
    z = (0.3 - 0.5) / 1.7
    np.testing.assert_allclose(g, -1.0 / 1.7 + z / 1.7 - z * np.exp(-z) / 1.7, rtol=1e-12)
    _grads("truncnorm.logcdf", ST.truncnorm.logcdf, lambda *v: jst.truncnorm.logcdf(*v), [(0.2, -1.0, 1.5, 0.1, 1.2)], [0, 1, 2, 3], rtol=1e-7)
    _grads("gennorm.cdf", ST.gennorm.cdf, lambda *v: jst.gennorm.cdf(*v), [(0.7, 1.5)], [0], rtol=1e-7)


def test_dirichlet():
    alpha = np.array([1.0, 2.0, 3.0])
    x = np.array([[0.2, 0.5, 0.0], [0.3, 0.25, 0.5], [0.5, 0.25, 0.5]])
    for f in ("logpdf", "pdf"):
        assert_close(getattr(ST.dirichlet, f)(qb.array(x), qb.array(alpha)), J(f"dirichlet.{f}/1", lambda: getattr(jst.dirichlet, f)(x, alpha)))
        assert_close(getattr(ST.dirichlet, f)(qb.array(x[:2]), qb.array(alpha)), J(f"dirichlet.{f}/2", lambda: getattr(jst.dirichlet, f)(x[:2], alpha)))
    _grads("dirichlet", lambda a: ST.dirichlet.logpdf(qb.array(x[:, 1]), qb.stack([a, qb.array(2.0), qb.array(3.0)])),
           lambda a: jst.dirichlet.logpdf(x[:, 1], jnp.stack([a, 2.0, 3.0])), [(1.5,)], [0])
    with pytest.raises(ShapeError):
        ST.dirichlet.logpdf(qb.array(x), qb.array([[1.0]]))
    with pytest.raises(ShapeError):
        ST.dirichlet.logpdf(qb.array([0.5]), qb.array(alpha))


def test_mode_rankdata_sem():
    a = np.array([[3.0, 1.0, 3.0, 2.0, np.nan], [1.0, 1.0, 2.0, 2.0, 5.0], [4.0, np.nan, np.nan, 0.0, -0.0]])
    for axis in (0, 1, -1, None):
        for kd in (False, True):
            assert_close(tuple(ST.mode(qb.array(a), axis=axis, keepdims=kd)), J(f"mode/{axis}/{kd}", lambda: tuple(jst.mode(a, axis=axis, keepdims=kd))))
    ai = np.array([[2, 2, 1], [1, 3, 3]])
    r = ST.mode(qb.array(ai), axis=1)
    assert_close(tuple(r), J("mode/int", lambda: tuple(jst.mode(ai, axis=1))))
    assert r.mode.dtype == qb.int64
    b = np.array([[3.0, 1.0, 3.0, 2.0, 2.0, 2.0], [5.0, 4.0, 4.0, 0.5, 9.0, 4.0]])
    for method in ("average", "min", "max", "dense", "ordinal"):
        for axis in (None, 0, 1):
            assert_close(ST.rankdata(qb.array(b), method, axis=axis), J(f"rankdata/{method}/{axis}", lambda: jst.rankdata(b, method, axis=axis)))
        assert_close(ST.rankdata(qb.array(a), method, axis=1), J(f"rankdata/nan/{method}", lambda: jst.rankdata(a, method, axis=1)))
    assert_close(qb.jit(lambda v: ST.rankdata(v, "average"))(qb.array(b)), J("rankdata/average/None", None))
    for axis in (0, 1, None):
        assert_close(ST.sem(qb.array(b), axis=axis), J(f"sem/{axis}", lambda: jst.sem(b, axis=axis)))
        assert_close(ST.sem(qb.array(a), axis=axis, nan_policy="omit", keepdims=True),
                     J(f"sem/omit/{axis}", lambda: jst.sem(a, axis=axis, nan_policy="omit", keepdims=True)))
    assert_close(ST.sem(qb.array(b), ddof=0, keepdims=True), J("sem/ddof0", lambda: jst.sem(b, ddof=0, keepdims=True)))
    assert ST.sem(qb.array(b.astype(np.float32))).dtype == qb.float32
    for bad in (lambda: ST.rankdata(qb.array(b), "bogus"), lambda: ST.mode(qb.array(b), nan_policy="bogus"),
                lambda: ST.mode(qb.array(b), axis=5)):
        with pytest.raises(InvalidArgumentError):
            bad()
    with pytest.raises(UnsupportedOperationError):
        ST.rankdata(qb.array(b), nan_policy="omit")


def test_gaussian_kde():
    rng = np.random.default_rng(0)
    data1 = rng.normal(size=7)
    data2 = rng.normal(size=(2, 9))
    w = rng.uniform(0.5, 1.5, size=9)
    pts2 = rng.normal(size=(2, 4))
    cases = ((data1, {}, np.array([0.0, 0.5, 3.0])), (data1, {"bw_method": "silverman"}, np.array([0.1])),
             (data1, {"bw_method": 0.4}, np.array([-1.0, 2.0])), (data2, {"weights": w}, pts2),
             (data2, {"bw_method": lambda k: 0.5 * k.neff ** -0.2}, pts2[:, 0]))
    for c, (data, kw, pts) in enumerate(cases):
        q = ST.gaussian_kde(qb.array(data), **kw)
        j = jst.gaussian_kde(jnp.asarray(data), **kw) if _REGEN else None
        for f in ("evaluate", "pdf", "logpdf", "__call__"):
            assert_close(getattr(q, f)(qb.array(pts)), J(f"kde{c}/{f}", lambda: getattr(j, f)(jnp.asarray(pts))), 1e-10, 1e-13, f)
        assert_close(q.covariance, J(f"kde{c}/cov", lambda: j.covariance), 1e-10, 1e-13)
        d = data.shape[0] if data.ndim == 2 else 1
        assert_close(q.integrate_gaussian(qb.array(np.full(d, 0.3)), qb.array(np.eye(d) * 0.7)),
                     J(f"kde{c}/ig", lambda: j.integrate_gaussian(jnp.full(d, 0.3), jnp.eye(d) * 0.7)), 1e-10, 1e-13)
        other = ST.gaussian_kde(qb.array(data[..., :5] + 0.2))
        assert_close(q.integrate_kde(other), J(f"kde{c}/ik", lambda: j.integrate_kde(jst.gaussian_kde(jnp.asarray(data[..., :5] + 0.2)))), 1e-10, 1e-13)
    q = ST.gaussian_kde(qb.array(data1))
    j = jst.gaussian_kde(jnp.asarray(data1)) if _REGEN else None
    assert_close(q.integrate_box_1d(-0.5, 1.0), J("kde/box", lambda: j.integrate_box_1d(-0.5, 1.0)), 1e-10, 1e-13)
    # A pytree: through jit and grad.
    f = qb.jit(lambda k, x: k.logpdf(x))
    assert_close(f(q, qb.array([0.2, 0.4])), J("kde/jit", lambda: j.logpdf(jnp.array([0.2, 0.4]))), 1e-10, 1e-13)
    g = qb.grad(lambda dset: ST.gaussian_kde(dset).logpdf(qb.array([0.3])).sum())(qb.array(data1))
    gj = J("kde/grad", lambda: jax.grad(lambda dset: jst.gaussian_kde(dset).logpdf(jnp.array([0.3])).sum())(jnp.asarray(data1)))
    assert_close(g, gj, 1e-8, 1e-10)
    s = q.resample(qb.random.key(1), (4000,))
    assert s.shape == (1, 4000)
    assert abs(float(s.numpy().mean()) - data1.mean()) < 0.1
    assert q.resample(qb.random.key(1)).shape == (1,)
    with pytest.raises(ShapeError):
        ST.gaussian_kde(qb.array(data2)).evaluate(qb.array(np.zeros((3, 2))))
    with pytest.raises(InvalidArgumentError):
        ST.gaussian_kde(qb.array(data1), bw_method="bogus")
    with pytest.raises(InvalidArgumentError):
        ST.gaussian_kde(qb.array([1.0]))
    with pytest.raises(UnsupportedOperationError):
        q.integrate_box(0.0, 1.0)


# ---- recorded JAX answers (QB_REGEN_REFS=1 regenerates) ----
nan, inf = float('nan'), float('inf')
_REF = {
    'bessel_jn/d0/0': ('float64', (), [0.11985236384014335]),
    'bessel_jn/d0/1': ('float64', (), [0.014998118135342384]),
    'bessel_jn/vmap': ('float64', (2, 2), [0.7651976865579666, 0.22389077914123573, 0.44005058574493355, 0.5767248077568735]),
    'bessel_jn0': ('float64', (1, 6), [0.9975015620660401, 0.7651976865579666, 0.22389077914123573, -0.17759677131433824, 0.16702466434058322, nan]),
    'bessel_jn3': ('float64', (4, 6), [0.9975015620660401, 0.7651976865579666, 0.22389077914123573, -0.17759677131433824, 0.16702466434058322, nan, 0.049937526036242, 0.44005058574493355, -0.5767248077568735, -0.3275791375914652, 0.06683312417585008, nan, 0.001248958658799919, 0.11490348493190049, 0.35283402861563773, 0.04656511627775215, -0.1603413519229982, nan, 2.0820315754756265e-05, 0.019563353982668407, -0.12894324947440206, 0.3648312306136669, -0.09890139456044972, nan]),
    'bessel_jn3/f32': ('float32', (4, 6), [nan, nan, nan, -0.17759671807289124, 0.1670246422290802, nan, nan, nan, nan, -0.3275791108608246, 0.06683309376239777, nan, nan, nan, nan, 0.04656507074832916, -0.16034133732318878, nan, nan, nan, nan, 0.36483117938041687, -0.09890136122703552, nan]),
    'bessel_jn60': ('float64', (21, 6), [0.99750156206604, 0.7651976865579666, 0.22389077914123567, -0.17759677131447874, 0.22639943660148285, nan, 0.04993752603624199, 0.44005058574493355, -0.5767248077568734, -0.32757913759172425, 0.05874488075403443, nan, 0.001248958658799919, 0.1149034849319005, 0.35283402861563773, 0.04656511627778904, -0.2205249485260794, nan, 2.0820315754756265e-05, 0.01956335398266841, -0.12894324947440206, 0.36483123061395545, -0.10284987045925031, nan, 2.602864854568404e-07, 0.0024766389641099557, 0.03399571980756843, 0.3912323604589575, 0.18966998738830432, nan, 2.6030817909644417e-09, 0.0002497577302112345, -0.007039629755871685, 0.2611405461203765, 0.17871786541457205, nan, 2.169363960376003e-11, 2.0938338002389276e-05, 0.0012024289717899933, 0.1310487317817956, -0.10031105468101828, nan, 1.549614867620228e-13, 1.5023258174368085e-06, -0.00017494407486827416, 0.05337641015593291, -0.238904498223183, nan, 9.68542923159465e-16, 9.422344172604502e-08, 2.2179552287925905e-05, 0.01840521665481655, -0.06692209407520983, nan, 5.3809434916023314e-18, 5.2492501799118765e-09, -2.492343435133064e-06, 0.0055202831394800525, 0.18536682296301515, nan, 2.6905328954342172e-20, 2.630615123687454e-10, 2.515386282716737e-07, 0.0014678026473116347, 0.23375223474192344, nan, 1.2229926610356454e-22, 1.1980067463031375e-11, -2.3042847583672514e-08, 0.0003509274497664865, 0.0483854117789083, nan, 5.0958844202514155e-25, 4.999718179448406e-13, 1.9326951487239857e-09, 7.627813166090583e-05, -0.1805282817851243, nan, 1.95998246940718e-27, 1.9256167644801734e-14, -1.4949420101531159e-10, 1.5207582205861462e-05, -0.26501934992105747, nan, 7.000020725188065e-30, 6.885408200044226e-16, 1.0729464475065249e-11, 2.80129580957378e-06, -0.16399687311225042, nan, 2.3333645478334654e-32, 2.2975315322103446e-17, -7.183016356018792e-13, 4.796743277517071e-07, 0.03542372756390687, nan, 7.291831233034798e-35, 7.186396586807494e-19, 4.5060058962940414e-14, 7.675015693646318e-08, 0.21713246445811074, nan, 2.144673766982822e-37, 2.115375568053261e-20, -2.6593078051675184e-15, 1.1526676641657228e-08, 0.3119882155690703, nan, 5.957470679556625e-40, 5.880344573594842e-22, 1.4817372490740483e-16, 1.631244226805965e-09, 0.3132475020093088, nan, 1.567765756298377e-42, 1.5484784408823308e-23, -7.819243165768593e-18, 2.1828179134572058e-10, 0.2518572880476855, nan, 3.9194377207323755e-45, 3.8735017580141686e-25, 3.918952421984259e-19, 2.7697387421511374e-11, 0.1652813452812936, nan]),
    'betabinom.logpmf': ('float64', (8, 3), [-inf, -inf, nan, 0.0, -0.7959069145177113, nan, -inf, -1.5843642748819833, nan, -inf, -1.9898293829901479, nan, -inf, -1.9898293829901479, nan, -inf, -2.326301619611361, nan, -inf, -3.193802187316084, nan, -inf, -inf, nan]),
    'betabinom.pmf': ('float64', (8, 3), [0.0, 0.0, nan, 1.0, 0.4511718750000013, nan, 0.0, 0.20507812500000022, nan, 0.0, 0.1367187500000001, nan, 0.0, 0.1367187500000001, nan, 0.0, 0.09765625000000008, nan, 0.0, 0.04101562500000004, nan, 0.0, 0.0, nan]),
    'betabinom/d0/0': ('float64', (), [0.08769841269841216]),
    'betabinom/d1/0': ('float64', (), [0.03769841269841245]),
    'binom.logpmf': ('float64', (8, 3), [-inf, -inf, -inf, 0.0, 0.0, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf]),
    'binom.pmf': ('float64', (8, 3), [0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
    'binom/d0/0': ('float64', (), [2.3809523809523814]),
    'dirichlet.logpdf/1': ('float64', (3,), [1.5040773967762764, -0.06453852113756842, -inf]),
    'dirichlet.logpdf/2': ('float64', (3,), [1.5040773967762764, -0.06453852113756842, -inf]),
    'dirichlet.pdf/1': ('float64', (3,), [4.500000000000011, 0.9375000000000026, 0.0]),
    'dirichlet.pdf/2': ('float64', (3,), [4.500000000000011, 0.9375000000000026, 0.0]),
    'dirichlet/d0/0': ('float64', (), [1.0632741758614113]),
    'expn': ('float64', (11, 10), [inf, inf, 0.5, 0.3333333333333333, 0.2, 0.1, inf, 0.4, inf, 0.0001666944490748457, 999.000499833375, 6.331539364136149, 0.9926689604692389, 0.4990039154364529, 0.24966691650035058, 0.11098618251191308, nan, nan, nan, 0.00016652781018133025, 1.2130613194252668, 0.5597735947761608, 0.3266438623245532, 0.22160436427517874, 0.13097731169586482, 0.0634583004271272, nan, nan, nan, 0.00010109686661984958, 0.3678794411714423, 0.2193839343955205, 0.14849550677592194, 0.10969196719776081, 0.07045423746172039, 0.03639399403141639, nan, nan, nan, 6.1313238491811e-05, 0.1487534400989532, 0.1000195824066327, 0.07310078653848079, 0.05673949017035426, 0.03852992442549515, 0.02094614039565254, 0.24792240016492204, 0.06399497210969066, 0.12050061743586579, 3.718525970358153e-05, 0.016595689455954646, 0.013048381094197046, 0.010641925085272829, 0.008930646556022721, 0.006697984917017046, 0.004061032950984167, 0.022127585941272863, 0.00971815524378402, 0.014639587483610873, 8.295079010499211e-06, 1.030576811219279e-10, 9.835525290649882e-11, 9.404856430858148e-11, 9.009116813346401e-11, 8.307130599417691e-11, 6.944390555412314e-11, 1.0821056517802429e-10, 9.202882689365018e-11, 1.0065379314430528e-10, 3.424410175085436e-13, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, nan, nan, nan, nan, nan, nan, nan, nan, nan, 0.0002748555961680934, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan]),
    'expn/d1/0': ('float64', (), [-1.2130613194252668]),
    'expn/d1/1': ('float64', (), [-0.048900510708061125]),
    'expn/d1/2': ('float64', (), [-0.4691152251789638]),
    'expn/f32': ('float32', (11, 10), [inf, inf, 0.5, 0.3333333432674408, 0.20000000298023224, 0.10000000149011612, inf, 0.4000000059604645, inf, 0.00016669444448780268, 999.0004272460938, 6.331536769866943, 0.9926689863204956, 0.49900391697883606, 0.24966691434383392, 0.11098618805408478, nan, nan, nan, 0.00016652779595460743, 1.2130613327026367, 0.5597735643386841, 0.32664382457733154, 0.22160431742668152, 0.1309773027896881, 0.06345830112695694, nan, nan, nan, 0.00010109686991199851, 0.3678794503211975, 0.21938425302505493, 0.14849555492401123, 0.10969185829162598, 0.07045416533946991, 0.03639399632811546, nan, nan, nan, 6.131324335001409e-05, 0.14875344932079315, 0.10001958906650543, 0.07310076802968979, 0.056739479303359985, 0.038529928773641586, 0.020946146920323372, 0.24792242050170898, 0.06399497389793396, 0.12050061672925949, 3.7185262044658884e-05, 0.016595689579844475, 0.013048382475972176, 0.010641924105584621, 0.008930646814405918, 0.006697984412312508, 0.004061032552272081, 0.022127585485577583, 0.009718154557049274, 0.014639584347605705, 8.295079169329256e-06, 1.0305768738394505e-10, 9.835525449641835e-11, 9.40485675449132e-11, 9.009117063474292e-11, 8.3071306777871e-11, 6.944390895657904e-11, 1.0821056550813779e-10, 9.20288290018334e-11, 1.0065379779655714e-10, 3.424410548961282e-13, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, nan, nan, nan, nan, nan, nan, nan, nan, nan, 0.000274855614406988, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan]),
    'expn/h': ('float64', (), [0.37376884323350923]),
    'fresnel': ('tuple', [('float64', (15,), [0.0, 0.014116998006576587, -0.014116998006576587, 0.6234009185462498, 0.6388876835093806, 0.6381155711611799, 0.496312998967375, -0.49919138191711687, 0.46816997858488224, 0.49772995379529944, 0.4999920422528454, 0.49999968169011383, 0.5, -0.5, nan]), ('float64', (15,), [0.0, 0.2994009760520472, -0.2994009760520472, 0.7154377229230733, 0.3654616834404876, 0.3648261990465601, 0.6057207892976857, -0.5636311887040122, 0.49989869420551575, 0.502199689643379, 0.5, 0.5, 0.5, -0.5, nan])]),
    'fresnel/f32': ('tuple', [('float32', (15,), [0.0, 0.014116998761892319, -0.014116998761892319, 0.6234010457992554, 0.6388876438140869, 0.6381155848503113, 0.4963130056858063, -0.49919137358665466, 0.4681699872016907, 0.49772781133651733, 0.5, 0.5, 0.5, -0.5, nan]), ('float32', (15,), [0.0, 0.2994009852409363, -0.2994009852409363, 0.7154377102851868, 0.3654617965221405, 0.36482617259025574, 0.6057207584381104, -0.5636311769485474, 0.4998987019062042, 0.5021975040435791, 0.5, 0.5, 0.5, -0.5, nan])]),
    'fresnel0/d0/0': ('float64', (), [0.3826834323650898]),
    'fresnel0/d0/1': ('float64', (), [0.0]),
    'fresnel0/d0/2': ('float64', (), [-0.9851093261547735]),
    'fresnel1/d0/0': ('float64', (), [0.9238795325112867]),
    'fresnel1/d0/1': ('float64', (), [1.0]),
    'fresnel1/d0/2': ('float64', (), [-0.1719291002794114]),
    'gennorm.cdf': ('float64', (8, 4), [0.24167886229825386, 0.024893534183931976, 1.1045248499319538e-05, 0.0, 0.3977790860720617, 0.24829265189570476, 0.16109940308129095, 0.13393306797878163, 0.5, 0.5, 0.5, 0.5, 0.5663499341405027, 0.6648399769821802, 0.7141961775233342, 0.7203077817950563, 0.6321205588285577, 0.8160602794142788, 0.9213503964748575, 0.96022288317989, 0.6731486528939438, 0.888434919925785, 0.9830525732376554, 0.9991941553881323, 0.7669193310863955, 0.9796188980108169, 0.9999969871194241, 1.0, 0.8613562298429414, 0.9992482804035112, 1.0, 1.0]),
    'gennorm.cdf/d0/0': ('float64', (), [0.30835783569595315]),
    'gennorm.logpdf': ('float64', (8, 4), [-3.1183451686887675, -3.6931471805599454, -9.5723649429247, -47.35287751480095, -2.2229543876539664, -1.3931471805599451, -1.0623649429247004, -0.874480099542452, -1.3862943611198906, -0.6931471805599453, -0.5723649429247004, -0.5875057104412642, -2.0187498931535663, -1.0931471805599453, -0.7323649429247004, -0.6279828644914195, -2.386294361119891, -1.6931471805599454, -1.5723649429247004, -1.5875057104412642, -2.6110392325114793, -2.1931471805599454, -2.8223649429247004, -4.721019651387877, -3.1751487431197223, -3.8931471805599456, -10.812364942924702, -59.20468609981176, -3.935804117916283, -7.193147180559945, -42.8223649429247, -700.7466226706506]),
    'gennorm.pdf': ('float64', (8, 4), [0.044230301579441064, 0.02489353418393197, 6.96265259733739e-05, 2.7221157795876227e-21, 0.10828870894051704, 0.2482926518957048, 0.34563743020526916, 0.4170788027812078, 0.25, 0.5, 0.5641895835477561, 0.5557116632956977, 0.13282140228324196, 0.33516002301781966, 0.4807706494196537, 0.5336671950834424, 0.09196986029286056, 0.18393972058572114, 0.2075537487102973, 0.20443489614567398, 0.07345816396951826, 0.11156508007421491, 0.059465144611814666, 0.008906092807190995, 0.041787887961806554, 0.020381101989183102, 2.0148817766617766e-05, 1.9396864145659078e-26, 0.01952998859794534, 0.0007517195964887862, 2.5262900015313253e-19, 4.673137522876285e-305]),
    'gennorm/d0/0': ('float64', (), [-1.2549900398011133]),
    'gennorm/d1/0': ('float64', (), [0.28967567173672315]),
    'geom.logpmf': ('float64', (8, 3), [-inf, -inf, -inf, -inf, -inf, -inf, -1.2039728043259361, 0.0, -inf, -1.5606477482646686, -inf, -0.6931471805599453, -1.7389852202340346, -inf, -1.0397207708399179, -1.9173226922034008, -inf, -1.3862943611198906, -2.6306725800808657, -inf, -2.772588722239781, -3.3440224679583306, -inf, -4.1588830833596715]),
    'geom.pmf': ('float64', (8, 3), [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.3, 1.0, 0.0, 0.20999999999999996, 0.0, 0.5, 0.17569860557215589, 0.0, 0.3535533905932738, 0.147, 0.0, 0.25, 0.07202999999999998, 0.0, 0.0625, 0.03529469999999999, 0.0, 0.015625000000000007]),
    'geom/d0/0': ('float64', (), [0.4761904761904763]),
    'gumbel_l.cdf': ('float64', (10, 3), [0.048568007099546576, 0.15951312625242164, nan, 0.39139468219559365, 0.42236415574108443, nan, 0.6321205588285577, 0.5410439306923363, nan, 0.7750382064500816, 0.6137341532783543, nan, 0.9340119641546875, 0.7230796659000911, nan, 0.9886857136195404, 0.807704354452035, nan, 0.9999999999778355, 0.978877691680742, nan, 1.0, 0.9999999981078213, nan, 1.0, 1.0, nan, 0.0, 0.0, nan]),
    'gumbel_l.logcdf': ('float64', (10, 3), [-3.024790254976561, -1.8356290638899615, nan, -0.9380388107358796, -0.8618874087582857, nan, -0.45867514538708193, -0.6142548006739437, nan, -0.25484295219866177, -0.4881934197124722, nan, -0.0682660312478767, -0.3242358749266895, nan, -0.01137877984508325, -0.21355918537343418, nan, -2.216449246386226e-11, -0.021348576145190565, nan, 0.0, -1.8921787488106934e-09, nan, 0.0, 0.0, nan, -inf, -inf, nan]),
    'gumbel_l.logpdf': ('float64', (10, 3), [-3.049787068367864, -2.6169211240103905, nan, -1.1965853037914096, -1.841958816653972, nan, -1.0, -1.7219479636313504, nan, -1.0918246976412704, -1.6943766050606595, nan, -1.7182818284590455, -1.7271725972476868, nan, -2.9816890703380645, -1.8418684512600736, nan, -21.332530197109353, -3.2005727112569198, nan, -658.6416330443618, -17.77868410374761, nan, nan, nan, nan, -inf, -inf, nan]),
    'gumbel_l.logsf': ('float64', (10, 3), [-0.049787068367863944, -0.17377394345044514, nan, -0.4965853037914095, -0.5488116360940265, nan, -1.0, -0.7788007830714049, nan, -1.4918246976412703, -0.951229424500714, nan, -2.7182818284590455, -1.2840254166877414, nan, -4.4816890703380645, -1.6487212707001282, nan, -24.532530197109352, -3.8574255306969745, nan, -665.1416330443618, -20.085536923187668, nan, -inf, -inf, nan, -0.0, -0.0, nan]),
    'gumbel_l.pdf': ('float64', (10, 3), [0.04736900967790791, 0.07302735923472654, nan, 0.3022244566309685, 0.15850663637714482, nan, 0.3678794411714423, 0.17871767308609124, nan, 0.33560355964344496, 0.183713719540656, nan, 0.17937407873401712, 0.17778637369097205, nan, 0.05070711360998073, 0.15852096053897108, nan, 5.437507266768494e-10, 0.04073886568897938, nan, 9.027618899817317e-287, 1.9002712520221817e-08, nan, nan, nan, nan, 0.0, 0.0, nan]),
    'gumbel_l.ppf': ('float64', (7, 3), [nan, nan, nan, nan, nan, nan, -4.60014922677658, -8.70029845355316, 3.60014922677658, -0.36651292058166435, -0.2330258411633287, -0.6334870794183356, 1.5271796258079011, 3.5543592516158022, -2.527179625807901, nan, nan, nan, nan, nan, nan]),
    'gumbel_l.sf': ('float64', (10, 3), [0.9514319929004534, 0.8404868737475784, nan, 0.6086053178044064, 0.5776358442589156, nan, 0.3678794411714423, 0.4589560693076638, nan, 0.22496179354991847, 0.38626584672164566, nan, 0.06598803584531251, 0.27692033409990896, nan, 0.011314286380459627, 0.19229564554796494, nan, 2.216447803418661e-11, 0.021122308319257963, nan, 1.3572476073250428e-289, 1.8921786948382924e-09, nan, 0.0, 0.0, nan, 1.0, 1.0, nan]),
    'gumbel_l/d0/0': ('float64', (), [0.06528837329248491]),
    'gumbel_l/d1/0': ('float64', (), [-0.06528837329248491]),
    'gumbel_r.cdf': ('float64', (10, 3), [1.8921786948382924e-09, 0.003168165149053246, nan, 0.13348679665808386, 0.16168281414512647, nan, 0.3678794411714423, 0.27692033409990896, nan, 0.5115448336890416, 0.3494932270814473, nan, 0.6922006275553463, 0.4589560693076638, nan, 0.8000107130043537, 0.545239211892605, nan, 0.9600574006362038, 0.7716376066206998, nan, 0.9984976904055608, 0.9514319929004534, nan, 1.0, 1.0, nan, 0.0, 0.0, nan]),
    'gumbel_r.logcdf': ('float64', (10, 3), [-20.085536923187668, -5.75460267600573, nan, -2.0137527074704766, -1.8221188003905089, nan, -1.0, -1.2840254166877414, nan, -0.6703200460356392, -1.0512710963760241, nan, -0.3678794411714423, -0.7788007830714049, nan, -0.22313016014842982, -0.6065306597126334, nan, -0.040762203978366204, -0.2592402606458915, nan, -0.0015034391929775724, -0.049787068367863944, nan, -0.0, -0.0, nan, -inf, -inf, nan]),
    'gumbel_r.logpdf': ('float64', (10, 3), [-17.085536923187668, -4.697749856565675, nan, -1.3137527074704767, -1.9152659809504544, nan, -1.0, -1.7271725972476868, nan, -1.0703200460356392, -1.6944182769359695, nan, -1.3678794411714423, -1.7219479636313504, nan, -1.72313016014843, -1.7996778402725786, nan, -3.2407622039783663, -2.3023874412058367, nan, -6.501503439192978, -3.7429342489278095, nan, -inf, -inf, nan, nan, nan, nan]),
    'gumbel_r.logsf': ('float64', (10, 3), [-1.8921786966284627e-09, -0.003173194409419892, nan, -0.14327793238697964, -0.17635874670762788, nan, -0.4586751453870813, -0.3242358749266896, nan, -0.7165075899896719, -0.43000356921821103, nan, -1.178307096420718, -0.6142548006739437, nan, -1.6094914788905252, -0.7879837387044486, nan, -3.2203118713947108, -1.4768214672118882, nan, -6.500751625416099, -3.024790254976561, nan, -inf, -inf, nan, -0.0, -0.0, nan]),
    'gumbel_r.pdf': ('float64', (10, 3), [3.800542504044357e-08, 0.00911576582238495, nan, 0.2688093981817773, 0.14730264767693968, nan, 0.3678794411714423, 0.17778637369097205, nan, 0.3428987564677318, 0.18370606400495393, nan, 0.2546463800435825, 0.17871767308609124, nan, 0.17850651851312094, 0.16535214944520907, nan, 0.039134055595672984, 0.10001976713226107, nan, 0.0015011805618533062, 0.02368450483895395, nan, 0.0, 0.0, nan, nan, nan, nan]),
    'gumbel_r.ppf': ('float64', (7, 3), [nan, nan, nan, nan, nan, nan, -1.5271796258079011, -2.5543592516158022, 0.5271796258079011, 0.36651292058166435, 1.2330258411633288, -1.3665129205816644, 4.600149226776579, 9.700298453553158, -5.600149226776579, nan, nan, nan, nan, nan, nan]),
    'gumbel_r.sf': ('float64', (10, 3), [0.9999999981078213, 0.9968318348509467, nan, 0.8665132033419162, 0.8383171858548735, nan, 0.6321205588285577, 0.7230796659000911, nan, 0.4884551663109584, 0.6505067729185527, nan, 0.3077993724446537, 0.5410439306923363, nan, 0.19998928699564633, 0.45476078810739495, nan, 0.03994259936379618, 0.2283623933793002, nan, 0.0015023095944391995, 0.04856800709954656, nan, 0.0, 0.0, nan, 1.0, 1.0, nan]),
    'gumbel_r/d0/0': ('float64', (), [0.07343943321354332]),
    'gumbel_r/d1/0': ('float64', (), [-0.07343943321354332]),
    'hyp1f1': ('float64', (6, 6, 8), [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, inf, inf, inf, inf, inf, inf, inf, inf, 1.0, 2.7182818284590455, 0.1353352832366127, 22026.465794806718, 9.889030319346946e+42, 1.3041808783936323e+52, 4.650663644598907e-53, 7.175095973164411e-66, 1.0, 1.5451177039180575, 0.5100044720379714, 925.7789341617602, 1.3345569652113963e+40, 1.3188705146607973e+49, nan, nan, 1.0, 5.0601569385574106, -0.2799761491308178, 123458.19122156805, 1.7439990421382505e+44, 2.5322313881487306e+53, nan, nan, 1.0, 1.4365636569180897, 0.5676676416183064, 440.3093158961342, 2.0179635382811838e+39, 1.8113623311022648e+48, 6.405762496649715e-57, 6.377863087257247e-70, 1.0, -9.120313877114821, -0.11990459652327272, -2469162.8244313616, -3.45311810343374e+46, -6.07735533155695e+55, nan, nan, inf, inf, inf, inf, inf, inf, inf, inf, 1.0, 1.75338765437709, 0.4657596075936405, 4042.755430890399, 5.621719813985496e+41, 6.731079553649461e+50, nan, nan, 1.0, 1.2522550569468747, 0.7236627387076969, 187.97804552711258, 7.645599737222187e+38, 6.85030576739002e+47, 2.3825882811231426e-57, 2.3759880046475998e-70, 1.0, 2.7182818284590455, 0.1353352832366127, 22026.465794806718, 9.889030319346946e+42, 1.3041808783936323e+52, 4.650663644598907e-53, 7.175095973164411e-66, 1.0, 1.2039946674617061, 0.7596197536913264, 93.13726509924558, 1.1590955689059129e+38, 9.428473654651146e+46, nan, nan, 1.0, -2.718281828459045, 0.676676416183064, -418502.8501013277, -1.94813897291135e+45, -3.1169922993607795e+54, 1.1254606019929348e-50, 2.1597038879224864e-63, inf, inf, inf, inf, inf, inf, inf, inf, 1.0, 5.43656365691809, -0.1353352832366126, 242291.12374287372, 9.889030319346943e+44, 1.578058862856295e+54, -5.557543055295695e-51, -1.0690893000014972e-63, 1.0, 2.2725588519590287, 0.22498881990507077, 8796.399874536726, 1.314538610733224e+42, 1.5760502650196526e+51, nan, nan, 1.0, 12.150392346393522, -0.3600119254345909, 1419768.6990480325, 1.7527190373489453e+46, 3.076661136600707e+55, nan, nan, 1.0, 1.9999999999999996, 0.2969970751450811, 3964.7838430652077, 1.9776042675155596e+41, 2.1555211740116953e+50, -7.783001433429404e-55, -9.630573261758442e-68, 1.0, -33.421098569901865, -1.5599522982616354, -30864536.805392023, -3.5049148749852444e+48, -7.444760281157263e+57, nan, nan, inf, inf, inf, inf, inf, inf, inf, inf, 1.0, -0.30099866686542653, 4.679679206749689, 79.10065106223875, 4.579826549424502e+37, 3.690480568323306e+46, nan, nan, 1.0, 0.44456169483691055, 2.360231328913149, 4.903207645426564, 6.432592542718438e+34, 3.8558862759194187e+43, 1.1447558259995137e-61, 7.47009522157751e-75, 1.0, -1.462651745907182, 8.780021942968093, 360.9866552441692, 7.971142011999722e+38, 7.08867354247619e+47, 2.3066242427317268e-57, 2.3146589357738383e-70, 1.0, 0.5323617862171907, 2.1175785015515336, 2.296195246705887, 9.858515582741218e+33, 5.354215523783026e+42, nan, nan, 1.0, 2.30423850174841, -9.976309956290704, -4736.403740834524, -1.5375768298315915e+41, -1.6652186785589809e+50, 5.67246378905617e-55, 7.058220588563302e-68, inf, inf, inf, inf, inf, inf, inf, inf, 1.0, 9.513986399606662, -0.13533528323661317, 1563879.0714312766, 5.042911011350971e+46, 9.704409916127033e+55, 3.264824011803995e-49, 7.857447600212357e-62, 1.0, 3.2269779909283, 0.07125391303322486, 50810.74401212661, 6.605890158175764e+43, 9.574835077623067e+52, nan, nan, 1.0, 23.543265075467374, -0.060026832227829896, 9490845.075158047, 8.98137706713174e+47, 1.899648334496828e+57, nan, nan, 1.0, 2.7182818284590455, 0.1353352832366127, 22026.465794806718, 9.889030319346946e+42, 1.3041808783936323e+52, 4.650663644598907e-53, 7.175095973164411e-66, 1.0, -80.50762872083662, -1.8000596271729348, -220681438.30855313, -1.8133618080419368e+50, -4.633603605603958e+59, nan, nan]),
    'hyp1f1/d0/0': ('float64', (), [0.32324091230322977]),
    'hyp1f1/d0/1': ('float64', (), [-0.6688116781919016]),
    'hyp1f1/d0/2': ('float64', (), [191.36570930614042]),
    'hyp1f1/d1/0': ('float64', (), [-0.16610121194614533]),
    'hyp1f1/d1/1': ('float64', (), [0.19104929059205103]),
    'hyp1f1/d1/2': ('float64', (), [-397.7355377053356]),
    'hyp1f1/d2/0': ('float64', (), [0.7025574585997436]),
    'hyp1f1/d2/1': ('float64', (), [0.11570218085617291]),
    'hyp1f1/d2/2': ('float64', (), [207.70724118185615]),
    'hyp1f1/f32': ('float32', (6, 6, 8), [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, inf, inf, inf, inf, inf, inf, inf, inf, 1.0, 2.7182817459106445, 0.1353352814912796, 22026.46484375, inf, inf, 0.0, 0.0, 1.0, 1.5451174974441528, 0.5100044012069702, 925.779052734375, inf, inf, nan, nan, 1.0, 5.06015682220459, -0.27997609972953796, 123458.2265625, inf, inf, nan, nan, 1.0, 1.4365637302398682, 0.5676676630973816, 440.3092956542969, inf, inf, 0.0, 0.0, 1.0, -9.12031364440918, -0.1199040338397026, -2469162.5, -inf, -inf, nan, nan, inf, inf, inf, inf, inf, inf, inf, inf, 1.0, 1.7533875703811646, 0.4657595157623291, 4042.75390625, inf, inf, nan, nan, 1.0, 1.2522552013397217, 0.7236626744270325, 187.9780731201172, inf, inf, 0.0, 0.0, 1.0, 2.7182817459106445, 0.1353352814912796, 22026.46484375, inf, inf, 0.0, 0.0, 1.0, 1.203994631767273, 0.7596197128295898, 93.13724517822266, 1.1590947833114209e+38, inf, nan, nan, 1.0, -2.7182817459106445, 0.6766760349273682, -418502.84375, -inf, -inf, 0.0, 0.0, inf, inf, inf, inf, inf, inf, inf, inf, 1.0, 5.436563491821289, -0.13533541560173035, 242291.1875, inf, inf, -0.0, -0.0, 1.0, 2.2725586891174316, 0.22498884797096252, 8796.3974609375, inf, inf, nan, nan, 1.0, 12.150392532348633, -0.3600124716758728, 1419768.75, inf, inf, nan, nan, 1.0, 2.000000238418579, 0.29699698090553284, 3964.783935546875, inf, inf, -0.0, -0.0, 1.0, -33.42110061645508, -1.5599493980407715, -30864538.0, -inf, -inf, nan, nan, inf, inf, inf, inf, inf, inf, inf, inf, 1.0, -0.30099865794181824, 4.679678440093994, 79.10063171386719, 4.579826907492398e+37, inf, nan, nan, 1.0, 0.44456160068511963, 2.360231876373291, 4.9032063484191895, 6.432587993542819e+34, inf, 0.0, 0.0, 1.0, -1.4626518487930298, 8.780022621154785, 360.9866027832031, inf, inf, 0.0, 0.0, 1.0, 0.5323617458343506, 2.1175785064697266, 2.2961955070495605, 9.858508195484606e+33, inf, nan, nan, 1.0, 2.3042383193969727, -9.976309776306152, -4736.40234375, -inf, -inf, 0.0, 0.0, inf, inf, inf, inf, inf, inf, inf, inf, 1.0, 9.513985633850098, -0.13533452153205872, 1563878.875, inf, inf, 0.0, 0.0, 1.0, 3.226978302001953, 0.07125391811132431, 50810.7421875, inf, inf, nan, nan, 1.0, 23.543264389038086, -0.060027968138456345, 9490843.0, inf, inf, nan, nan, 1.0, 2.7182817459106445, 0.1353352814912796, 22026.46484375, inf, inf, 0.0, 0.0, 1.0, -80.50762939453125, -1.800070881843567, -220681424.0, -inf, -inf, nan, nan]),
    'hyp1f1/h': ('float64', (), [0.4872127070012814]),
    'hyp1f1/vmap': ('float64', (2,), [1.1661960252533436, 0.44104069538121077]),
    'hyp2f1': ('float64', (6, 5, 6, 7), [1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.1458567132625834, 0.8431139667085169, 2.183276608364652, 3.0000000000000004, inf, 5.359951936067019e+114, 1.0, 1.4285714285714286, 0.6666666666666666, 19.999999999999982, inf, -2.0, 0.25, 1.0, 1.1062664173343362, 0.8761155510153863, 1.6327805141680904, 1.7692307692307672, inf, 1.3030449779311838e+113, 1.0, 1.085635836664318, 0.8951158378408767, 1.4389479423258897, 1.5000000000000047, inf, 6.083598343628772e+111, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 0.88, 1.2, 0.62, 0.6000000000000001, inf, 2.2, 1.0, 0.7, 1.5, 0.050000000000000044, 0.0, inf, 4.0, 1.0, 0.9090909090909091, 1.1515151515151516, 0.7121212121212122, 0.6969696969696967, inf, 1.9090909090909092, 1.0, 0.925, 1.125, 0.7625, 0.7500000000000013, inf, 1.75, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.2305399189310302, 0.7774814917973811, 3.8995583138443526, inf, inf, 9.543702391319545e+115, 1.0, 1.7074694419062768, 0.5443310539518174, 89.44271909999146, inf, inf, 0.125, 1.0, 1.1661688153740397, 0.822656809634948, 2.2952778003602075, 2.8749999999999996, inf, 2.3201492556448884e+114, 1.0, 1.1330480437646713, 0.8489846928149026, 1.824039000344243, 2.000000000000003, inf, 1.0832220916989864e+113, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.3243880619552975, 0.7189620110971612, 8.167229140059407, inf, inf, 1.3359740771761847e+117, 1.0, 2.0408163265306123, 0.4444444444444444, 399.99999999999926, inf, 4.0, 0.0625, 1.0, 1.2312195106648036, 0.7740331891199983, 3.5477065154209098, 7.666666666666658, inf, 3.2478621680441453e+115, 1.0, 1.1838976095305185, 0.8065122162121645, 2.4420823069646356, 3.0000000000000053, inf, 1.516350616101464e+114, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.0990131775945837, 0.8863294064573161, 1.65013585748073, 1.8750000000000002, inf, 7.892533283776166e+113, 1.0, 1.283604916843771, 0.752897956971237, 8.141810630738082, inf, inf, 0.37892914162759955, 1.0, 1.0725902650155186, 0.9107557380206182, 1.37850194704798, 1.437499999999995, inf, 1.9187333224405196e+112, 1.0, 1.0587175827044515, 0.9247146369458072, 1.2733880289760429, 1.3043478260869603, inf, 8.958090971818306e+110, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.0693110283741396, 0.9168888811519647, 1.40251104215389, 1.5000000000000002, inf, 1.91832050158379e+113, 1.0, 1.1952286093343938, 0.816496580927726, 4.472135954999578, inf, inf, 0.5, 1.0, 1.0510227303439366, 0.9350041070965495, 1.2458989193240857, 1.2777777777777757, inf, 4.663577018474373e+111, 1.0, 1.0413732738729462, 0.9453045921555291, 1.181759609992678, 1.2000000000000022, inf, 2.1773077577392657e+110, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 0.94, 1.1, 0.81, 0.799999999999999, inf, 1.6, 1.0, 0.85, 1.25, 0.525, 0.5, inf, 2.5, 1.0, 0.9545454545454546, 1.0757575757575757, 0.8560606060606061, 0.8484848484848496, inf, 1.4545454545454546, 1.0, 0.9625, 1.0625, 0.88125, 0.8750000000000001, inf, 1.375, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.1080625510569322, 0.8805450358166301, 1.8262489729983742, 2.3561944901923466, inf, 3.415682475340501e+114, 1.0, 1.3144952929355724, 0.7434748205152686, 13.502370863447354, nan, nan, -1.0269476835291384e+112, 1.0, 1.0789213499599677, 0.9059190664784439, 1.4508584010279126, 1.5423463322609652, inf, 8.303783201704638e+112, 1.0, 1.0636928930766716, 0.9204770669088145, 1.3162232096696516, 1.3581221810508397, inf, 3.8768333004523357e+111, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.1499254736525846, 0.8471851864746728, 2.6510346779991236, inf, inf, 4.781442798167699e+115, 1.0, 1.4513490256203352, 0.6804138174397717, 46.95742752749552, inf, inf, 0.3125, 1.0, 1.1085957728589881, 0.8788304583657492, 1.7705883598421448, 2.0763888888888875, inf, 1.1624064163316814e+114, 1.0, 1.087210658818809, 0.8971446424852156, 1.5028993051684594, 1.6000000000000005, inf, 5.426996997283649e+112, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.047430195072107, 0.9402734481031921, 1.2413456723528955, 1.2809371184893619, inf, 2.824727097466741e+112, 1.0, 1.1310744481049886, 0.8658288366579917, 2.5533985206438072, inf, inf, 8.37432125561253e+115, 1.0, 1.0350765094484682, 0.9534968723985344, 1.1552484685522373, 1.1716601338323849, inf, 6.867112551652478e+110, 1.0, 1.0285214245922052, 0.9609743497728396, 1.1176196403409202, 1.1279367524423158, inf, 3.206081484737323e+109, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 0.7805714285714286, 1.457142857142857, 0.4462857142857143, 0.4285714285714286, inf, 5.457142857142857, 1.0, 0.48999999999999994, 2.25, 0.0025000000000000044, 0.0, inf, 16.0, 1.0, 0.8308668076109936, 1.3382663847780127, 0.5514446793516561, 0.5348837209302322, inf, 4.086680761099366, 1.0, 0.859, 1.275, 0.61525, 0.600000000000001, inf, 3.4000000000000004, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.24, 0.6, 1.76, 1.8000000000000027, inf, -1.4000000000000004, 1.0, 1.6, 0.0, 2.9, 3.0000000000000053, inf, -5.0, 1.0, 1.1818181818181819, 0.696969696969697, 1.5757575757575757, 1.6060606060606095, inf, -0.8181818181818183, 1.0, 1.15, 0.75, 1.475, 1.4999999999999993, inf, -0.5, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 0.6785714285714285, 1.7071428571428573, 0.24678571428571416, 0.2285714285714283, inf, 8.457142857142857, 1.0, 0.26875000000000004, 2.96875, -0.15781249999999986, -0.12500000000000022, inf, 26.875, 1.0, 0.7510570824524313, 1.52061310782241, 0.3748678646934461, 0.3551797040169141, inf, 6.10570824524313, 1.0, 0.791875, 1.421875, 0.45671875000000006, 0.4375, inf, 4.9375, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 0.5817142857142857, 1.9714285714285715, 0.09885714285714275, 0.08571428571428572, inf, 11.971428571428573, 1.0, 0.07, 3.75, -0.09250000000000029, nan, inf, 40.0, 1.0, 0.6744186046511628, 1.711768851303735, 0.23009161381254395, 0.21071176885130374, inf, 8.44186046511628, 1.0, 0.727, 1.575, 0.32075000000000004, 0.30000000000000016, inf, 6.7, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 0.8442400000000001, 1.314, 0.59074, 0.5760000000000007, inf, 3.9039999999999995, 1.0, 0.6335500000000001, 1.84875, 0.20698750000000007, 0.19500000000000037, inf, 10.555, 1.0, 0.8802748414376322, 1.2330866807610994, 0.6726550387596899, 0.6596194503171253, inf, 3.027484143763213, 1.0, 0.900355, 1.189875, 0.72119875, 0.7094999999999992, inf, 2.5854999999999997, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.3855764020546346, 0.686889573335858, 13.735716105422389, inf, inf, 6.00018568905185e+117, 1.0, 2.271300036940085, 0.3935411081313583, 982.5824208926298, inf, inf, 0.04123462221165296, 1.0, 1.2729464699674526, 0.7469597379540441, 4.873793789995295, inf, inf, 1.4586952308960688e+116, 1.0, 1.2161883024427398, 0.7826355944323818, 3.009818085682566, 4.285714285714289, inf, 6.810309954014945e+114, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 0.724, 1.46, 0.1260000000000001, 0.08000000000000008, inf, 3.76, 1.0, 0.31000000000000005, 2.15, -1.1849999999999996, inf, inf, 7.8999999999999995, 1.0, 0.7909090909090909, 1.3484848484848484, 0.337878787878788, 0.3030303030303032, inf, 3.090909090909091, 1.0, 0.8275, 1.2875, 0.4537500000000001, 0.425, inf, 2.7249999999999996, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.6326934644265743, 0.5699761146585842, 55.66561023183268, inf, inf, 2.3363421616021626e+111, 1.0, 3.2379110594129887, 0.21503767145105931, 6995.663645191729, inf, inf, -2.219311441708854e+106, 1.0, 1.439709935385444, 0.6474306530583684, 13.15633561622102, inf, inf, 2.597288687485412e+117, 1.0, 1.3444097038357017, 0.6944032751987208, 6.113651545943313, 22.804277285182685, inf, 1.2126151678487156e+116, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.9251237082485575, 0.47338466044250893, 231.91533735250943, inf, inf, 4.180865462893786e+109, 1.0, 4.510152930495312, 0.09182625856398363, 43921.43421390051, inf, inf, -0.02989510110344839, 1.0, 1.6308838747565966, 0.5622856739930756, 39.66406807300602, nan, nan, 1.8997118514288886e+113, 1.0, 1.4884811900959838, 0.6173437831694579, 13.949777187481002, inf, inf, 1.6974784312350508e+117, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.2560537851180673, 0.7685628280603979, 6.058332515467295, inf, inf, 8.835288431831388e+116, 1.0, 1.8094458372978954, 0.5350123070943374, 269.47520301029385, nan, nan, 6.556122606248145e+108, 1.0, 1.1832227544503036, 0.8146383739117941, 2.8589812802088153, 5.615242129486143, inf, 2.1479308186756177e+115, 1.0, 1.1460700869520126, 0.8416628096710288, 2.0757549768478576, 2.4607559235570204, inf, 1.0028184821224287e+114, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 0.6976, 1.7904761904761906, 0.34820952380952386, 0.3333333333333329, inf, 14.885714285714284, 1.0, 0.3429999999999999, 3.375, 0.00012500000000000033, 0.0, inf, 64.0, 1.0, 0.7631736407515258, 1.5702261757549165, 0.4495691890382544, 0.43396226415094225, inf, 9.686824364753281, 1.0, 0.8006500000000001, 1.45625, 0.51538125, 0.5000000000000012, inf, 7.300000000000001, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.3599999999999999, 0.4, 2.1399999999999997, 2.200000000000004, inf, -2.5999999999999996, 1.0, 1.9, -0.5, 3.8499999999999996, 4.0, inf, -8.0, 1.0, 1.2727272727272727, 0.5454545454545454, 1.8636363636363638, 1.9090909090909096, inf, -1.7272727272727275, 1.0, 1.225, 0.625, 1.7125, 1.7500000000000033, inf, -1.25, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 0.5667142857142857, 2.2630952380952376, 0.1645654761904762, 0.15238095238095226, inf, 26.971428571428564, 1.0, 0.0971875000000001, 4.9296875, -0.07394531249999944, -0.06250000000000001, inf, 124.18749999999999, 1.0, 0.6575501615541105, 1.901835932825402, 0.27043048685627663, 0.25465714627627695, inf, 16.938210538912607, 1.0, 0.7101718750000001, 1.716796875, 0.3451308593750001, 0.32812500000000067, inf, 12.390625, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 0.4486857142857143, 2.7904761904761908, 0.0539809523809523, 0.047619047619047554, inf, 43.17142857142856, 1.0, -0.09799999999999996, 6.75, -0.0070000000000004555, nan, inf, 208.0, 1.0, 0.5600941401731222, 2.2661055486856276, 0.14394271809804932, 0.13119789381307562, inf, 26.48725517571503, 1.0, 0.6256, 2.0, 0.21577500000000016, 0.2000000000000002, inf, 19.000000000000004, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 0.7825168, 1.5322, 0.5002582000000001, 0.48639999999999856, inf, 9.3952, 1.0, 0.5161915, 2.5631874999999997, 0.15683818750000023, 0.14949999999999986, inf, 37.823499999999996, 1.0, 0.8305801188719135, 1.3864184849814511, 0.5858817214488014, 0.5724999002752384, inf, 6.326857872272528, 1.0, 0.857842075, 1.310471875, 0.6393900343750002, 0.6267250000000006, inf, 4.904425]),
    'hyp2f1/d0/0': ('float64', (), [0.5417230808057302]),
    'hyp2f1/d0/1': ('float64', (), [-0.1484234225600632]),
    'hyp2f1/d0/2': ('float64', (), [0.03975296755260463]),
    'hyp2f1/d1/0': ('float64', (), [0.29098295003699565]),
    'hyp2f1/d1/1': ('float64', (), [-0.04761647810520066]),
    'hyp2f1/d1/2': ('float64', (), [0.11054227104566675]),
    'hyp2f1/d2/0': ('float64', (), [-0.17480557808520492]),
    'hyp2f1/d2/1': ('float64', (), [0.028112793238923184]),
    'hyp2f1/d2/2': ('float64', (), [-0.019221408420893815]),
    'hyp2f1/d3/0': ('float64', (), [1.3716694115406955]),
    'hyp2f1/d3/1': ('float64', (), [0.22543119630173114]),
    'hyp2f1/d3/2': ('float64', (), [0.4124645807478432]),
    'hyp2f1/f32': ('float32', (6, 5, 6, 7), [1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.1458567380905151, 0.8431140780448914, 2.183271646499634, 2.999997854232788, inf, -inf, 1.0, 1.4285714626312256, 0.6666666865348816, 19.999996185302734, inf, -2.0, 0.25, 1.0, 1.1062663793563843, 0.876115620136261, 1.6327778100967407, 1.7692317962646484, inf, inf, 1.0, 1.0856356620788574, 0.8951156735420227, 1.4389485120773315, 1.5000005960464478, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 0.8799999952316284, 1.2000000476837158, 0.6200000047683716, 0.5999998450279236, inf, 2.200000047683716, 1.0, 0.699999988079071, 1.5, 0.050000011920928955, 0.0, inf, 4.0, 1.0, 0.9090909361839294, 1.1515151262283325, 0.7121212482452393, 0.6969694495201111, inf, 1.9090908765792847, 1.0, 0.925000011920929, 1.125, 0.762499988079071, 0.7500004768371582, inf, 1.75, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.2305399179458618, 0.7774814367294312, 3.899553060531616, inf, inf, -inf, 1.0, 1.7074694633483887, 0.5443310737609863, 89.44268798828125, inf, inf, 0.125, 1.0, 1.1661688089370728, 0.8226566910743713, 2.2952728271484375, 2.8750016689300537, inf, inf, 1.0, 1.1330479383468628, 0.8489846587181091, 1.8240352869033813, 2.0000016689300537, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.324388027191162, 0.7189620137214661, 8.167213439941406, inf, inf, -inf, 1.0, 2.040816307067871, 0.4444444477558136, 399.99981689453125, inf, 4.0, 0.0625, 1.0, 1.2312192916870117, 0.7740331888198853, 3.547697067260742, 7.6666717529296875, inf, inf, 1.0, 1.1838974952697754, 0.8065122365951538, 2.4420852661132812, 3.0000033378601074, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.0990132093429565, 0.8863292932510376, 1.6501331329345703, 1.8749998807907104, inf, -inf, 1.0, 1.2836049795150757, 0.7528979778289795, 8.14180850982666, inf, inf, 0.37892913818359375, 1.0, 1.0725902318954468, 0.9107555747032166, 1.3785001039505005, 1.4374995231628418, inf, -inf, 1.0, 1.0587173700332642, 0.9247147440910339, 1.273386001586914, 1.304348111152649, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.0693109035491943, 0.916888952255249, 1.402511477470398, 1.5000003576278687, inf, inf, 1.0, 1.1952285766601562, 0.8164966106414795, 4.472135543823242, inf, inf, 0.5, 1.0, 1.0510227680206299, 0.9350041747093201, 1.2458974123001099, 1.2777776718139648, inf, inf, 1.0, 1.0413732528686523, 0.9453044533729553, 1.1817586421966553, 1.2000007629394531, inf, -inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 0.9399999976158142, 1.100000023841858, 0.8100000023841858, 0.8000002503395081, inf, 1.600000023841858, 1.0, 0.8500000238418579, 1.25, 0.5249999761581421, 0.5000004768371582, inf, 2.5, 1.0, 0.9545454382896423, 1.075757622718811, 0.8560606241226196, 0.848484456539154, inf, 1.454545497894287, 1.0, 0.9624999761581421, 1.0625, 0.8812500238418579, 0.8750012516975403, inf, 1.375, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.108062505722046, 0.8805451393127441, 1.8262454271316528, 2.3561933040618896, inf, inf, 1.0, 1.3144954442977905, 0.7434749007225037, 13.502379417419434, nan, nan, inf, 1.0, 1.0789211988449097, 0.9059191346168518, 1.4508557319641113, 1.542346715927124, inf, inf, 1.0, 1.063692569732666, 0.920477032661438, 1.3162239789962769, 1.3581230640411377, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.1499252319335938, 0.8471851944923401, 2.651034116744995, inf, inf, inf, 1.0, 1.451349139213562, 0.6804138422012329, 46.9574089050293, inf, inf, 0.3125, 1.0, 1.1085957288742065, 0.8788304924964905, 1.770585060119629, 2.0763885974884033, inf, inf, 1.0, 1.0872106552124023, 0.8971447348594666, 1.5028969049453735, 1.6000016927719116, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.0474302768707275, 0.9402734637260437, 1.241343379020691, 1.2809374332427979, inf, -inf, 1.0, 1.13107430934906, 0.8658289313316345, 2.553393602371216, inf, inf, -inf, 1.0, 1.035076379776001, 0.9534968137741089, 1.155247449874878, 1.1716594696044922, inf, inf, 1.0, 1.0285212993621826, 0.960974395275116, 1.117618441581726, 1.1279375553131104, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 0.7805714011192322, 1.4571428298950195, 0.4462857246398926, 0.4285706877708435, inf, 5.457143306732178, 1.0, 0.4899999797344208, 2.25, 0.002500001108273864, 0.0, inf, 16.0, 1.0, 0.830866813659668, 1.338266372680664, 0.5514447093009949, 0.5348835587501526, inf, 4.0866804122924805, 1.0, 0.859000027179718, 1.274999976158142, 0.6152499914169312, 0.6000003218650818, inf, 3.4000000953674316, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.2400000095367432, 0.6000000238418579, 1.7599999904632568, 1.800000548362732, inf, -1.4000000953674316, 1.0, 1.600000023841858, 0.0, 2.9000000953674316, 3.0000033378601074, inf, -5.0, 1.0, 1.1818181276321411, 0.696969747543335, 1.5757575035095215, 1.6060571670532227, inf, -0.8181817531585693, 1.0, 1.149999976158142, 0.75, 1.475000023841858, 1.5000005960464478, inf, -0.5, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 0.6785714030265808, 1.7071428298950195, 0.2467857450246811, 0.22857104241847992, inf, 8.45714282989502, 1.0, 0.26874998211860657, 2.96875, -0.1578124612569809, -0.12500011920928955, inf, 26.875, 1.0, 0.7510570883750916, 1.520613193511963, 0.37486788630485535, 0.35517966747283936, inf, 6.10570764541626, 1.0, 0.7918750047683716, 1.421875, 0.456718772649765, 0.43750059604644775, inf, 4.9375, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 0.5817142724990845, 1.9714285135269165, 0.09885718673467636, 0.0857141837477684, inf, 11.971429824829102, 1.0, 0.06999997049570084, 3.75, -0.09250007569789886, nan, inf, 40.0, 1.0, 0.674418568611145, 1.7117687463760376, 0.23009169101715088, 0.2107115536928177, inf, 8.44186019897461, 1.0, 0.7269999980926514, 1.5750000476837158, 0.32074999809265137, 0.30000022053718567, inf, 6.700000286102295, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 0.8442399501800537, 1.3140000104904175, 0.5907399654388428, 0.5759996771812439, inf, 3.9040005207061768, 1.0, 0.6335499286651611, 1.848750114440918, 0.20698747038841248, 0.19500012695789337, inf, 10.555001258850098, 1.0, 0.8802748322486877, 1.2330867052078247, 0.6726550459861755, 0.6596190929412842, inf, 3.027484178543091, 1.0, 0.9003549814224243, 1.1898750066757202, 0.7211987972259521, 0.7095010280609131, inf, 2.5855002403259277, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.3855762481689453, 0.6868895888328552, 13.735699653625488, inf, inf, inf, 1.0, 2.2713000774383545, 0.3935411274433136, 982.5817260742188, inf, inf, 0.04123462364077568, 1.0, 1.2729464769363403, 0.7469596862792969, 4.8737897872924805, inf, inf, -inf, 1.0, 1.2161880731582642, 0.7826355695724487, 3.009812116622925, 4.2857136726379395, inf, -inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 0.7239999771118164, 1.4600000381469727, 0.12599998712539673, 0.08000003546476364, inf, 3.759999990463257, 1.0, 0.3100000023841858, 2.1500000953674316, -1.184999942779541, inf, inf, 7.899999618530273, 1.0, 0.7909091114997864, 1.348484754562378, 0.33787888288497925, 0.3030299246311188, inf, 3.090909004211426, 1.0, 0.8274999856948853, 1.287500023841858, 0.45375001430511475, 0.4249999523162842, inf, 2.7249999046325684, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.6326935291290283, 0.5699761509895325, 55.66547393798828, inf, inf, inf, 1.0, 3.2379114627838135, 0.21503765881061554, 6995.66357421875, inf, inf, inf, 1.0, 1.4397097826004028, 0.6474307775497437, 13.156318664550781, inf, inf, inf, 1.0, 1.3444095849990845, 0.694403350353241, 6.113638877868652, 22.80427360534668, inf, -inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.9251232147216797, 0.4733847379684448, 231.91481018066406, inf, inf, -inf, 1.0, 4.510153293609619, 0.09182626754045486, 43921.39453125, inf, inf, -0.029895100742578506, 1.0, 1.6308835744857788, 0.5622856616973877, 39.66410446166992, nan, nan, inf, 1.0, 1.4884811639785767, 0.6173439025878906, 13.949749946594238, inf, inf, -inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.2560538053512573, 0.7685627937316895, 6.058324813842773, inf, inf, -inf, 1.0, 1.8094455003738403, 0.5350121855735779, 269.4752502441406, nan, nan, inf, 1.0, 1.1832225322723389, 0.8146384358406067, 2.858976364135742, 5.615237236022949, inf, inf, 1.0, 1.146070122718811, 0.8416628837585449, 2.0757555961608887, 2.460756778717041, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 0.6976000070571899, 1.7904762029647827, 0.34820955991744995, 0.3333331346511841, inf, 14.885716438293457, 1.0, 0.34299999475479126, 3.375, 0.00012500009324867278, 0.0, inf, 64.0, 1.0, 0.7631736397743225, 1.5702261924743652, 0.4495691955089569, 0.43396303057670593, inf, 9.686822891235352, 1.0, 0.8006500005722046, 1.4562500715255737, 0.5153812766075134, 0.5000000596046448, inf, 7.300000190734863, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 1.3600000143051147, 0.3999999761581421, 2.1399998664855957, 2.1999995708465576, inf, -2.6000001430511475, 1.0, 1.9000000953674316, -0.5, 3.8499999046325684, 4.000002384185791, inf, -8.0, 1.0, 1.2727272510528564, 0.5454545617103577, 1.8636362552642822, 1.909092903137207, inf, -1.7272725105285645, 1.0, 1.225000023841858, 0.625, 1.712499976158142, 1.7499996423721313, inf, -1.25, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 0.5667142868041992, 2.2630953788757324, 0.16456551849842072, 0.15238073468208313, inf, 26.97142791748047, 1.0, 0.09718747437000275, 4.9296875, -0.0739453062415123, -0.0625000074505806, inf, 124.18750762939453, 1.0, 0.6575502157211304, 1.9018359184265137, 0.2704305350780487, 0.2546572685241699, inf, 16.938209533691406, 1.0, 0.7101719379425049, 1.716796875, 0.3451308310031891, 0.32812538743019104, inf, 12.390625, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 0.44868573546409607, 2.7904763221740723, 0.05398102477192879, 0.04761897400021553, inf, 43.17143249511719, 1.0, -0.09800001978874207, 6.75, -0.007000155281275511, nan, inf, 208.0, 1.0, 0.5600941181182861, 2.2661054134368896, 0.1439427137374878, 0.13119801878929138, inf, 26.487253189086914, 1.0, 0.6255999803543091, 2.0, 0.2157750129699707, 0.20000004768371582, inf, 19.0, 1.0, inf, inf, inf, inf, inf, inf, 1.0, inf, inf, inf, inf, inf, inf, 1.0, 0.7825167775154114, 1.5322000980377197, 0.5002581477165222, 0.48639947175979614, inf, 9.395201683044434, 1.0, 0.5161914825439453, 2.563187599182129, 0.15683816373348236, 0.1495000571012497, inf, 37.82350540161133, 1.0, 0.8305801153182983, 1.3864184617996216, 0.5858817100524902, 0.572500467300415, inf, 6.326858043670654, 1.0, 0.8578420281410217, 1.310472011566162, 0.6393900513648987, 0.6267247200012207, inf, 4.904425144195557]),
    'kde/box': ('float64', (), [0.728950448164842]),
    'kde/grad': ('float64', (7,), [0.2687480394037387, 0.4468768495568549, -0.4358861524439716, 0.2953241852026919, 0.3115922521827007, -0.11193900991137214, -0.2856388854063654]),
    'kde/jit': ('float64', (2,), [-0.4793117923082024, -0.576504738464785]),
    'kde0/__call__': ('float64', (3,), [0.6023798199806347, 0.5127985671462648, 1.657343422967649e-05]),
    'kde0/cov': ('float64', (1, 1), [0.15868129940900913]),
    'kde0/evaluate': ('float64', (3,), [0.6023798199806347, 0.5127985671462648, 1.657343422967649e-05]),
    'kde0/ig': ('float64', (), [0.3697541892909851]),
    'kde0/ik': ('float64', (), [0.47660645320252515]),
    'kde0/logpdf': ('float64', (3,), [-0.5068671024257059, -0.6678721675561312, -11.007709492135728]),
    'kde0/pdf': ('float64', (3,), [0.6023798199806347, 0.5127985671462648, 1.657343422967649e-05]),
    'kde1/__call__': ('float64', (1,), [0.6026425869230634]),
    'kde1/cov': ('float64', (1, 1), [0.17803330035802672]),
    'kde1/evaluate': ('float64', (1,), [0.6026425869230634]),
    'kde1/ig': ('float64', (), [0.36673252144838625]),
    'kde1/ik': ('float64', (), [0.46997735696125925]),
    'kde1/logpdf': ('float64', (1,), [-0.5064309828231357]),
    'kde1/pdf': ('float64', (1,), [0.6026425869230634]),
    'kde2/__call__': ('float64', (2,), [0.034770334584629886, 0.0030348203564120398]),
    'kde2/cov': ('float64', (1, 1), [0.055294883428505054]),
    'kde2/evaluate': ('float64', (2,), [0.034770334584629886, 0.0030348203564120398]),
    'kde2/ig': ('float64', (), [0.3872677943557205]),
    'kde2/ik': ('float64', (), [0.5184887056114573]),
    'kde2/logpdf': ('float64', (2,), [-3.3589907102122933, -5.797603046861048]),
    'kde2/pdf': ('float64', (2,), [0.034770334584629886, 0.0030348203564120398]),
    'kde3/__call__': ('float64', (4,), [0.042742482676263786, 0.0004109592423236901, 0.006700677780653607, 0.007432016033389583]),
    'kde3/cov': ('float64', (2, 2), [0.38502115689588734, -0.22600789160072413, -0.22600789160072413, 0.25770054061616515]),
    'kde3/evaluate': ('float64', (4,), [0.042742482676263786, 0.0004109592423236901, 0.006700677780653607, 0.007432016033389583]),
    'kde3/ig': ('float64', (), [0.07391807622641192]),
    'kde3/ik': ('float64', (), [0.10808943136034843]),
    'kde3/logpdf': ('float64', (4,), [-3.1525619428917935, -7.797016515481065, -5.005546596410092, -4.901958120127719]),
    'kde3/pdf': ('float64', (4,), [0.042742482676263786, 0.0004109592423236901, 0.006700677780653607, 0.007432016033389583]),
    'kde4/__call__': ('float64', (1,), [0.002430864239313835]),
    'kde4/cov': ('float64', (2, 2), [0.08766864574464368, -0.05127991530198364, -0.05127991530198364, 0.05537238636658347]),
    'kde4/evaluate': ('float64', (1,), [0.002430864239313835]),
    'kde4/ig': ('float64', (), [0.07917289566271851]),
    'kde4/ik': ('float64', (), [0.12338892169118135]),
    'kde4/logpdf': ('float64', (1,), [-6.019508430820972]),
    'kde4/pdf': ('float64', (1,), [0.002430864239313835]),
    'mode/-1/False': ('tuple', [('float64', (3,), [3.0, 1.0, 0.0]), ('int64', (3,), [2, 2, 2])]),
    'mode/-1/True': ('tuple', [('float64', (3, 1), [3.0, 1.0, 0.0]), ('int64', (3, 1), [2, 2, 2])]),
    'mode/0/False': ('tuple', [('float64', (5,), [1.0, 1.0, 2.0, 2.0, -0.0]), ('int64', (5,), [1, 2, 1, 2, 1])]),
    'mode/0/True': ('tuple', [('float64', (1, 5), [1.0, 1.0, 2.0, 2.0, -0.0]), ('int64', (1, 5), [1, 2, 1, 2, 1])]),
    'mode/1/False': ('tuple', [('float64', (3,), [3.0, 1.0, 0.0]), ('int64', (3,), [2, 2, 2])]),
    'mode/1/True': ('tuple', [('float64', (3, 1), [3.0, 1.0, 0.0]), ('int64', (3, 1), [2, 2, 2])]),
    'mode/None/False': ('tuple', [('float64', (), [1.0]), ('int64', (), [3])]),
    'mode/None/True': ('tuple', [('float64', (1, 1), [1.0]), ('int64', (1, 1), [3])]),
    'mode/int': ('tuple', [('int64', (2,), [2, 3]), ('int64', (2,), [2, 2])]),
    'multinomial.logpmf/1': ('float64', (), [-2.9187712324178614]),
    'multinomial.logpmf/2': ('float64', (3,), [-inf, -inf, -inf]),
    'multinomial.pmf/1': ('float64', (), [0.05400000000000007]),
    'multinomial.pmf/2': ('float64', (3,), [0.0, 0.0, 0.0]),
    'nbinom.logpmf': ('float64', (8, 3), [-inf, -inf, -inf, -1.2039728043259361, -2.0794415416798357, 0.0, -1.5606477482646686, -1.6739764335716696, -inf, -1.917322692203401, -1.673976433571668, -inf, -2.0956601641727675, -1.7486163083679993, -inf, -2.2739976361421332, -1.8562979903656238, -inf, -2.987347524019598, -2.500655006756136, -inf, -3.700697411897063, -3.3479528671433396, -inf]),
    'nbinom.pmf': ('float64', (8, 3), [0.0, 0.0, 0.0, 0.3, 0.12500000000000003, 1.0, 0.20999999999999996, 0.1875000000000004, 0.0, 0.14699999999999996, 0.18750000000000067, 0.0, 0.12298902390050905, 0.17401455943262747, 0.0, 0.10289999999999999, 0.15625000000000036, 0.0, 0.05042099999999999, 0.08203125000000028, 0.0, 0.02470628999999999, 0.035156250000000125, 0.0]),
    'nbinom/d0/0': ('float64', (), [-0.23057644615986983]),
    'nbinom/d1/0': ('float64', (), [2.9166666666666665]),
    'owens_t': ('float64', (9, 7), [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, nan, 0.07379180882521663, 0.07029670138800326, 0.04306469112078537, 0.008625077985521508, 0.06448860284750375, 0.0, nan, 0.125, 0.11804844825868928, 0.06674188216570097, 0.011116281722259827, 0.10667106296144852, 0.0, nan, -0.125, -0.11804844825868928, -0.06674188216570097, -0.011116281722259827, -0.10667106296144852, -0.0, nan, 0.17620819117478337, 0.16260430593277236, 0.07846818699308411, 0.011374908793187572, 0.1415806036539784, 0.0, nan, -0.19879180882521663, -0.1790837972155053, -0.0792995047488726, -0.011375065971545046, -0.15108404307601844, -0.0, nan, 0.2341372412847232, 0.19102983907652998, 0.07932762696572854, 0.01137506597408961, 0.15426876749825402, 0.0, nan, nan, 0.1910442889055237, 0.07932762696572854, 0.01137506597408961, 0.15426876936299347, 0.0, nan, nan, nan, nan, nan, nan, nan, nan]),
    'owens_t/d0/0': ('float64', (), [-0.03475107480526191]),
    'owens_t/d0/1': ('float64', (), [0.11548049634916466]),
    'owens_t/d0/2': ('float64', (), [0.022635353172186557]),
    'owens_t/d1/0': ('float64', (), [0.10890594951322514]),
    'owens_t/d1/1': ('float64', (), [0.0026128466569369842]),
    'owens_t/d1/2': ('float64', (), [0.005425456767277862]),
    'owens_t/f32': ('float64', (9, 7), [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, nan, 0.07379179447889328, 0.07029670125247742, 0.04306469112078537, 0.008625077985521508, 0.06448860284750375, 0.0, nan, 0.125, 0.11804845184087753, 0.06674188375473022, 0.01111628208309412, 0.10667106509208679, 0.0, nan, -0.125, -0.11804845184087753, -0.06674188375473022, -0.01111628208309412, -0.10667106509208679, -0.0, nan, 0.17620820552110672, 0.16260430438630272, 0.0784682007801569, 0.011374908981432877, 0.14158061892350327, 0.0, nan, -0.19879181310534477, -0.1790838143745963, -0.07929951379804594, -0.011375067282186561, -0.15108404090850538, -0.0, nan, 0.23413724079728127, 0.1910298567703955, 0.07932763546705246, 0.011375066824257374, 0.1542687742668776, 0.0, nan, nan, 0.19104430079460144, 0.07932763546705246, 0.011375066824257374, 0.1542687714099884, 0.0, nan, nan, nan, nan, nan, nan, nan, nan]),
    'pareto.cdf': ('float64', (10, 3), [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.2928932188134524, 0.0, 0.0, 0.4023856953328031, 0.0, 0.0, 0.5, 0.45566894604818264, 0.0, 0.5527864045000421, 0.825307189257829, 0.5935578925976732, 0.6549672203288228, 0.9396565738036357, 0.962962962962963, 0.7418011102528388, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0]),
    'pareto.logcdf': ('float64', (10, 3), [-inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -1.2279471772995159, -inf, -inf, -0.9103442092061921, -inf, -inf, -0.6931471805599453, -0.785988728638481, -inf, -0.5927836007167082, -0.1919996113371929, -0.5216205252958301, -0.4231700898986999, -0.06224081749097766, -0.03774032798284703, -0.2986741172267167, -0.0, -0.0, -0.0, -inf, -inf, -inf]),
    'pareto.logpdf': ('float64', (10, 3), [-inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -1.0397207708399179, -inf, -inf, -1.544429125771737, 0.40546510810816444, -inf, -2.0794415416798357, -0.6081976621622467, -inf, -2.4141568686511503, -2.5024119164060377, -0.7949532616931883, -3.1923475587739016, -4.2740403341458135, -3.9889840465642745, -4.062075301653315, -inf, -inf, -inf, -inf, -inf, -inf]),
    'pareto.logsf': ('float64', (10, 3), [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -0.34657359027997264, 0.0, 0.0, -0.5148097085905791, -0.0, 0.0, -0.6931471805599453, -0.6081976621622466, 0.0, -0.8047189562170501, -1.7447262147085212, -0.9003137773510145, -1.064115852924634, -2.8077032653523872, -3.295836866004329, -1.354025100551105, -inf, -inf, -inf, 0.0, 0.0, 0.0]),
    'pareto.pdf': ('float64', (10, 3), [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.3535533905932738, 0.0, 0.0, 0.21343368023828463, 1.5, 0.0, 0.12500000000000003, 0.5443310539518174, 0.0, 0.08944271909999162, 0.08188725503539271, 0.45160234155814083, 0.04107533091323538, 0.013925406045314852, 0.018518518518518517, 0.017213259316477412, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
    'pareto.ppf': ('float64', (7, 3), [nan, nan, nan, 1.0, 2.5, -0.5, 1.0067227206187843, 2.5067114596959716, -0.4898479746964596, 1.5874010519681994, 3.0198420997897464, 1.0, 21.54434690031882, 9.783177667225555, 4998.999999999991, inf, inf, inf, nan, nan, nan]),
    'pareto.sf': ('float64', (10, 3), [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.7071067811865476, 1.0, 1.0, 0.5976143046671969, 1.0, 1.0, 0.5, 0.5443310539518174, 1.0, 0.447213595499958, 0.17469281074217108, 0.4064421074023268, 0.3450327796711771, 0.06034342619636431, 0.037037037037037035, 0.25819888974716115, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0]),
    'pareto/d0/0': ('float64', (), [-1.0869565217391306]),
    'pareto/d1/0': ('float64', (), [-0.07093227646411226]),
    'pareto/d2/0': ('float64', (), [1.0869565217391306]),
    'pareto/d3/0': ('float64', (), [1.3636363636363638]),
    'rankdata/average/0': ('float64', (2, 6), [1.0, 1.0, 1.0, 2.0, 1.0, 1.0, 2.0, 2.0, 2.0, 1.0, 2.0, 2.0]),
    'rankdata/average/1': ('float64', (2, 6), [5.5, 1.0, 5.5, 3.0, 3.0, 3.0, 5.0, 3.0, 3.0, 1.0, 6.0, 3.0]),
    'rankdata/average/None': ('float64', (12,), [6.5, 2.0, 6.5, 4.0, 4.0, 4.0, 11.0, 9.0, 9.0, 1.0, 12.0, 9.0]),
    'rankdata/dense/0': ('float64', (2, 6), [1.0, 1.0, 1.0, 2.0, 1.0, 1.0, 2.0, 2.0, 2.0, 1.0, 2.0, 2.0]),
    'rankdata/dense/1': ('float64', (2, 6), [3.0, 1.0, 3.0, 2.0, 2.0, 2.0, 3.0, 2.0, 2.0, 1.0, 4.0, 2.0]),
    'rankdata/dense/None': ('float64', (12,), [4.0, 2.0, 4.0, 3.0, 3.0, 3.0, 6.0, 5.0, 5.0, 1.0, 7.0, 5.0]),
    'rankdata/max/0': ('float64', (2, 6), [1.0, 1.0, 1.0, 2.0, 1.0, 1.0, 2.0, 2.0, 2.0, 1.0, 2.0, 2.0]),
    'rankdata/max/1': ('float64', (2, 6), [6.0, 1.0, 6.0, 4.0, 4.0, 4.0, 5.0, 4.0, 4.0, 1.0, 6.0, 4.0]),
    'rankdata/max/None': ('float64', (12,), [7.0, 2.0, 7.0, 5.0, 5.0, 5.0, 11.0, 10.0, 10.0, 1.0, 12.0, 10.0]),
    'rankdata/min/0': ('float64', (2, 6), [1.0, 1.0, 1.0, 2.0, 1.0, 1.0, 2.0, 2.0, 2.0, 1.0, 2.0, 2.0]),
    'rankdata/min/1': ('float64', (2, 6), [5.0, 1.0, 5.0, 2.0, 2.0, 2.0, 5.0, 2.0, 2.0, 1.0, 6.0, 2.0]),
    'rankdata/min/None': ('float64', (12,), [6.0, 2.0, 6.0, 3.0, 3.0, 3.0, 11.0, 8.0, 8.0, 1.0, 12.0, 8.0]),
    'rankdata/nan/average': ('float64', (3, 5), [nan, nan, nan, nan, nan, 1.5, 1.5, 3.5, 3.5, 5.0, nan, nan, nan, nan, nan]),
    'rankdata/nan/dense': ('float64', (3, 5), [nan, nan, nan, nan, nan, 1.0, 1.0, 2.0, 2.0, 3.0, nan, nan, nan, nan, nan]),
    'rankdata/nan/max': ('float64', (3, 5), [nan, nan, nan, nan, nan, 2.0, 2.0, 4.0, 4.0, 5.0, nan, nan, nan, nan, nan]),
    'rankdata/nan/min': ('float64', (3, 5), [nan, nan, nan, nan, nan, 1.0, 1.0, 3.0, 3.0, 5.0, nan, nan, nan, nan, nan]),
    'rankdata/nan/ordinal': ('float64', (3, 5), [nan, nan, nan, nan, nan, 1.0, 2.0, 3.0, 4.0, 5.0, nan, nan, nan, nan, nan]),
    'rankdata/ordinal/0': ('float64', (2, 6), [1.0, 1.0, 1.0, 2.0, 1.0, 1.0, 2.0, 2.0, 2.0, 1.0, 2.0, 2.0]),
    'rankdata/ordinal/1': ('float64', (2, 6), [5.0, 1.0, 6.0, 2.0, 3.0, 4.0, 5.0, 2.0, 3.0, 1.0, 6.0, 4.0]),
    'rankdata/ordinal/None': ('float64', (12,), [6.0, 2.0, 7.0, 3.0, 4.0, 5.0, 11.0, 8.0, 9.0, 1.0, 12.0, 10.0]),
    'sem/0': ('float64', (6,), [1.0, 1.4999999999999998, 0.5, 0.7499999999999999, 3.4999999999999996, 1.0]),
    'sem/1': ('float64', (2,), [0.30731814857642964, 1.1136775914858743]),
    'sem/None': ('float64', (), [0.6468406123441678]),
    'sem/ddof0': ('float64', (1, 6), [0.7071067811865475, 1.0606601717798212, 0.35355339059327373, 0.5303300858899106, 2.474873734152916, 0.7071067811865475]),
    'sem/omit/0': ('float64', (1, 5), [0.8819171036881969, 0.0, 0.5, 0.6666666666666666, 2.5]),
    'sem/omit/1': ('float64', (3, 1), [0.47871355387816905, 0.7348469228349536, 1.3333333333333333]),
    'sem/omit/None': ('float64', (1, 1), [0.44381268229929727]),
    'sici': ('tuple', [('float64', (14,), [0.0, 0.29850404380704315, -0.29850404380704315, 1.1080471990137186, 1.758203138949053, 1.7563053683733343, 1.56167107021455, 1.586366622463643, -1.551617072485936, 1.5707963304287476, 1.5707963265928415, 1.5707963267948966, -1.5707963267948966, nan]), ('float64', (14,), [-inf, -0.6491729329711619, -0.6491729329711619, 0.42045918289424045, -0.1409816978869305, -0.1426042963014463, 0.12363800705971785, 0.12001667326059659, -0.005628386324116305, 9.316390307435766e-09, 4.573552293245206e-10, 0.0, nan, nan])]),
    'sici/f32': ('tuple', [('float32', (14,), [0.0, 0.2985040545463562, -0.2985040545463562, 1.1080472469329834, 1.758203148841858, 1.756305456161499, 1.5616711378097534, 1.5863666534423828, -1.5516170263290405, 1.5707963705062866, 1.5707963705062866, 1.5707963705062866, -1.5707963705062866, nan]), ('float32', (14,), [-inf, -0.6491729617118835, -0.6491729617118835, 0.42045924067497253, -0.14098167419433594, -0.14260433614253998, 0.12363802641630173, 0.12001664936542511, -0.0056283860467374325, 9.316390325864177e-09, 4.57355237015733e-10, 0.0, nan, nan])]),
    'sici0/d0/0': ('float64', (), [0.958851077208406]),
    'sici0/d0/1': ('float64', (), [-0.1570315928724342]),
    'sici1/d0/0': ('float64', (), [1.7551651237807455]),
    'sici1/d0/1': ('float64', (), [-0.10459893135455864]),
    'truncnorm.cdf': ('float64', (10, 5), [0.0, 0.0, 1.0, nan, 0.0, 0.13745236259857807, 0.0, 1.0, nan, 0.0, 0.3839007918651436, 0.0, 1.0, nan, 0.0, 0.5389290660050594, 0.0, 1.0, nan, 0.0, 0.7631222703258765, 0.0, 1.0, nan, 0.0, 0.9220727061648447, 0.3383009112705866, 1.0, nan, 0.0, 1.0, 0.9865373981442727, 1.0, nan, 0.8323561725065822, 1.0, 1.0, 1.0, nan, 0.9998873218550395, 1.0, 1.0, 1.0, nan, 1.0, 0.0, 0.0, 0.0, nan, 0.0]),
    'truncnorm.logcdf': ('float64', (10, 5), [-inf, -inf, 0.0, nan, -inf, -1.984477875733027, -inf, 0.0, nan, -inf, -0.9573711142915431, -inf, 0.0, nan, -inf, -0.6181713196926426, -inf, 0.0, nan, -inf, -0.27033701109211367, -inf, 0.0, nan, -inf, -0.08113120152283176, -1.0838195095231147, 0.0, nan, -inf, 0.0, -0.013554044309725372, 0.0, nan, -0.18349483781112008, 0.0, 0.0, 0.0, nan, -0.00011268449361964911, 0.0, 0.0, 0.0, nan, 0.0, -inf, -inf, -inf, nan, -inf]),
    'truncnorm.logcdf/d0/0': ('float64', (), [0.8845233754345205]),
    'truncnorm.logcdf/d1/0': ('float64', (), [-0.33362121045173715]),
    'truncnorm.logcdf/d2/0': ('float64', (), [-0.16721926075176674]),
    'truncnorm.logcdf/d3/0': ('float64', (), [-0.8845233754345205]),
    'truncnorm.logpdf': ('float64', (10, 5), [-inf, -inf, -inf, nan, -inf, -1.164910717232933, -inf, -inf, nan, -inf, -0.9626884950107109, -inf, -inf, nan, -inf, -0.944910717232933, -inf, -inf, nan, -inf, -1.0515773838995996, -inf, -inf, nan, -inf, -1.262688495010711, -0.3918965637969063, -inf, nan, -inf, -inf, -1.9407854526857953, -inf, nan, -1.3522708851924627, -inf, -inf, -inf, nan, -8.025604218525796, -inf, -inf, -inf, nan, -inf, -inf, -inf, -inf, nan, -inf]),
    'truncnorm.logsf': ('float64', (10, 5), [0.0, 0.0, -inf, nan, 0.0, -0.14786489983206402, 0.0, -inf, nan, 0.0, -0.48434727624915047, 0.0, -inf, nan, 0.0, -0.7742033779850563, 0.0, -inf, nan, 0.0, -1.4402111795216122, 0.0, -inf, nan, 0.0, -2.5519790173146872, -0.41294437513083637, -inf, nan, 0.0, -inf, -4.307839670643215, -inf, nan, -1.7859136245620792, -inf, -inf, -inf, nan, -9.090975077990398, -inf, -inf, -inf, nan, -inf, 0.0, 0.0, 0.0, nan, 0.0]),
    'truncnorm.pdf': ('float64', (10, 5), [0.0, 0.0, 0.0, nan, 0.0, 0.3119505125942931, 0.0, 0.0, nan, 0.0, 0.38186486289820076, 0.0, 0.0, nan, 0.0, 0.38871427483855425, 0.0, 0.0, nan, 0.0, 0.3493861980580821, 0.0, 0.0, nan, 0.0, 0.2828924482731132, 0.675774009843409, 0.0, nan, 0.0, 0.0, 0.1435911214408514, 0.0, nan, 0.25865222371158886, 0.0, 0.0, 0.0, nan, 0.0003269823975867665, 0.0, 0.0, 0.0, nan, 0.0, 0.0, 0.0, 0.0, nan, 0.0]),
    'truncnorm.sf': ('float64', (10, 5), [1.0, 1.0, 0.0, nan, 1.0, 0.862547637401432, 1.0, 0.0, nan, 1.0, 0.6160992081348564, 1.0, 0.0, nan, 1.0, 0.46107093399494065, 1.0, 0.0, nan, 1.0, 0.23687772967412354, 1.0, 0.0, nan, 1.0, 0.07792729383515529, 0.6616990887294134, 0.0, nan, 1.0, 0.0, 0.0134626018557273, 0.0, nan, 0.16764382749341794, 0.0, 0.0, 0.0, nan, 0.00011267814496056534, 0.0, 0.0, 0.0, nan, 0.0, 1.0, 1.0, 1.0, nan, 1.0]),
    'truncnorm/d0/0': ('float64', (), [-0.06944444444444445]),
    'truncnorm/d1/0': ('float64', (), [0.31240670790429287]),
    'truncnorm/d2/0': ('float64', (), [-0.16721926075176674]),
    'truncnorm/d3/0': ('float64', (), [0.06944444444444445]),
    'truncnorm/d4/0': ('float64', (), [-0.8275462962962963]),
    'vonmises.logpdf': ('float64', (10, 4), [-2.3944230338950496, -4.641855601093193, nan, nan, -1.5170056919525825, -1.1321862333233246, nan, nan, -1.3994267855948268, -0.6618706078923017, nan, nan, -1.4388962885933843, -0.8197486198865315, nan, nan, -1.629275632660757, -1.5812659961560223, nan, nan, -1.8640581847609754, -2.5203962045568957, nan, nan, -2.3985741734922033, -4.658460159481808, nan, nan, -1.411132972730815, -0.7086953564362547, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan]),
    'vonmises.pdf': ('float64', (10, 4), [0.09122529764618403, 0.009639793409942662, nan, nan, 0.2193677591670679, 0.32232780177773, nan, nan, 0.24673835739412014, 0.5158854120190136, nan, nan, 0.2371894029152246, 0.44054238418232033, nan, nan, 0.19607155052652409, 0.20571449951559537, nan, nan, 0.15504216221511968, 0.0804277346010544, nan, nan, 0.09084739360973641, 0.009481050472849438, nan, nan, 0.24386683210653304, 0.4922860364933773, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan]),
    'vonmises/d0/0': ('float64', (), [-0.5062438450012458]),
    'vonmises/d1/0': ('float64', (), [0.3783934902164279]),
    'wrapcauchy.logpdf': ('float64', (10, 4), [-inf, -inf, nan, nan, -inf, -inf, nan, nan, -0.7392647777412356, 1.1065619127570945, nan, nan, -1.0136762013510865, -1.6153268311194653, nan, nan, -1.7826429563301944, -3.321221539468753, nan, nan, -2.2904486349268436, -4.018991895649308, nan, nan, -2.93573119031862, -4.7814654336117375, nan, nan, -inf, -inf, nan, nan, -inf, -inf, nan, nan, -inf, -inf, nan, nan]),
    'wrapcauchy.pdf': ('float64', (10, 4), [0.0, 0.0, nan, nan, 0.0, 0.0, nan, nan, 0.4774648292756861, 3.0239439187460095, nan, nan, 0.36288249536440953, 0.19882567740180065, nan, nan, 0.16819303247833794, 0.03610869660505294, nan, nan, 0.10122104037177138, 0.017971072527201634, nan, nan, 0.053091884838244396, 0.008383704199184007, nan, nan, 0.0, 0.0, nan, nan, 0.0, 0.0, nan, nan, 0.0, 0.0, nan, nan]),
    'wrapcauchy/d0/0': ('float64', (), [-1.834522310052069]),
    'wrapcauchy/d1/0': ('float64', (), [0.6458261159192902]),
}
