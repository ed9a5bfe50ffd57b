"""qb.image (resize, scale_and_translate, ResizeMethod) against jax.image (x64): every method,
up- and downsampling with and without antialiasing, non-integer scales, NHWC batches and other
ranks, f64 and f32, integer images, eagerly and under jit, gradients in the image, scale and
translation, vmap, typed errors."""

import doctest

import numpy as np
import pytest

import quabla as qb
import quabla.image  # noqa: F401 - binds qb.image
from breadth_util import assert_close
from quabla.errors import ArgumentTypeError, InvalidArgumentError, QuablaError, ShapeError, UnsupportedOperationError

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.image as ji  # noqa: E402

I = qb.image
RNG = np.random.default_rng(7)
METHODS = ["linear", "cubic", "lanczos3", "lanczos5", "cubic-pytorch", "area"]
ALL = [(m, aa) for m in METHODS for aa in (True, False)]
# (input shape, output shape): NHWC batches, non-integer scales, up and down, mixed, 1-D and 3-D.
CASES = [
    ((2, 7, 9, 3), (2, 3, 4, 3)),
    ((2, 7, 9, 3), (2, 16, 20, 3)),
    ((2, 7, 9, 3), (2, 5, 13, 3)),
    ((11,), (4,)),
    ((4, 5, 6), (7, 3, 6)),
]
# The oracle: one jitted JAX function per case returning every method (JAX's compiles dominate
# this file's time).


def _jax_resize_all(x, dst, methods=ALL):
    return jax.jit(lambda a: [ji.resize(a, dst, m, antialias=aa) for m, aa in methods])(x)


def _close32(got, want):
    assert got.dtype == qb.float32
    assert_close(got, np.asarray(want), 2e-5, 2e-5)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_resize_values(case):
    src, dst = CASES[case]
    x = RNG.standard_normal(src)
    # antialias changes nothing when upsampling (case 1): once is enough there.
    methods = [c for c in ALL if c[1]] if case == 1 else ALL
    wants = _jax_resize_all(x, dst, methods)
    for (m, aa), want in zip(methods, wants):
        assert_close(I.resize(qb.array(x), dst, m, antialias=aa), want, 1e-11, 1e-12, f"{m} {src}->{dst} aa={aa}")
    if case == 2:
        x32 = x.astype(np.float32)
        for (m, aa), want in zip(ALL, _jax_resize_all(x32, dst)):
            _close32(I.resize(qb.array(x32), dst, m, antialias=aa), want)
    if case == 2:
        for (m, aa), want in list(zip(ALL, wants))[::4]:
            assert_close(qb.jit(lambda a: I.resize(a, dst, m, antialias=aa))(qb.array(x)), want, 1e-11, 1e-12, f"jit {m} {aa}")
    # An unchanged shape is the image itself (promoted).
    assert_close(I.resize(qb.array(x), src, "lanczos3"), x)


def test_resize_aliases_and_enum():
    x = RNG.standard_normal((5, 8))
    want = ji.resize(x, (3, 11), "linear")
    for m in ("linear", "bilinear", "trilinear", "triangle", I.ResizeMethod.LINEAR, ji.ResizeMethod.LINEAR):
        assert_close(I.resize(qb.array(x), (3, 11), m), want, 1e-12, 1e-12, str(m))
    for m in ("bicubic", "tricubic", I.ResizeMethod.CUBIC):
        assert_close(I.resize(qb.array(x), (3, 11), m), I.resize(qb.array(x), (3, 11), "cubic"), 0, 0, str(m))
    names = ["nearest", "linear", "bilinear", "trilinear", "triangle", "lanczos3", "lanczos5", "cubic", "bicubic", "tricubic",
             "cubic-pytorch", "bicubic-pytorch", "area"]
    for n in names:
        assert I.ResizeMethod.from_string(n).name == ji.ResizeMethod.from_string(n).name
        assert I.ResizeMethod.from_string(n).value == ji.ResizeMethod.from_string(n).value


