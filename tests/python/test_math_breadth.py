"""The jax.numpy breadth of quabla/_math.py against jax.numpy (x64): constants and elementwise
functions (special values, signed zeros, frexp/ldexp exactness, sinc's derivatives at 0), the
dtype queries against JAX's lattice, the NaN-aware reductions and quantiles, the statistics
(average, cov, corrcoef, trapezoid, gradient, unwrap, cross, vecdot...) and the polynomials,
each eagerly and under jit, with gradients and vmap where they apply, and the typed errors."""

import math

import numpy as np
import pytest

import quabla as qb
from breadth_util import assert_close, check_all

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402

RNG = np.random.default_rng(11)
NAN = float("nan")


def U(shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, size=shape)


def J(f):
    """A jnp function as a NumPy oracle (tuples kept)."""

    def g(*a):
        r = f(*a)
        return tuple(np.asarray(v) for v in r) if isinstance(r, (tuple, list)) else np.asarray(r)

    return g


def both(f, *args):
    """f(*args) eagerly and under jit (array arguments as jit arguments)."""
    qargs = [qb.array(a) for a in args]
    return f(*qargs), qb.jit(f)(*qargs)


def same(f, jf, *args, rtol=1e-13, atol=1e-14):
    want = J(jf)(*args)
    for got in both(f, *args):
        assert_close(got, want, rtol, atol, getattr(f, "__name__", "f"))
        if not isinstance(want, tuple):
            assert str(got.dtype) == str(np.asarray(want).dtype).replace("bool", "bool_"), (got.dtype, want.dtype)


# ---------------------------------------------------------------------------------------------
# Constants and aliases


def test_constants_and_aliases():
    assert (qb.pi, qb.e, qb.inf, qb.euler_gamma) == (jnp.pi, jnp.e, jnp.inf, jnp.euler_gamma)
    assert math.isnan(qb.nan) and qb.newaxis is None
    assert qb.absolute is qb.abs and qb.pow is qb.power and qb.amax is qb.max and qb.amin is qb.min and qb.around is qb.round
    assert qb.radians is qb.deg2rad and qb.degrees is qb.rad2deg and qb.conjugate is qb.conj
    assert "pow" not in qb.__all__ and "divmod" not in qb.__all__ and "amax" in qb.__all__
    x = qb.array([[1.0, 2.0]])
    assert x[:, qb.newaxis].shape == (1, 1, 2)


# ---------------------------------------------------------------------------------------------
# Elementwise

UNARY = [
    ("fabs", qb.fabs, jnp.fabs, U((3, 4)), True),
    ("positive", qb.positive, jnp.positive, U((3, 4)), True),
    ("rint", qb.rint, jnp.rint, U((3, 4), -5, 5), False),
    ("trunc", qb.trunc, jnp.trunc, U((3, 4), -5, 5), False),
    ("deg2rad", qb.deg2rad, jnp.deg2rad, U((3, 4), -360, 360), True),
    ("rad2deg", qb.rad2deg, jnp.rad2deg, U((3, 4)), True),
    ("sinc", qb.sinc, jnp.sinc, U((3, 4), -3, 3), True),
    ("signbit", qb.signbit, jnp.signbit, U((3, 4)), False),
    ("angle", qb.angle, jnp.angle, U((3, 4)), False),
    ("real", qb.real, jnp.real, U((3, 4)), True),
    ("conj", qb.conj, jnp.conj, U((3, 4)), True),
    ("imag", qb.imag, jnp.imag, U((3, 4)), False),
    ("iscomplex", qb.iscomplex, jnp.iscomplex, U((3, 4)), False),
    ("isreal", qb.isreal, jnp.isreal, U((3, 4)), False),
]


@pytest.mark.parametrize("name,f,j,x,grads", UNARY, ids=[u[0] for u in UNARY])
def test_unary(name, f, j, x, grads):
    check_all(f, J(j), [x], rtol=1e-13, atol=1e-14, grads=grads)


def test_modf_frexp_values():
    x = U((3, 4), -50, 50)
    check_all(qb.modf, J(jnp.modf), [x], rtol=1e-13, atol=1e-14)
    check_all(lambda v: qb.frexp(v)[0], lambda v: np.asarray(jnp.frexp(v)[0]), [x], rtol=0, atol=0)
    same(qb.frexp, jnp.frexp, x)


BINARY = [
    ("copysign", qb.copysign, jnp.copysign, U((3, 4)), U((4,)), True),
    ("fmax", qb.fmax, jnp.fmax, U((3, 4)), U((3, 4)), True),
    ("fmin", qb.fmin, jnp.fmin, U((3, 4)), U((3, 1)), True),
    ("fmod", qb.fmod, jnp.fmod, U((3, 4), -9, 9), U((3, 4), 0.5, 3) * RNG.choice([-1.0, 1.0], (3, 4)), True),
    ("heaviside", qb.heaviside, jnp.heaviside, np.array([-1.0, 0.0, 2.0, 0.0]), U((4,)), False),
    ("logaddexp2", qb.logaddexp2, jnp.logaddexp2, U((3, 4), -5, 5), U((4,), -5, 5), True),
    ("float_power", qb.float_power, jnp.float_power, U((3, 4), 0.2, 3), U((3, 4)), True),
]


@pytest.mark.parametrize("name,f,j,x,y,grads", BINARY, ids=[b[0] for b in BINARY])
def test_binary(name, f, j, x, y, grads):
    check_all(f, J(j), [x, y], rtol=1e-13, atol=1e-14, grads=grads)


def test_divmod_and_fmod_signs():
    x = np.array([7, -7, 7, -7, 0, 5])
    y = np.array([3, 3, -3, -3, 4, 0])
    same(qb.divmod, jnp.divmod, x, np.array([3, 3, -3, -3, 4, 1]))
    same(qb.fmod, jnp.fmod, x, y)  # integer fmod by 0 is 0, as JAX
    xf = np.array([7.5, -7.5, 7.5, -7.5, 0.0, -0.0, 1.0, 5.0, NAN, np.inf])
    yf = np.array([2.0, 2.0, -2.0, -2.0, 3.0, 3.0, 0.1, np.inf, 1.0, 2.0])
    same(qb.divmod, jnp.divmod, xf, yf)
    same(qb.fmod, jnp.fmod, xf, yf)
    assert qb.fmod(-0.0, 3.0).item() == 0.0 and math.copysign(1.0, qb.fmod(qb.array([-0.0]), 3.0).item()) == -1.0
    # fmod keeps the dividend's sign where remainder takes the divisor's.
    assert qb.fmod(qb.array([-7]), 3).tolist() == [-1] and qb.remainder(qb.array([-7]), 3).tolist() == [2]
    check_all(lambda a, b: qb.divmod(a, b)[1], lambda a, b: np.asarray(jnp.divmod(a, b)[1]), [U((5,), 1, 9), U((5,), 0.5, 0.9)], grads=False)


def test_special_values_and_signed_zeros():
    v = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, NAN, 1e-300])
    same(qb.signbit, jnp.signbit, v)
    same(qb.copysign, jnp.copysign, np.array([1.0, 2.0, -3.0, 0.0, np.inf, NAN, 5.0, 1.0]), v)
    same(qb.signbit, jnp.signbit, np.array([-2, 0, 3]))
    same(qb.signbit, jnp.signbit, np.array([True, False]))
    a = np.array([NAN, 1.0, NAN, -np.inf, np.inf, 0.0])
    b = np.array([2.0, NAN, NAN, NAN, NAN, -0.0])
    same(qb.fmax, jnp.fmax, a, b)
    same(qb.fmin, jnp.fmin, a, b)
    same(qb.heaviside, jnp.heaviside, np.array([NAN, -0.0, 0.0, -np.inf]), np.array([0.5, 0.5, 0.5, 0.5]))
    same(qb.sinc, jnp.sinc, np.array([0.0, -0.0, 1e-20, 0.5, 3.0, np.inf]))
    same(qb.logaddexp2, jnp.logaddexp2, np.array([-np.inf, np.inf, 3.0, -np.inf]), np.array([-np.inf, np.inf, -np.inf, 2.0]))
    same(qb.angle, jnp.angle, np.array([-1.0, 0.0, -0.0, 2.0]))
    same(qb.modf, jnp.modf, np.array([-0.0, np.inf, -np.inf, -2.5, 1e300]))
    same(qb.rint, jnp.rint, np.array([0.5, 1.5, 2.5, -0.5, -1.5, 3.7, -np.inf]))
    same(qb.trunc, jnp.trunc, np.array([-0.5, -1.5, 2.5, np.inf]))
    assert qb.signbit(qb.array([NAN])).tolist() == [False]  # no bitcast: a NaN's sign is not read


def test_frexp_ldexp_exact_over_the_range():
    # Every binade of the normal range and both signs (subnormals flush to zero in Quabla).
    ex = np.arange(-1021, 1024)
    x = np.ldexp(RNG.uniform(0.5, 1.0, ex.size), ex) * RNG.choice([-1.0, 1.0], ex.size)
    x[::97] = np.ldexp(0.5, ex[::97])  # exact powers of two
    m, k = np.frexp(x)
    for got in both(qb.frexp, x):
        assert_close(got[0], m, 0, 0, "mantissa")
        assert got[1].dtype == qb.int32 and np.array_equal(got[1].numpy(), k)
    same(qb.frexp, jnp.frexp, np.array([0.0, -0.0, np.inf, -np.inf, NAN, 3, 1.7976931348623157e308]))
    same(qb.frexp, jnp.frexp, np.array([1, 3, 8]))
    # ldexp: without intermediate overflow, underflow flushed, specials kept.
    x1 = np.array([0.75, 1e-300, 1e300, 3.0, -5.0, 0.0, np.inf, NAN, 1.5, 1.0, 0.5])
    x2 = np.array([2, 1500, -1500, 2000, -2000, 7, 3, 2, -1074, 1023, 1024])
    same(qb.ldexp, jnp.ldexp, x1, x2, rtol=0, atol=0)
    same(qb.ldexp, jnp.ldexp, np.array([1, 2]), np.array([3, 4]))
    check_all(qb.ldexp, J(jnp.ldexp), [U((3, 4)), RNG.integers(-20, 20, (3, 4))], rtol=0, atol=0)
    g = qb.grad(lambda v: qb.sum(qb.ldexp(v, qb.array([3, -2]))))(qb.array([1.3, -0.7]))
    assert g.tolist() == [8.0, 0.25]
    g = qb.grad(lambda v: qb.sum(qb.frexp(v)[0]))(qb.array([3.0, 0.3]))
    assert g.tolist() == [0.25, 2.0]


def test_f32_kept_and_int_promotion():
    x = qb.array(U((5,), 0.2, 2.0).astype(np.float32))
    for f in [qb.fabs, qb.rint, qb.trunc, qb.deg2rad, qb.rad2deg, qb.sinc, lambda v: qb.frexp(v)[0], lambda v: qb.modf(v)[0]]:
        assert f(x).dtype == qb.float32
    for f in [qb.copysign, qb.fmax, qb.fmin, qb.fmod, qb.heaviside, qb.logaddexp2, qb.float_power]:
        assert f(x, 0.5).dtype == qb.float32, f.__name__
    assert qb.ldexp(x, 2).dtype == qb.float32
    assert_close(qb.ldexp(x, 3), np.asarray(jnp.ldexp(np.asarray(x.numpy()), 3)), 0, 0)
    assert_close(qb.frexp(x)[0], np.asarray(jnp.frexp(x.numpy())[0]), 0, 0)
    xi = np.array([1, -2, 3])
    for f, j in [(qb.fabs, jnp.fabs), (qb.rint, jnp.rint), (qb.trunc, jnp.trunc), (qb.deg2rad, jnp.deg2rad), (qb.sinc, jnp.sinc),
                 (qb.angle, jnp.angle)]:
        same(f, j, xi)
    for f, j in [(qb.copysign, jnp.copysign), (qb.heaviside, jnp.heaviside), (qb.float_power, jnp.float_power), (qb.fmax, jnp.fmax),
                 (qb.fmod, jnp.fmod)]:
        same(f, j, xi, np.array([2, 2, -1]))


def test_sinc_derivatives_at_zero():
    d1 = qb.grad(qb.sinc)
    d2 = qb.grad(d1)
    d3 = qb.grad(d2)
    d4 = qb.grad(d3)
    x0 = qb.array(0.0)
    assert d1(x0).item() == 0.0 and qb.jit(d1)(x0).item() == 0.0
    assert d2(x0).item() == pytest.approx(-math.pi**2 / 3, rel=1e-14)
    assert qb.jit(d2)(x0).item() == pytest.approx(-math.pi**2 / 3, rel=1e-14)
    assert d3(x0).item() == 0.0
    assert d4(x0).item() == pytest.approx(math.pi**4 / 5, rel=1e-14)
    jd2 = jax.grad(jax.grad(jnp.sinc))
    for v in [0.0, 0.3, -1.7, 2.5]:
        assert d2(qb.array(v)).item() == pytest.approx(float(jd2(v)), rel=1e-12, abs=1e-12)
    xs = qb.array([0.0, 0.5, -0.25])
    assert_close(qb.vmap(d2)(xs), np.asarray(jax.vmap(jd2)(np.asarray(xs.numpy()))), 1e-12, 1e-12)