def test_resize_nearest():
    cases = CASES + [((3, 5), (17, 2)), ((13, 4), (5, 31))]
    xs = [RNG.standard_normal(src) for src, _ in cases]
    wants = jax.jit(lambda *a: [ji.resize(v, dst, "nearest") for v, (_, dst) in zip(a, cases)])(*xs)
    for x, (_, dst), want in zip(xs, cases, wants):
        np.testing.assert_array_equal(I.resize(qb.array(x), dst, "nearest").numpy(), np.asarray(want))
    xi = RNG.integers(0, 100, (6, 7)).astype(np.int32)
    got = I.resize(qb.array(xi), (4, 15), "nearest")
    assert got.dtype == qb.int32
    np.testing.assert_array_equal(got.numpy(), np.asarray(ji.resize(xi, (4, 15), "nearest")))
    xb = RNG.integers(0, 2, (6, 7)).astype(bool)
    got = qb.jit(lambda a: I.resize(a, (9, 3), "nearest"))(qb.array(xb))
    assert got.dtype == qb.bool_
    np.testing.assert_array_equal(got.numpy(), np.asarray(ji.resize(xb, (9, 3), "nearest")))


def test_integer_images():
    # JAX (x64): int64 -> float64, other integers and bool -> float32; nearest keeps the dtype.
    s, t = np.array([0.5, 1.3], np.float32), np.array([0.1, 0.0], np.float32)
    oracle = jax.jit(lambda a: (ji.resize(a, (3, 8), "linear"), ji.resize(a, (3, 8), "cubic"), ji.scale_and_translate(a, (3, 8), (0, 1), s, t, "linear")))
    for npd, qd, want in ((np.int32, qb.int32, qb.float32), (np.int64, qb.int64, qb.float64), (np.uint8, qb.uint8, qb.float32),
                          (np.uint32, qb.uint32, qb.float32), (np.bool_, qb.bool_, qb.float32)):
        x = RNG.integers(0, 2 if npd is np.bool_ else 250, (5, 6)).astype(npd)
        qx = qb.array(x, dtype=qd)
        got = (I.resize(qx, (3, 8), "linear"), I.resize(qx, (3, 8), "cubic"), I.scale_and_translate(qx, (3, 8), (0, 1), qb.array(s), qb.array(t)))
        for g, j in zip(got, oracle(x)):
            assert g.dtype == want and str(j.dtype) == want.name, (npd, g.dtype, j.dtype)
            assert_close(g, j, 1e-5, 1e-4, str(npd))
        assert I.resize(qx, (5, 6), "linear").dtype == want
        assert I.resize(qx, (3, 8), "nearest").dtype == qd


@pytest.mark.parametrize("method", ["linear", "lanczos3", "nearest"])
def test_resize_grad_and_vmap(method):
    x = RNG.standard_normal((3, 6, 7, 2))
    c = RNG.standard_normal((3, 4, 11, 2))
    gq = qb.grad(lambda a: (I.resize(a, (3, 4, 11, 2), method) * c).sum())(qb.array(x))
    gj, vj = jax.jit(lambda a: (jax.grad(lambda b: (ji.resize(b, (3, 4, 11, 2), method) * c).sum())(a),
                                jax.vmap(lambda b: ji.resize(b, (9, 4, 2), method))(a)))(x)
    assert_close(gq, gj, 1e-11, 1e-12, "grad")
    got = qb.vmap(lambda a: I.resize(a, (9, 4, 2), method))(qb.array(x))
    assert_close(got, vj, 1e-11, 1e-12, "vmap")


SAT = [(np.array([0.7, 1.6]), np.array([0.3, -1.2])), (np.array([1.0 / 3.0, 1.0]), np.array([0.0, 2.0])), (np.array([2.5, 0.45]), np.array([-3.0, 0.8]))]