def test_gcd_lcm():
    a = RNG.integers(-60, 60, (4, 5))
    b = RNG.integers(-60, 60, (5,))
    a[0, 0], b[0] = 0, 0
    check_all(qb.gcd, J(jnp.gcd), [a, b])
    check_all(qb.lcm, J(jnp.lcm), [a, b])
    same(qb.gcd, jnp.gcd, np.array([12, 7], dtype=np.int32), np.array([18, 0], dtype=np.int32))
    assert qb.gcd(qb.array([12, 18], dtype=qb.uint32), 8).tolist() == [4, 2]
    with pytest.raises(qb.DTypeError, match="gcd"):
        qb.gcd(qb.array([1.0]), 2)
    with pytest.raises(qb.DTypeError, match="lcm"):
        qb.lcm(qb.array([True]), True)


# ---------------------------------------------------------------------------------------------
# Dtype and array predicates

DTYPES = ["bool", "uint8", "uint32", "int32", "int64", "float32", "float64"]


def test_promote_types_result_type_can_cast_match_jax():
    for a in DTYPES:
        for b in DTYPES:
            assert qb.promote_types(a, b) == np.dtype(jnp.promote_types(a, b)), (a, b)
            x, y = np.zeros(1, a), np.zeros(1, b)
            assert qb.result_type(qb.array(x, dtype=a), qb.array(y, dtype=b)) == np.dtype(jnp.result_type(x, y)), (a, b)
            for casting in ("no", "safe", "same_kind", "unsafe"):
                assert qb.can_cast(qb.dtype(a), qb.dtype(b), casting) == bool(jnp.can_cast(a, b, casting)), (a, b, casting)
        for s in (True, 3, 2.5):
            assert qb.result_type(qb.dtype(a), s) == np.dtype(jnp.result_type(a, s)), (a, s)
        assert qb.result_type(qb.dtype(a), float) == np.dtype(jnp.result_type(a, float))
    assert qb.result_type(1, 2.0) == qb.float64 and qb.result_type(True, 1) == qb.int64 and qb.result_type(True) == qb.bool_
    assert qb.result_type([1, 2], 1.0) == qb.float64
    with pytest.raises(qb.ArgumentTypeError, match="can_cast"):
        qb.can_cast(1, qb.int32)
    with pytest.raises(qb.InvalidArgumentError, match="result_type"):
        qb.result_type()
    with pytest.raises(qb.DTypeError, match="complex"):
        qb.result_type(1j)
    with pytest.raises(qb.DTypeError):
        qb.promote_types("float16", "float32")


def test_issubdtype_isdtype_finfo():
    kinds = [np.floating, np.integer, np.signedinteger, np.unsignedinteger, np.number, np.inexact, np.bool_, np.generic, np.float32]
    for a in DTYPES:
        for k in kinds:
            assert qb.issubdtype(qb.dtype(a), k) == jnp.issubdtype(a, k), (a, k)
        kinds_ = ["bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating", "numeric"]
        for k in kinds_ + [("bool", "real floating")]:
            assert qb.isdtype(qb.dtype(a), k) == jnp.isdtype(np.dtype(a), k), (a, k)
        assert qb.isdtype(qb.dtype(a), qb.int32) == (a == "int32")
    assert qb.issubdtype(qb.array([1.0], dtype=qb.float32), np.floating)
    with pytest.raises(qb.InvalidArgumentError, match="isdtype"):
        qb.isdtype(qb.float32, "floats")
    for d in (qb.float32, qb.float64):
        fi, ji = qb.finfo(d), jnp.finfo(d.np)
        for k in ("bits", "eps", "epsneg", "max", "min", "tiny", "smallest_normal", "resolution", "nmant", "nexp", "maxexp", "minexp", "precision"):
            assert getattr(fi, k) == getattr(ji, k), k
        assert fi.dtype is d and isinstance(fi.eps, float)
    assert qb.finfo(qb.ones(2, dtype=qb.float32)).bits == 32 and qb.finfo("float64").bits == 64
    x = qb.ones(3, dtype=qb.float32)
    assert (x * qb.finfo(qb.float64).eps).dtype == qb.float32  # Python floats: weak
    with pytest.raises(qb.DTypeError, match="iinfo"):
        qb.finfo(qb.int32)


def test_shape_predicates():
    x = qb.ones((2, 3))
    for v in [x, 1.0, [[1, 2, 3]], np.ones((4, 1))]:
        jv = np.asarray(v.numpy()) if isinstance(v, qb.Tensor) else np.asarray(v)
        assert qb.ndim(v) == jnp.ndim(jv) and qb.shape(v) == jnp.shape(jv) and qb.size(v) == jnp.size(jv)
    assert qb.size(x, axis=1) == 3 and qb.size(x, axis=(0, -1)) == 6
    for v, want in [(1.0, True), (np.float32(1), True), (qb.array(1.0), True), (qb.array([1.0]), False), ([1], False), (np.ones(()), True)]:
        assert qb.isscalar(v) is want and jnp.isscalar(v if not isinstance(v, qb.Tensor) else np.asarray(v.numpy())) is want
    assert qb.iscomplexobj(x) is False and qb.iscomplexobj(np.ones(2, complex)) is True and qb.isrealobj(3.0) is True
    def f(v):  # static answers for a traced array
        assert (qb.ndim(v), qb.shape(v), qb.size(v), qb.isscalar(v), qb.iscomplexobj(v)) == (2, (2, 3), 6, False, False)
        return qb.iscomplex(v) | qb.isreal(v)

    assert qb.jit(f)(x).tolist() == [[True] * 3] * 2
    assert qb.vmap(f)(qb.ones((4, 2, 3))).shape == (4, 2, 3)
    with pytest.raises(qb.ShapeError, match="size"):
        qb.size(x, axis=2)


def test_real_imag_angle_dtypes():
    xi = qb.array([1, -2])
    assert qb.real(xi).dtype == qb.int64 and qb.imag(xi).tolist() == [0, 0] and qb.conj(xi).dtype == qb.int64
    assert qb.angle(qb.array([-1.0], dtype=qb.float32)).dtype == qb.float32
    assert qb.angle(qb.array(-1.0, dtype=qb.float32)).dtype == qb.float64  # 0-d: JAX's default float
    assert qb.angle(qb.array([-1.0]), deg=True).tolist() == [180.0]


# ---------------------------------------------------------------------------------------------
# Reductions and statistics

XN = U((4, 5))
XN[0, 1] = XN[2, 3] = XN[2, 0] = NAN
XN[3, :] = NAN


def test_ptp_count_nonzero():
    x = U((3, 4))
    for axis in (None, 0, 1, (0, 1)):
        check_all(lambda v: qb.ptp(v, axis=axis), J(lambda v: jnp.ptp(v, axis=axis)), [x], vmap=False)
        same(lambda v: qb.ptp(v, axis=axis, keepdims=True), lambda v: jnp.ptp(v, axis=axis, keepdims=True), x)
        xi = RNG.integers(-1, 2, (3, 4))
        same(lambda v: qb.count_nonzero(v, axis=axis), lambda v: jnp.count_nonzero(v, axis=axis), xi)
        same(lambda v: qb.count_nonzero(v, axis=axis, keepdims=True), lambda v: jnp.count_nonzero(v, axis=axis, keepdims=True), xi > 0)
    with pytest.raises(qb.DTypeError, match="ptp"):
        qb.ptp(qb.array([True, False]))
    with pytest.raises(qb.UnsupportedOperationError, match="out"):
        qb.ptp(qb.array([1.0]), out=qb.array([0.0]))


def test_average():
    x, w = U((3, 4)), U((3, 4), 0.5, 2)
    check_all(lambda a, b: qb.average(a, weights=b), J(lambda a, b: jnp.average(a, weights=b)), [x, w])
    check_all(lambda a, b: qb.average(a, axis=1, weights=b), J(lambda a, b: jnp.average(a, axis=1, weights=b)), [x, w[0]])
    check_all(lambda a: qb.average(a, axis=0), J(lambda a: jnp.average(a, axis=0)), [x])
    x3, w3 = U((2, 3, 4)), U((4, 2), 0.5, 2)
    for kw in [dict(axis=(2, 0)), dict(axis=(2, 0), keepdims=True), dict(axis=(2, 0), returned=True)]:
        same(lambda a, b: qb.average(a, weights=b, **kw), lambda a, b: jnp.average(a, weights=b, **kw), x3, w3)
    for kw in [dict(returned=True), dict(axis=1, returned=True, keepdims=True), dict(axis=(0, 1), returned=True)]:
        same(lambda a: qb.average(a, **kw), lambda a: jnp.average(a, **kw), x)
    same(lambda a: qb.average(a), lambda a: jnp.average(a), np.array([1, 2, 4]))
    assert qb.average(qb.ones(3, dtype=qb.float32)).dtype == qb.float32
    with pytest.raises(qb.ShapeError, match="axis must be given"):
        qb.average(qb.ones((2, 3)), weights=qb.ones(3))
    with pytest.raises(qb.ShapeError, match="extents"):
        qb.average(qb.ones((2, 3)), axis=1, weights=qb.ones(2))


NAN_RED = [
    ("nansum", qb.nansum, jnp.nansum, {}),
    ("nanprod", qb.nanprod, jnp.nanprod, {}),
    ("nanmax", qb.nanmax, jnp.nanmax, {}),
    ("nanmin", qb.nanmin, jnp.nanmin, {}),
    ("nanmean", qb.nanmean, jnp.nanmean, {}),
    ("nanvar", qb.nanvar, jnp.nanvar, {}),
    ("nanvar_ddof", qb.nanvar, jnp.nanvar, {"ddof": 1}),
    ("nanstd", qb.nanstd, jnp.nanstd, {}),
    ("nanargmax", qb.nanargmax, jnp.nanargmax, {}),
    ("nanargmin", qb.nanargmin, jnp.nanargmin, {}),
    ("nanmedian", qb.nanmedian, jnp.nanmedian, {}),
]


@pytest.mark.parametrize("name,f,j,kw", NAN_RED, ids=[r[0] for r in NAN_RED])
def test_nan_reductions(name, f, j, kw):
    axes = (None, 0, 1, -1) if "arg" in name else (None, 0, 1, (0, 1))
    for axis in axes:
        for keepdims in (False, True):
            same(lambda v: f(v, axis=axis, keepdims=keepdims, **kw), lambda v: j(v, axis=axis, keepdims=keepdims, **kw), XN)
    # Integer inputs take the plain reductions.
    xi = RNG.integers(-5, 5, (3, 4))
    same(lambda v: f(v, axis=0, **kw), lambda v: j(v, axis=0, **kw), xi)
    # Gradients (the NaNs get none) against jax.grad; vmap against jax.vmap.
    if "arg" not in name:
        xs = XN[:3]
        g = qb.grad(lambda v: qb.sum(f(v, axis=1, **kw)))(qb.array(xs))
        assert_close(g, np.asarray(jax.grad(lambda v: jnp.sum(j(v, axis=1, **kw)))(xs)), 1e-12, 1e-12, "grad")
    assert_close(qb.vmap(lambda v: f(v, **kw))(qb.array(XN[:3])), np.asarray(jax.vmap(lambda v: j(v, **kw))(XN[:3])), 1e-12, 1e-12, "vmap")


def test_nan_reduction_arguments():
    w = RNG.random((4, 5)) > 0.3
    same(lambda v, m: qb.nansum(v, axis=1, where=m, initial=2.0), lambda v, m: jnp.nansum(v, axis=1, where=m, initial=2.0), XN, w)
    same(lambda v, m: qb.nanprod(v, axis=0, where=m), lambda v, m: jnp.nanprod(v, axis=0, where=m), XN, w)
    same(lambda v, m: qb.nanmax(v, axis=1, where=m, initial=-5.0), lambda v, m: jnp.nanmax(v, axis=1, where=m, initial=-5.0), XN, w)
    same(lambda v: qb.nanmin(v, axis=1, initial=-1.0), lambda v: jnp.nanmin(v, axis=1, initial=-1.0), XN)
    same(lambda v, m: qb.nanmean(v, axis=1, where=m), lambda v, m: jnp.nanmean(v, axis=1, where=m), XN, w)
    same(lambda v, m: qb.nanvar(v, axis=0, where=m, ddof=1), lambda v, m: jnp.nanvar(v, axis=0, where=m, ddof=1), XN, w)
    mu = np.nanmean(XN[:3], axis=1, keepdims=True)
    same(lambda v, m: qb.nanstd(v, axis=1, mean=m), lambda v, m: jnp.nanstd(v, axis=1, mean=m), XN[:3], mu)
    same(lambda v: qb.nansum(v, dtype=qb.float32), lambda v: jnp.nansum(v, dtype=jnp.float32), XN, rtol=1e-6, atol=1e-6)
    x32 = XN.astype(np.float32)
    for f in (qb.nansum, qb.nanmean, qb.nanvar, qb.nanmax, qb.nanmedian):
        assert f(qb.array(x32), axis=0).dtype == qb.float32, f.__name__
    with pytest.raises(qb.InvalidArgumentError, match="initial"):
        qb.nanmax(qb.array(XN), where=qb.array(w))
    for f in (qb.nansum, qb.nanmean, qb.nanvar, qb.nanargmax, qb.nancumsum):
        with pytest.raises(qb.UnsupportedOperationError, match="out"):
            f(qb.array(XN), out=qb.array(XN))