def test_scale_and_translate():
    x = RNG.standard_normal((2, 6, 9, 3))
    oracle = jax.jit(lambda a, s, t: [ji.scale_and_translate(a, (2, 7, 8, 3), (1, 2), s, t, m, antialias=aa) for m, aa in ALL])
    for k, (s, t) in enumerate(SAT):
        for (m, aa), want in zip(ALL, oracle(x, s, t)):
            got = I.scale_and_translate(qb.array(x), (2, 7, 8, 3), (1, -2), qb.array(s), qb.array(t), m, antialias=aa)
            assert_close(got, want, 1e-11, 1e-12, f"eager {m} {aa} {s} {t}")
            if k == 0 and aa:
                f = qb.jit(lambda a, s_, t_: I.scale_and_translate(a, (2, 7, 8, 3), (1, -2), s_, t_, m))
                assert_close(f(qb.array(x), qb.array(s), qb.array(t)), want, 1e-11, 1e-12, f"jit (traced scale) {m}")
    # f32 throughout; f32 scale with an f64 translation computes the weights in f64, as JAX.
    x32, s32, t32 = x.astype(np.float32), SAT[0][0].astype(np.float32), SAT[0][1].astype(np.float32)
    w1, w2 = jax.jit(lambda a, s, t, t64: (ji.scale_and_translate(a, (2, 7, 8, 3), (1, 2), s, t, "lanczos3"),
                                          ji.scale_and_translate(a, (2, 7, 8, 3), (1, 2), s, t64, "cubic")))(x32, s32, t32, SAT[0][1])
    _close32(I.scale_and_translate(qb.array(x32), (2, 7, 8, 3), (1, 2), qb.array(s32), qb.array(t32), "lanczos3"), w1)
    _close32(I.scale_and_translate(qb.array(x32), (2, 7, 8, 3), (1, 2), qb.array(s32), qb.array(SAT[0][1]), "cubic"), w2)


def test_scale_and_translate_grads():
    x = RNG.standard_normal((5, 6))
    c = RNG.standard_normal((4, 9))
    cases = [(m, aa) for m, aa in ALL if aa or m in ("linear", "cubic-pytorch")]
    cases = [c_ for c_ in cases if c_[0] != "lanczos5"]

    def jloss(a, s, t, m, aa):
        return (ji.scale_and_translate(a, (4, 9), (0, 1), s, t, m, antialias=aa) * c).sum()

    oracle = jax.jit(lambda a, s, t: [jax.grad(jloss, argnums=(0, 1, 2))(a, s, t, m, aa) for m, aa in cases])
    for s, t in SAT[:2]:
        for (m, aa), want in zip(cases, oracle(x, s, t)):
            fq = qb.grad(lambda a, s_, t_: (I.scale_and_translate(a, (4, 9), (0, 1), s_, t_, m, antialias=aa) * c).sum(), argnums=(0, 1, 2))
            assert_close(fq(qb.array(x), qb.array(s), qb.array(t)), want, 1e-9, 1e-10, f"{m} aa={aa} s={s}")


def test_scale_and_translate_vmap_and_finite_differences():
    x = RNG.standard_normal((4, 6, 7))
    s = RNG.uniform(0.5, 1.7, (4, 2))
    t = np.array([0.2, -0.4])
    got = qb.vmap(lambda a, sc: I.scale_and_translate(a, (5, 9), (0, 1), sc, qb.array(t), "cubic"))(qb.array(x), qb.array(s))
    want = jax.jit(jax.vmap(lambda a, sc: ji.scale_and_translate(a, (5, 9), (0, 1), sc, t, "cubic")))(x, s)
    assert_close(got, want, 1e-11, 1e-12)
    qb.test_util.check_grads(lambda sc, tr: I.scale_and_translate(qb.array(x[0]), (5, 9), (0, 1), sc, tr, "lanczos3").sum(),
                             (qb.array([0.8, 1.3]), qb.array([0.1, -0.3])), order=1)