def test_nancumulative():
    for axis in (None, 0, 1):
        check_all(lambda v: qb.nancumsum(v, axis=axis), J(lambda v: jnp.nancumsum(v, axis=axis)), [XN], grads=False, vmap=False)
        same(lambda v: qb.nancumprod(v, axis=axis), lambda v: jnp.nancumprod(v, axis=axis), XN)
    same(lambda v: qb.nancumsum(v), lambda v: jnp.nancumsum(v), np.array([True, False, True]))
    same(lambda v: qb.nancumsum(v, axis=0, dtype=qb.float32), lambda v: jnp.nancumsum(v, axis=0, dtype=jnp.float32), XN)
    g = qb.grad(lambda v: qb.sum(qb.nancumprod(v, axis=1)))(qb.array(XN[:2]))
    assert_close(g, np.asarray(jax.grad(lambda v: jnp.sum(jnp.nancumprod(v, axis=1)))(XN[:2])), 1e-12, 1e-12)


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "nearest", "midpoint"])
def test_nanquantile(method):
    x3 = U((3, 4, 5))
    x3[0, 1, :3] = NAN
    x3[1, :, 2] = NAN
    x3[2, 3, :] = NAN
    qs = np.array([0.0, 0.1, 0.5, 0.77, 1.0])
    cases = [(None, qs, False), (0, qs, True), (2, 0.3, False), (-1, qs, False), ((0, 2), 0.3, True), ((2, 1), qs, False), (None, 0.6, True)]
    for axis, q, keepdims in cases:
        same(lambda v, qq: qb.nanquantile(v, qq, axis=axis, method=method, keepdims=keepdims),
             lambda v, qq: jnp.nanquantile(v, qq, axis=axis, method=method, keepdims=keepdims), x3, q)
    same(lambda v: qb.nanpercentile(v, 40.0, axis=1, method=method), lambda v: jnp.nanpercentile(v, 40.0, axis=1, method=method), XN)
    # Without NaNs it is quantile.
    x = U((4, 6))
    assert_close(qb.nanquantile(qb.array(x), qs, axis=1, method=method), qb.quantile(qb.array(x), qs, axis=1, method=method), 1e-14, 1e-14)


def test_nanquantile_grad_vmap_f32_and_errors():
    x = XN[:3]
    g = qb.grad(lambda v: qb.sum(qb.nanquantile(v, qb.array([0.25, 0.6]), axis=1)))(qb.array(x))
    assert_close(g, np.asarray(jax.grad(lambda v: jnp.sum(jnp.nanquantile(v, jnp.array([0.25, 0.6]), axis=1)))(x)), 1e-12, 1e-12)
    assert_close(qb.vmap(lambda v: qb.nanmedian(v))(qb.array(x)), np.asarray(jax.vmap(jnp.nanmedian)(x)), 1e-13, 1e-13)
    assert qb.nanquantile(qb.array(x.astype(np.float32)), 0.5).dtype == qb.float32
    same(lambda v: qb.nanmedian(v, axis=0), lambda v: jnp.nanmedian(v, axis=0), np.array([[1, 2], [3, 5], [4, 4]]))
    a = qb.array(x)
    with pytest.raises(qb.InvalidArgumentError, match="method"):
        qb.nanquantile(a, 0.5, method="closest")
    with pytest.raises(qb.UnsupportedOperationError, match="weights"):
        qb.nanquantile(a, 0.5, weights=a)
    with pytest.raises(qb.UnsupportedOperationError, match="overwrite_input"):
        qb.nanmedian(a, overwrite_input=True)
    with pytest.raises(qb.ShapeError, match="q must be"):
        qb.nanquantile(a, qb.ones((2, 2)) * 0.5)
    with pytest.raises(qb.ShapeError, match="repeated"):
        qb.nanquantile(a, 0.5, axis=(1, 1))


def test_cov_corrcoef():
    m = U((3, 6))
    check_all(qb.cov, J(jnp.cov), [m])
    check_all(qb.corrcoef, J(jnp.corrcoef), [m], rtol=1e-12, atol=1e-13)
    y = U((2, 6))
    fw = RNG.integers(1, 4, 6)
    aw = U((6,), 0.3, 2.0)
    cases = [
        dict(), dict(rowvar=False), dict(bias=True), dict(ddof=2), dict(fweights=fw), dict(aweights=aw),
        dict(fweights=fw, aweights=aw), dict(fweights=fw, aweights=aw, ddof=0), dict(fweights=fw, ddof=3),
    ]
    for kw in cases:
        same(lambda a: qb.cov(a, **kw), lambda a: jnp.cov(a, **kw), m if not kw.get("rowvar") is False else m.T)
    same(lambda a, b: qb.cov(a, b), lambda a, b: jnp.cov(a, b), m, y)
    same(lambda a: qb.cov(a), lambda a: jnp.cov(a), m[0])
    same(lambda a, b: qb.cov(a, b, rowvar=False), lambda a, b: jnp.cov(a, b, rowvar=False), m.T, y.T)
    same(lambda a: qb.cov(a, dtype=qb.float32), lambda a: jnp.cov(a, dtype=jnp.float32), m, rtol=1e-5, atol=1e-6)
    same(lambda a: qb.cov(a), lambda a: jnp.cov(a), RNG.integers(0, 9, (2, 5)))
    same(lambda a, b: qb.corrcoef(a, b), lambda a, b: jnp.corrcoef(a, b), m, y, rtol=1e-12, atol=1e-13)
    same(lambda a: qb.corrcoef(a), lambda a: jnp.corrcoef(a), m[0])
    same(lambda a: qb.corrcoef(a, rowvar=False), lambda a: jnp.corrcoef(a, rowvar=False), m.T, rtol=1e-12, atol=1e-13)
    g = qb.grad(lambda a, w: qb.sum(qb.cov(a, aweights=w) ** 2), argnums=(0, 1))(qb.array(m), qb.array(aw))
    jg = jax.grad(lambda a, w: jnp.sum(jnp.cov(a, aweights=w) ** 2), argnums=(0, 1))(m, aw)
    assert_close(g, [np.asarray(v) for v in jg], 1e-11, 1e-12)
    with pytest.raises(qb.ShapeError, match="at most 2"):
        qb.cov(qb.ones((2, 2, 2)))
    with pytest.raises(qb.DTypeError, match="fweights"):
        qb.cov(qb.array(m), fweights=qb.array(aw))
    with pytest.raises(qb.ShapeError, match="aweights"):
        qb.cov(qb.array(m), aweights=qb.ones(5))
    with pytest.raises(qb.DTypeError, match="dtype"):
        qb.cov(qb.array(m), dtype=qb.int32)


def test_trapezoid():
    y = U((3, 5))
    check_all(qb.trapezoid, J(jnp.trapezoid), [y])
    xs = np.sort(U((5,), 0, 4))
    check_all(lambda a, b: qb.trapezoid(a, b), J(lambda a, b: jnp.trapezoid(a, b)), [y, xs])
    same(lambda a, b: qb.trapezoid(a, b, axis=0), lambda a, b: jnp.trapezoid(a, b, axis=0), y, np.sort(U((3, 5)), axis=0))
    same(lambda a: qb.trapezoid(a, dx=0.25, axis=0), lambda a: jnp.trapezoid(a, dx=0.25, axis=0), y)
    same(lambda a, d: qb.trapezoid(a, dx=d), lambda a, d: jnp.trapezoid(a, dx=d), y, U((3, 1), 0.1, 1))
    same(lambda a: qb.trapezoid(a), lambda a: jnp.trapezoid(a), np.array([1, 2, 4]))


def test_gradient():
    f = U((4, 5))
    check_all(qb.gradient, J(jnp.gradient), [f[0]])
    for kw in [dict(axis=0), dict(axis=-1), dict(axis=(1, 0))]:
        same(lambda a: qb.gradient(a, **kw), lambda a: jnp.gradient(a, **kw), f)
    same(lambda a: qb.gradient(a), lambda a: jnp.gradient(a), f)
    same(lambda a: qb.gradient(a, 0.5), lambda a: jnp.gradient(a, 0.5), f)
    same(lambda a: qb.gradient(a, 0.5, 2.0), lambda a: jnp.gradient(a, 0.5, 2.0), f)
    c = np.cumsum(U((5,), 0.2, 1.0))
    same(lambda a, h: qb.gradient(a, h, axis=1), lambda a, h: jnp.gradient(a, h, axis=1), f, c)
    check_all(lambda a, h: qb.gradient(a, h, axis=1), J(lambda a, h: jnp.gradient(a, h, axis=1)), [f, c], grad_eps=1e-5, grad_tol=1e-4)
    same(lambda a: qb.gradient(a), lambda a: jnp.gradient(a), f[:2, 0])  # two samples
    same(lambda a, h: qb.gradient(a, h), lambda a, h: jnp.gradient(a, h), f[:2, 0], c[:2])
    assert qb.gradient(qb.ones((2, 3)), edge_order=1).__class__ is list
    with pytest.raises(qb.UnsupportedOperationError, match="edge_order"):
        qb.gradient(qb.ones(4), edge_order=2)
    with pytest.raises(qb.ShapeError, match="at least 2"):
        qb.gradient(qb.ones((1, 3)))
    with pytest.raises(qb.ShapeError, match="coordinates"):
        qb.gradient(qb.ones(4), qb.ones(3))
    with pytest.raises(qb.ArgumentTypeError, match="spacing"):
        qb.gradient(qb.ones((3, 3)), 1.0, 2.0, 3.0)


def test_ediff1d_unwrap():
    x = U((3, 4))
    check_all(qb.ediff1d, J(jnp.ediff1d), [x])
    same(lambda a: qb.ediff1d(a, to_end=np.array([9.0, 8.0]), to_begin=-1.0), lambda a: jnp.ediff1d(a, to_end=np.array([9.0, 8.0]), to_begin=-1.0), x)
    same(lambda a: qb.ediff1d(a, to_begin=0.5), lambda a: jnp.ediff1d(a, to_begin=0.5), np.array([1, 2, 4]))
    assert qb.ediff1d(qb.array([3.0]), to_end=1.0).tolist() == [1.0]
    with pytest.raises(qb.ShapeError, match="zero-extent"):
        qb.ediff1d(qb.array([3.0]))
    p = np.cumsum(U((3, 8), -4, 4), axis=1)
    check_all(qb.unwrap, J(jnp.unwrap), [p])
    for kw in [dict(axis=0), dict(discont=4.0), dict(period=3.0), dict(period=5.0, discont=1.0)]:
        same(lambda a: qb.unwrap(a, **kw), lambda a: jnp.unwrap(a, **kw), p)
    same(lambda a: qb.unwrap(a), lambda a: jnp.unwrap(a), np.array([0, 4, 8, 1]))
    same(lambda a: qb.unwrap(a, period=6), lambda a: jnp.unwrap(a, period=6), np.array([0, 4, 8, 1, 12]))
    assert qb.unwrap(qb.array(p.astype(np.float32))).dtype == qb.float32


def test_cross():
    a, b = U((4, 3)), U((4, 3))
    check_all(qb.cross, J(jnp.cross), [a, b])
    check_all(qb.cross, J(jnp.cross), [a[:, :2], b[:, :2]])
    same(qb.cross, jnp.cross, a[:, :2], b)
    same(qb.cross, jnp.cross, a, b[:, :2])
    same(qb.cross, jnp.cross, a[0], b)  # broadcasting
    same(lambda x, y: qb.cross(x, y, axisa=0, axisb=1, axisc=0), lambda x, y: jnp.cross(x, y, axisa=0, axisb=1, axisc=0), a.T, b)
    same(lambda x, y: qb.cross(x, y, axis=0), lambda x, y: jnp.cross(x, y, axis=0), a.T, b.T)
    same(qb.cross, jnp.cross, np.array([1, 2, 3]), np.array([4, 5, 6]))
    with pytest.raises(qb.ShapeError, match="2 or 3"):
        qb.cross(qb.ones(4), qb.ones(3))


def test_vecdot_matvec_vecmat():
    check_all(qb.vecdot, J(jnp.vecdot), [U((3, 4)), U((4,))])
    same(lambda x, y: qb.vecdot(x, y, axis=0), lambda x, y: jnp.vecdot(x, y, axis=0), U((4, 3)), U((4, 1)))
    same(qb.vecdot, jnp.vecdot, np.array([1, 2]), np.array([3, 4]))
    check_all(qb.matvec, J(jnp.matvec), [U((2, 3, 4)), U((4,))])
    same(qb.matvec, jnp.matvec, U((3, 4)), U((5, 4)))
    check_all(qb.vecmat, J(jnp.vecmat), [U((3,)), U((2, 3, 4))])
    same(qb.vecmat, jnp.vecmat, U((5, 3)), U((3, 4)))
    with pytest.raises(qb.ShapeError, match="vecdot"):
        qb.vecdot(qb.ones(3), qb.ones(4))
    with pytest.raises(qb.ShapeError, match="matvec"):
        qb.matvec(qb.ones((2, 3)), qb.ones(2))
    with pytest.raises(qb.ShapeError, match="vecmat"):
        qb.vecmat(qb.ones(3), qb.ones(3))
    with pytest.raises(qb.UnsupportedOperationError, match="precision"):
        qb.vecdot(qb.ones(3), qb.ones(3), precision="highest")


# ---------------------------------------------------------------------------------------------
# Polynomials