def test_non_spatial_extent_and_empty_dims():
    # As JAX: shape's entries outside spatial_dims are not used; no spatial dims -> the image.
    x = RNG.standard_normal((4, 5))
    got = I.scale_and_translate(qb.array(x), (3, 9), (1,), qb.array([2.0]), qb.array([0.3]))
    want = jax.jit(lambda a: ji.scale_and_translate(a, (3, 9), (1,), np.array([2.0]), np.array([0.3]), "linear"))(x)
    assert got.shape == (4, 9)
    assert_close(got, want, 1e-12, 1e-12)
    xi = np.arange(20, dtype=np.int32).reshape(4, 5)
    got = I.scale_and_translate(qb.array(xi), (4, 5), (), [], [])
    assert got.dtype == qb.float32 and np.array_equal(got.numpy(), xi.astype(np.float32))


def test_errors():
    x = qb.ones((3, 4))
    cases = [
        (lambda: I.resize(x, (3,), "linear"), ShapeError),
        (lambda: I.resize(x, (3, 4, 5), "linear"), ShapeError),
        (lambda: I.resize(x, (0, 4), "linear"), ShapeError),
        (lambda: I.resize(x, (3, -2), "nearest"), ShapeError),
        (lambda: I.resize(x, (3, 2.5), "linear"), ArgumentTypeError),
        (lambda: I.resize(x, (2, 2), "bogus"), InvalidArgumentError),
        (lambda: I.resize(x, (2, 2), 3), ArgumentTypeError),
        (lambda: I.resize(x, (2, 2), None), ArgumentTypeError),
        (lambda: I.resize(None, (2, 2), "linear"), ArgumentTypeError),
        (lambda: I.resize("abc", (2, 2), "linear"), ArgumentTypeError),
        (lambda: I.resize([[1.0, 2.0], [3.0]], (2, 2), "linear"), ShapeError),
        (lambda: I.resize(x, (2, 2), "linear", antialias="yes"), ArgumentTypeError),
        (lambda: I.resize(x, (2, 2), "linear", precision="bogus"), InvalidArgumentError),
        (lambda: I.resize(x, (2**62, 2**62), "linear"), QuablaError),
        (lambda: I.scale_and_translate(x, (3, 4), (0, 1), [1.0, 1.0], [0.0, 0.0], "nearest"), UnsupportedOperationError),
        (lambda: I.scale_and_translate(x, (3, 4), (0, 1), [1.0], [0.0, 0.0]), ShapeError),
        (lambda: I.scale_and_translate(x, (3, 4), (0, 1), [1.0, 1.0], 0.0), ShapeError),
        (lambda: I.scale_and_translate(x, (3, 4), (0, 2), [1.0, 1.0], [0.0, 0.0]), ShapeError),
        (lambda: I.scale_and_translate(x, (3, 4), (0, 0), [1.0, 1.0], [0.0, 0.0]), InvalidArgumentError),
        (lambda: I.scale_and_translate(x, (3, 4), "ab", [1.0, 1.0], [0.0, 0.0]), ArgumentTypeError),
        (lambda: I.scale_and_translate(x, (3,), (0,), [1.0], [0.0]), ShapeError),
        (lambda: I.scale_and_translate(x, (3, 4), (0,), None, [0.0]), ArgumentTypeError),
        (lambda: I.ResizeMethod.from_string("bogus"), InvalidArgumentError),
        (lambda: I.ResizeMethod.from_string(None), ArgumentTypeError),
    ]
    for f, err in cases:
        with pytest.raises(err) as e:
            f()
        assert "image" in str(e.value) or "ResizeMethod" in str(e.value) or "shape" in str(e.value), str(e.value)


def test_doctests():
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = [t for t in finder.find(I, globs={"qb": qb}) if t.examples]
    assert len(tests) >= 4
    for t in tests:
        runner.run(t)
    assert runner.failures == 0