def test_polyval():
    p, x = U((4,)), U((3, 5))
    check_all(qb.polyval, J(jnp.polyval), [p, x])
    same(qb.polyval, jnp.polyval, U((3, 2)), U((2,)))  # p's trailing dims broadcast
    same(qb.polyval, jnp.polyval, np.array([1, -2, 3]), np.array([2, 5]))
    p70 = U((70,), -0.2, 0.2)  # the scan path
    check_all(qb.polyval, J(jnp.polyval), [p70, U((4,), -1, 1)], rtol=1e-12, atol=1e-13, grads=False)
    g = qb.grad(lambda a, b: qb.sum(qb.polyval(a, b)), argnums=(0, 1))(qb.array(p70), qb.array([0.5, -0.3]))
    jg = jax.grad(lambda a, b: jnp.sum(jnp.polyval(a, b)), argnums=(0, 1))(p70, np.array([0.5, -0.3]))
    assert_close(g, [np.asarray(v) for v in jg], 1e-12, 1e-12)
    assert qb.polyval(qb.array([1.0, 2.0], dtype=qb.float32), 2.0).dtype == qb.float32


def test_poly_arithmetic():
    a, b = U((4,)), U((2,))
    for f, j in [(qb.polyadd, jnp.polyadd), (qb.polysub, jnp.polysub), (qb.polymul, jnp.polymul)]:
        check_all(f, J(j), [a, b])
        check_all(f, J(j), [b, a])
        same(f, j, np.array([1, 2]), np.array([1, 2, 3]))
    same(qb.polyadd, jnp.polyadd, a, np.array([1, 2, 3, 4]))
    z = np.array([0.0, 0.0, 1.0, 2.0])
    got = qb.polymul(qb.array(z), qb.array(b), trim_leading_zeros=True)
    assert_close(got, np.asarray(jnp.polymul(z, b, trim_leading_zeros=True)), 1e-14, 1e-14)
    with pytest.raises(qb.TracerError, match="trim_leading_zeros"):
        qb.jit(lambda x, y: qb.polymul(x, y, trim_leading_zeros=True))(qb.array(z), qb.array(b))


def test_polyder_polyint_vander():
    p = U((5,))
    for m in (0, 1, 2, 4):
        check_all(lambda v: qb.polyder(v, m), J(lambda v: jnp.polyder(v, m)), [p])
    for m, k in [(0, None), (1, None), (2, None), (1, 3.0), (2, np.array([1.0, -2.0])), (3, 0.5)]:
        check_all(lambda v: qb.polyint(v, m, k), J(lambda v: jnp.polyint(v, m, k)), [p])
    same(lambda v: qb.polyder(v), lambda v: jnp.polyder(v), np.array([1, 2, 3]))
    same(lambda v: qb.polyint(v), lambda v: jnp.polyint(v), np.array([1, 1]))
    g = qb.grad(lambda v, k: qb.sum(qb.polyint(v, 2, k)), argnums=(0, 1))(qb.array(p), qb.array([1.0, 2.0]))
    jg = jax.grad(lambda v, k: jnp.sum(jnp.polyint(v, 2, k)), argnums=(0, 1))(p, np.array([1.0, 2.0]))
    assert_close(g, [np.asarray(v) for v in jg], 1e-13, 1e-13)
    x = U((4,))
    for n, inc in [(None, False), (3, False), (6, True), (1, True)]:
        check_all(lambda v: qb.vander(v, n, inc), J(lambda v: jnp.vander(v, n, inc)), [x])
    same(lambda v: qb.vander(v), lambda v: jnp.vander(v), np.array([1, 2, 3]))
    with pytest.raises(qb.InvalidArgumentError, match="polyder"):
        qb.polyder(qb.array(p), -1)
    with pytest.raises(qb.ShapeError, match="polyder"):
        qb.polyder(qb.array(p), 5)
    with pytest.raises(qb.ShapeError, match="polyint"):
        qb.polyint(qb.array(p), 2, qb.ones(3))
    with pytest.raises(qb.ShapeError, match="vander"):
        qb.vander(qb.ones((2, 2)))
    with pytest.raises(qb.TracerError, match="static"):
        qb.jit(lambda v, m: qb.polyder(v, m))(qb.array(p), qb.array(1))


def test_polyfit():
    x = np.linspace(-1, 2, 9)
    y = 0.5 * x**3 - x + 2 + 0.01 * U((9,))
    for deg in (0, 1, 3):
        check_all(lambda a, b: qb.polyfit(a, b, deg), J(lambda a, b: jnp.polyfit(a, b, deg)), [x, y], rtol=1e-9, atol=1e-10, grads=False, vmap=False)
    w = U((9,), 0.5, 2)
    same(lambda a, b, c: qb.polyfit(a, b, 2, w=c), lambda a, b, c: jnp.polyfit(a, b, 2, w=c), x, y, w, rtol=1e-9, atol=1e-10)
    y2 = np.stack([y, 2 * y + 1], axis=1)
    same(lambda a, b: qb.polyfit(a, b, 2), lambda a, b: jnp.polyfit(a, b, 2), x, y2, rtol=1e-9, atol=1e-10)
    same(lambda a, b, c: qb.polyfit(a, b, 2, w=c), lambda a, b, c: jnp.polyfit(a, b, 2, w=c), x, y2, w, rtol=1e-9, atol=1e-10)
    g = qb.grad(lambda b: qb.sum(qb.polyfit(qb.array(x), b, 2)))(qb.array(y))
    assert_close(g, np.asarray(jax.grad(lambda b: jnp.sum(jnp.polyfit(x, b, 2)))(y)), 1e-9, 1e-10)
    # full=True and cov=True are supported now (tests/python/test_numpy_gaps.py checks them).
    assert len(qb.polyfit(qb.array(x), qb.array(y), 2, full=True)) == 5
    with pytest.raises(qb.InvalidArgumentError, match="cov"):
        qb.polyfit(qb.array(x), qb.array(y), 2, cov="scaled")
    with pytest.raises(qb.ShapeError, match="y must"):
        qb.polyfit(qb.array(x), qb.ones(4), 2)
    with pytest.raises(qb.InvalidArgumentError, match="deg"):
        qb.polyfit(qb.array(x), qb.array(y), -1)


# ---------------------------------------------------------------------------------------------
# Errors


def test_typed_errors():
    with pytest.raises(qb.DTypeError, match="ldexp"):
        qb.ldexp(qb.array([1.0]), qb.array([2.0]))
    with pytest.raises(qb.ShapeError, match="copysign"):
        qb.copysign(qb.ones(3), qb.ones(4))
    with pytest.raises(qb.DTypeError, match="fmax"):
        qb.fmax(qb.ones(2, dtype=qb.float32), qb.ones(2))
    with pytest.raises(qb.UnsupportedOperationError, match="out"):
        qb.modf(qb.ones(2), out=qb.ones(2))
    with pytest.raises(qb.ArgumentTypeError, match="returned"):
        qb.average(qb.ones(2), returned="yes")
    with pytest.raises(qb.ArgumentTypeError, match="axis"):
        qb.nanmean(qb.ones(2), axis=1.5)


# ---------------------------------------------------------------------------------------------
# The remaining names: scalar-type aliases, windows, cumulative_sum/prod, poly/polydiv,
# packbits/unpackbits, copy, iterable, i0.


def test_scalar_type_and_dtype_aliases():
    for n in ("generic", "number", "inexact", "floating", "integer", "signedinteger", "unsignedinteger", "complexfloating", "character", "flexible"):
        assert getattr(qb, n) is getattr(jnp, n) is getattr(np, n)
    assert qb.issubdtype(qb.float32, qb.floating) and qb.issubdtype(qb.int32, qb.signedinteger) and not qb.issubdtype(qb.uint8, qb.signedinteger)
    assert (qb.bool, qb.float_, qb.double, qb.single, qb.int_) == (qb.bool_, qb.float64, qb.float64, qb.float32, qb.int64)
    assert qb.double(2).dtype == qb.float64
    assert isinstance(qb.ones(2), qb.ndarray) and not isinstance(np.ones(2), qb.ndarray)
    assert isinstance(qb.jit(lambda x: qb.ones(1) if isinstance(x, qb.ndarray) else None)(qb.ones(2)), qb.ndarray)


@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
def test_windows(name):
    for m in (1, 2, 5, 8):
        assert_close(getattr(qb, name)(m), getattr(jnp, name)(m), 1e-14, 1e-15, what=f"{name}({m})")
    with pytest.raises(qb.ShapeError, match=f"{name}: M must be at least 1"):
        getattr(qb, name)(0)


def test_kaiser():
    for m in (1, 4, 9):
        assert_close(qb.kaiser(m, 3.5), jnp.kaiser(m, 3.5), 1e-12, 1e-14)
    g = qb.grad(lambda b: qb.kaiser(6, b).sum())(qb.array(2.0))
    assert_close(g, jax.grad(lambda b: jnp.kaiser(6, b).sum())(2.0), 1e-10, 1e-12)
    assert_close(qb.i0(qb.array([0.5, 3.0])), jnp.i0(np.array([0.5, 3.0])), 1e-14, 0)


def test_cumulative_sum_and_prod():
    x = np.array([[1.5, 2.0, -3.0], [4.0, 0.5, 6.0]])
    for kw in (dict(axis=1), dict(axis=0, include_initial=True), dict(axis=-1, dtype=np.float32)):
        for q, j in ((qb.cumulative_sum, jnp.cumulative_sum), (qb.cumulative_prod, jnp.cumulative_prod)):
            qkw = dict(kw, dtype=qb.float32) if "dtype" in kw else kw
            assert_close(q(qb.array(x), **qkw), j(x, **kw), 1e-6, 1e-6, what=f"{q.__name__} {kw}")
            assert_close(qb.jit(lambda a: q(a, **qkw))(qb.array(x)), j(x, **kw), 1e-6, 1e-6)
    assert_close(qb.cumulative_sum(qb.array([1, 2, 3]), include_initial=True), jnp.cumulative_sum(np.array([1, 2, 3]), include_initial=True))
    g = qb.grad(lambda a: qb.cumulative_prod(a, axis=1, include_initial=True).sum())(qb.array(x))
    assert_close(g, jax.grad(lambda a: jnp.cumulative_prod(a, axis=1, include_initial=True).sum())(x))
    with pytest.raises(qb.InvalidArgumentError, match="cumulative_sum: axis must be given"):
        qb.cumulative_sum(qb.ones((2, 2)))


def test_poly_and_polydiv():
    r = np.array([1.0, 2.0, -3.0, 0.5])
    assert_close(qb.poly(qb.array(r)), jnp.poly(r))
    assert_close(qb.grad(lambda z: qb.poly(z).sum())(qb.array(r)), jax.grad(lambda z: jnp.poly(z).sum())(r))
    for u, v in (([1.0, 3.0, 2.0], [1.0, 1.0]), ([2.0, 0.0, -1.0, 5.0], [3.0, 1.0]), ([4.0, 2.0], [2.0, 1.0])):
        u, v = np.array(u), np.array(v)
        assert_close(qb.polydiv(qb.array(u), qb.array(v)), jnp.polydiv(u, v), 1e-14, 1e-14)
        assert_close(qb.jit(qb.polydiv)(qb.array(u), qb.array(v)), jnp.polydiv(u, v), 1e-14, 1e-14)
    u, v = np.array([2.0, 0.0, 0.0, 5.0]), np.array([1.0, 0.0])
    assert_close(qb.polydiv(qb.array(u), qb.array(v), trim_leading_zeros=True), jnp.polydiv(u, v, trim_leading_zeros=True))
    # An all-zero remainder keeps one zero (JAX's is empty; Quabla arrays are never empty).
    assert qb.polydiv(qb.array([1.0, 1.0]), qb.array([1.0, 1.0]), trim_leading_zeros=True)[1].tolist() == [0.0]
    with pytest.raises(qb.UnsupportedOperationError, match="poly: roots must be 1-D"):
        qb.poly(qb.ones((2, 2)))
    with pytest.raises(qb.ShapeError, match="polydiv: u .* at least as long"):
        qb.polydiv(qb.ones(2), qb.ones(3))


def test_packbits_and_unpackbits():
    b = np.random.default_rng(0).integers(0, 2, (3, 13))
    for kw in (dict(), dict(axis=1), dict(axis=0, bitorder="little")):
        assert_close(qb.packbits(qb.array(b), **kw), jnp.packbits(b, **kw), what=str(kw))
        assert_close(qb.jit(lambda a: qb.packbits(a, **kw))(qb.array(b)), jnp.packbits(b, **kw))
    u = np.random.default_rng(1).integers(0, 256, (2, 3)).astype(np.uint8)
    for kw in (dict(), dict(axis=1), dict(axis=0, bitorder="little", count=11), dict(axis=1, count=-3), dict(count=60)):
        assert_close(qb.unpackbits(qb.array(u, dtype=qb.uint8), **kw), jnp.unpackbits(u, **kw), what=str(kw))
        assert_close(qb.unpackbits(qb.array(u), **kw), jnp.unpackbits(u, **kw), what=str(kw))
    assert_close(qb.vmap(qb.packbits)(qb.array(b)), jax.vmap(jnp.packbits)(b))
    with pytest.raises(qb.DTypeError, match="packbits: a must have an integer or bool dtype"):
        qb.packbits(qb.ones(3))
    with pytest.raises(qb.InvalidArgumentError, match="bitorder"):
        qb.unpackbits(qb.array([1], dtype=qb.uint8), bitorder="middle")


def test_copy_and_iterable():
    x = qb.array([1.0, 2.0])
    assert qb.copy(x) is x and qb.copy([1, 2]).tolist() == [1, 2]
    assert qb.iterable([1]) and qb.iterable(x) and not qb.iterable(3)
    with pytest.raises(qb.UnsupportedOperationError, match="copy: order='F'"):
        qb.copy(x, order="F")
