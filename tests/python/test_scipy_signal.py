"""qb.scipy.signal, integrate, ndimage and interpolate against jax.scipy (x64): values eagerly
and under jit, gradients against jax.grad, vmap, float32 kept, typed errors for bad input."""

import doctest

import numpy as np
import pytest

import quabla as qb
import quabla.scipy.integrate as qint
import quabla.scipy.interpolate as qip
import quabla.scipy.ndimage as qnd
import quabla.scipy.signal as qsig
from breadth_util import assert_close

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.scipy.integrate as jint  # noqa: E402
import jax.scipy.interpolate as jip  # noqa: E402
import jax.scipy.ndimage as jnd  # noqa: E402
import jax.scipy.signal as jsig  # noqa: E402

RNG = np.random.default_rng(0)
MODES = ("full", "same", "valid")
QE = qb.errors


def _r(*shape):
    return RNG.normal(size=shape)


# ---------------------------------------------------------------------------------------------
# signal: convolutions

SHAPES = [((7,), (3,)), ((7,), (4,)), ((3,), (8,)), ((6, 5), (3, 2)), ((6, 5), (2, 4)), ((2, 3), (4, 5)), ((5, 6, 4), (3, 2, 2)), ((), ())]


@pytest.mark.parametrize("s1,s2", SHAPES, ids=[f"{a}x{b}" for a, b in SHAPES])
def test_convolve_correlate_values(s1, s2):
    a, b = _r(*s1), _r(*s2)
    qa, qb_ = qb.array(a), qb.array(b)
    for mode in MODES:
        for f in ("convolve", "correlate", "fftconvolve"):
            assert_close(getattr(qsig, f)(qa, qb_, mode), getattr(jsig, f)(a, b, mode), 1e-12, 1e-12, f"{f} {mode}")
        for method in ("direct", "fft"):
            assert_close(qsig.correlate(qa, qb_, mode, method=method), jsig.correlate(a, b, mode, method=method), 1e-12, 1e-12, f"correlate {method}")
        if len(s1) == 2:
            for f in ("convolve2d", "correlate2d"):
                assert_close(getattr(qsig, f)(qa, qb_, mode), getattr(jsig, f)(a, b, mode), 1e-12, 1e-12, f"{f} {mode}")


def test_convolve_jit_and_dtypes():
    a, b = _r(9, 8), _r(4, 3)
    for f in ("convolve", "correlate", "convolve2d", "correlate2d", "fftconvolve"):
        got = qb.jit(lambda x, y: tuple(getattr(qsig, f)(x, y, m) for m in MODES))(qb.array(a), qb.array(b))
        assert_close(got, tuple(getattr(jsig, f)(a, b, m) for m in MODES), 1e-12, 1e-12, f"jit {f}")
        r = getattr(qsig, f)(qb.array(a.astype(np.float32)), qb.array(b.astype(np.float32)))
        assert r.dtype == qb.float32
        assert_close(r, getattr(jsig, f)(a.astype(np.float32), b.astype(np.float32)), 1e-5, 1e-5)
    ai = np.arange(6, dtype=np.int32)
    r = qsig.convolve(qb.array(ai), qb.array(ai[:3]))
    assert r.dtype == qb.float32
    assert_close(r, jsig.convolve(ai, ai[:3]))
    r = qsig.convolve(qb.array(a.astype(np.float32)), qb.array(b))
    assert r.dtype == qb.float64


def test_fftconvolve_any_shapes_and_axes():
    # 'full'/'same' need no ordering of the shapes (unlike the direct method)
    for s1, s2 in (((3, 1), (1, 4)), ((5, 2), (3, 4)), ((2, 7, 3), (4, 2, 3))):
        a, b = _r(*s1), _r(*s2)
        for mode in ("full", "same"):
            assert_close(qsig.fftconvolve(qb.array(a), qb.array(b), mode), jsig.fftconvolve(a, b, mode), 1e-12, 1e-12)
            assert_close(qsig.convolve(qb.array(a), qb.array(b), mode, method="fft"), jsig.convolve(a, b, mode, method="fft"), 1e-12, 1e-12)
    a, b = _r(3, 7, 6, 4), _r(3, 2, 3, 4)
    for axes in (1, (1, 2), [-2], (0, 1, 2)):
        if any(a.shape[i] != b.shape[i] for i in set(range(4)) - {ax % 4 for ax in np.atleast_1d(axes)}):
            continue
        for mode in MODES:
            assert_close(qsig.fftconvolve(qb.array(a), qb.array(b), mode, axes=axes), jsig.fftconvolve(a, b, mode, axes=axes), 1e-12, 1e-12, f"axes {axes} {mode}")
    a2 = _r(*b.shape)
    assert_close(qsig.fftconvolve(qb.array(a2), qb.array(b), axes=()), jsig.fftconvolve(a2, b, axes=()))


def test_convolve_chunked_kernel_offsets(monkeypatch):
    # the kernel offsets split over several convolution ops give the same result
    monkeypatch.setattr(qsig, "_CHUNK_ELEMENTS", 40)
    a, b = _r(9, 8), _r(4, 3)
    for mode in MODES:
        assert_close(qsig.convolve(qb.array(a), qb.array(b), mode), jsig.convolve(a, b, mode), 1e-12, 1e-12)
    a, b = _r(3, 6, 5), _r(3, 3, 2)
    assert_close(qsig.fftconvolve(qb.array(a), qb.array(b), "same", axes=(1, 2)), jsig.fftconvolve(a, b, "same", axes=(1, 2)), 1e-12, 1e-12)


def test_convolve_gradients_and_vmap():
    a, b = _r(6, 5), _r(3, 2)
    for f in ("convolve", "correlate2d", "fftconvolve"):
        for mode in ("same", "valid"):
            g = qb.grad(lambda x, y: (getattr(qsig, f)(x, y, mode) ** 2).sum(), argnums=(0, 1))(qb.array(a), qb.array(b))
            gj = jax.grad(lambda x, y: (getattr(jsig, f)(x, y, mode) ** 2).sum(), argnums=(0, 1))(a, b)
            assert_close(g, gj, 1e-11, 1e-11, f"grad {f} {mode}")
    a3, b3 = _r(4, 5, 3), _r(2, 2, 3)
    g = qb.grad(lambda x, y: (qsig.correlate(x, y, "full") ** 3).sum(), argnums=(0, 1))(qb.array(a3), qb.array(b3))
    gj = jax.grad(lambda x, y: (jsig.correlate(x, y, "full") ** 3).sum(), argnums=(0, 1))(a3, b3)
    assert_close(g, gj, 1e-11, 1e-11)
    A = _r(3, 6, 5)
    got = qb.vmap(lambda x: qsig.convolve(x, qb.array(b), "same"))(qb.array(A))
    assert_close(got, jax.vmap(lambda x: jsig.convolve(x, b, "same"))(A), 1e-12, 1e-12)
    B = _r(3, 6, 2)
    got = qb.vmap(lambda x, y: qsig.fftconvolve(x, y, "valid", axes=1))(qb.array(A), qb.array(B))
    assert_close(got, jax.vmap(lambda x, y: jsig.fftconvolve(x, y, "valid", axes=1))(A, B), 1e-12, 1e-12)
    t = qb.jvp(lambda x: qsig.convolve(x, qb.array(b)), (qb.array(a),), (qb.ones_like(qb.array(a)),))[1]
    assert_close(t, jax.jvp(lambda x: jsig.convolve(x, b), (a,), (np.ones_like(a),))[1], 1e-12, 1e-12)


def test_convolve_errors():
    x1, x2 = qb.ones(5), qb.ones((3, 3))
    with pytest.raises(QE.InvalidArgumentError, match="convolve: mode"):
        qsig.convolve(x1, x1, mode="bad")
    with pytest.raises(QE.ArgumentTypeError, match="convolve: mode"):
        qsig.convolve(x1, x1, mode=3)
    with pytest.raises(QE.InvalidArgumentError, match="convolve: method"):
        qsig.convolve(x1, x1, method="slow")
    with pytest.raises(QE.ShapeError, match=r"correlate: .*\(5,\) and \(3, 3\)"):
        qsig.correlate(x1, x2)
    with pytest.raises(QE.ShapeError, match="one input must be smaller"):
        qsig.convolve(qb.ones((3, 1)), qb.ones((1, 4)))
    with pytest.raises(QE.ShapeError, match="fftconvolve"):
        qsig.fftconvolve(qb.ones((3, 1)), qb.ones((1, 4)), mode="valid")
    with pytest.raises(QE.ShapeError, match="mapped axes"):
        qsig.fftconvolve(qb.ones((3, 5)), qb.ones((2, 2)), axes=1)
    with pytest.raises(QE.ShapeError, match="convolve2d: only 2-dimensional"):
        qsig.convolve2d(x1, x1)
    with pytest.raises(QE.UnsupportedOperationError, match="correlate2d: only boundary='fill'"):
        qsig.correlate2d(x2, x2, boundary="wrap")
    with pytest.raises(QE.UnsupportedOperationError, match="fillvalue"):
        qsig.convolve2d(x2, x2, fillvalue=1.0)
    with pytest.raises(QE.ArgumentTypeError, match="convolve: in1"):
        qsig.convolve(None, x1)
    with pytest.raises(QE.ShapeError, match="correlate: in2"):
        qsig.correlate(x1, [[1.0, 2.0], [3.0]])
    with pytest.raises(QE.DTypeError, match="fftconvolve: in2"):
        qsig.fftconvolve(x1, np.array([1j]))
    with pytest.raises(QE.ShapeError, match="fftconvolve: axis 4"):
        qsig.fftconvolve(x2, x2, axes=4)


# ---------------------------------------------------------------------------------------------
# signal: detrend and the unsupported spectral functions


def test_detrend():
    x = _r(4, 12) + np.arange(12.0)
    for kw in ({}, {"bp": [3, 7]}, {"bp": np.array([5, 12])}, {"axis": 0, "bp": [1, 2]}, {"type": "constant", "axis": 0}):
        assert_close(qsig.detrend(qb.array(x), **kw), jsig.detrend(x, **kw), 1e-11, 1e-11, str(kw))
    assert_close(qb.jit(lambda v: qsig.detrend(v, bp=[4]))(qb.array(x)), jsig.detrend(x, bp=[4]), 1e-11, 1e-11)
    g = qb.grad(lambda v: (qsig.detrend(v, bp=[4]) ** 3).sum())(qb.array(x))
    assert_close(g, jax.grad(lambda v: (jsig.detrend(v, bp=[4]) ** 3).sum())(x), 1e-10, 1e-10)
    assert_close(qb.vmap(lambda v: qsig.detrend(v, bp=[5]))(qb.array(x)), jsig.detrend(x, bp=[5]), 1e-11, 1e-11)
    assert qsig.detrend(qb.array(x.astype(np.float32))).dtype == qb.float32
    assert qsig.detrend(qb.array(np.arange(5, dtype=np.int32))).dtype == qb.float32
    assert_close(qsig.detrend(qb.array([3.0])), [0.0], 0, 1e-12)
    with pytest.raises(QE.InvalidArgumentError, match="detrend: breakpoints"):
        qsig.detrend(qb.array(x), bp=[20])
    with pytest.raises(QE.InvalidArgumentError, match="detrend: type"):
        qsig.detrend(qb.array(x), type="quadratic")
    with pytest.raises(QE.ShapeError, match="detrend: axis 3"):
        qsig.detrend(qb.array(x), axis=3)
    with pytest.raises(QE.ArgumentTypeError, match="detrend: bp"):
        qsig.detrend(qb.array(x), bp="abc")
    with pytest.raises(QE.UnsupportedOperationError, match="overwrite_data"):
        qsig.detrend(qb.array(x), overwrite_data=True)


def test_spectral_functions_unsupported():
    x = qb.ones(16)
    for f, args in ((qsig.stft, (x,)), (qsig.istft, (qb.ones((3, 4)),)), (qsig.welch, (x,)), (qsig.csd, (x, x))):
        with pytest.raises(QE.UnsupportedOperationError, match="complex"):
            f(*args)


# ---------------------------------------------------------------------------------------------
# integrate


def test_trapezoid():
    y, x = _r(3, 5), np.sort(_r(5))
    x2 = np.sort(_r(3, 5), axis=1)
    cases = [((y,), {}), ((y,), {"dx": 0.3}), ((y, x), {}), ((y, x2), {}), ((y,), {"axis": 0}), ((y, x[:3]), {"axis": 0}), ((y,), {"dx": np.array([[1.0], [2.0], [3.0]])})]
    for args, kw in cases:
        qkw = {k: qb.array(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
        assert_close(qint.trapezoid(*[qb.array(a) for a in args], **qkw), jint.trapezoid(*args, **kw), 1e-12, 1e-12, str(kw))
    assert_close(qb.jit(qint.trapezoid)(qb.array(y), qb.array(x)), jint.trapezoid(y, x), 1e-12, 1e-12)
    g = qb.grad(lambda a, b: qint.trapezoid(a, b).sum(), argnums=(0, 1))(qb.array(y), qb.array(x))
    assert_close(g, jax.grad(lambda a, b: jint.trapezoid(a, b).sum(), argnums=(0, 1))(y, x), 1e-12, 1e-12)
    assert qint.trapezoid(qb.ones(4, dtype=qb.float32), dx=0.5).dtype == qb.float32
    with pytest.raises(QE.ShapeError, match="trapezoid: a 1-D x"):
        qint.trapezoid(qb.array(y), qb.array([1.0, 2.0]))
    with pytest.raises(QE.ShapeError, match="trapezoid: axis 5"):
        qint.trapezoid(qb.array(y), axis=5)
    with pytest.raises(QE.ArgumentTypeError, match="trapezoid: y"):
        qint.trapezoid("abc")
    with pytest.raises(QE.ArgumentTypeError, match="trapezoid: dx"):
        qint.trapezoid(qb.array(y), dx=None)


# ---------------------------------------------------------------------------------------------
# ndimage


def test_map_coordinates_values_and_grads():
    x2 = _r(4, 5)
    c0, c1 = RNG.uniform(-7, 12, size=6), RNG.uniform(-7, 12, size=6)
    ties = np.array([-0.5, 0.5, 1.5, 2.5, 3.0, 4.0])
    cases = [(x2, [ties[:, None], c1[None, :]]), (np.arange(5.0), [np.concatenate([ties, c0])]), (np.array([3.0]), [c0]), (_r(3, 4, 2), [c0 / 2, c1 / 2, ties / 3])]
    for order in (0, 1):
        for mode in ("constant", "nearest", "wrap", "mirror", "reflect"):
            for x, cc in cases[:3] if order == 0 else cases:
                want = jnd.map_coordinates(x, cc, order, mode=mode, cval=1.5)
                assert_close(qnd.map_coordinates(qb.array(x), [qb.array(c) for c in cc], order, mode=mode, cval=1.5), want, 1e-12, 1e-12, f"{order} {mode} {x.shape}")
    x, cc = cases[-1]
    for mode in ("constant", "reflect"):
        f = qb.jit(lambda v, *c: qnd.map_coordinates(v, list(c), 1, mode=mode))
        assert_close(f(qb.array(x), *[qb.array(c) for c in cc]), jnd.map_coordinates(x, cc, 1, mode=mode), 1e-12, 1e-12)
        g = qb.grad(lambda v, *c: (qnd.map_coordinates(v, list(c), 1, mode=mode) ** 2).sum(), argnums=(0, 1, 2))(qb.array(x), *[qb.array(c) for c in cc])
        gj = jax.grad(lambda v, *c: (jnd.map_coordinates(v, list(c), 1, mode=mode) ** 2).sum(), argnums=(0, 1, 2))(x, *cc)
        assert_close(g, gj, 1e-11, 1e-11, f"grad {mode}")
    g = qb.grad(lambda c: qnd.map_coordinates(qb.array(x2), [c, qb.array(c1)], 0).sum())(qb.array(c0))
    assert_close(g, np.zeros(6))
    cs = RNG.uniform(0, 3, size=(3, 4))
    got = qb.vmap(lambda c: qnd.map_coordinates(qb.array(x2), [c, c], 1))(qb.array(cs))
    assert_close(got, jax.vmap(lambda c: jnd.map_coordinates(x2, [c, c], 1))(cs), 1e-12, 1e-12)


def test_map_coordinates_dtypes_and_errors():
    xi = np.arange(20, dtype=np.int32).reshape(4, 5)
    for cc in ([np.array([0.25, 1.5, 2.5]), np.array([1.5, 2.0, 4.5])], [np.array([0, 1, 3]), np.array([4, 2, 5])]):
        for order in (0, 1):
            r = qnd.map_coordinates(qb.array(xi), [qb.array(c) for c in cc], order, mode="reflect")
            assert r.dtype == qb.int32
            assert_close(r, jnd.map_coordinates(xi, cc, order, mode="reflect"))
    x = _r(4, 5)
    cc = [np.array([-1.0, 0.5, 3.5]), np.array([0.2, 4.5, 1.0])]
    assert_close(qnd.map_coordinates(qb.array(x), [qb.array(c) for c in cc], 1, cval=np.nan), jnd.map_coordinates(x, cc, 1, cval=np.nan), 1e-12, 1e-12)
    r = qnd.map_coordinates(qb.array(x.astype(np.float32)), [qb.array(c.astype(np.float32)) for c in cc], 1)
    assert r.dtype == qb.float32
    with pytest.raises(QE.ShapeError, match="map_coordinates: coordinates must be a sequence of length"):
        qnd.map_coordinates(qb.array(x), [qb.array(cc[0])], 1)
    with pytest.raises(QE.UnsupportedOperationError, match="order"):
        qnd.map_coordinates(qb.array(x), [qb.array(c) for c in cc], 3)
    with pytest.raises(QE.UnsupportedOperationError, match="mode 'grid-wrap'"):
        qnd.map_coordinates(qb.array(x), [qb.array(c) for c in cc], 1, mode="grid-wrap")
    with pytest.raises(QE.ArgumentTypeError, match="map_coordinates: coordinates"):
        qnd.map_coordinates(qb.array(x), None, 1)
    with pytest.raises(QE.ArgumentTypeError, match="map_coordinates: order"):
        qnd.map_coordinates(qb.array(x), [qb.array(c) for c in cc], 1.0)
    with pytest.raises(QE.ShapeError, match="do not broadcast"):
        qnd.map_coordinates(qb.array(x), [qb.ones(2), qb.ones(3)], 1)


# ---------------------------------------------------------------------------------------------
# interpolate

G0, G1 = np.array([0.0, 0.5, 1.3, 2.0]), np.array([-1.0, 0.0, 2.0])
XI = np.concatenate([np.stack([RNG.uniform(-0.5, 2.5, 7), RNG.uniform(-1.5, 2.5, 7)], -1), [[0.0, -1.0], [2.0, 2.0], [0.5, 0.0], [0.9, 1.0]]])


def test_regular_grid_interpolator_values():
    for vals in (_r(4, 3), _r(4, 3, 2)):
        for method in ("linear", "nearest"):
            for fill in (np.nan, None, 3.0):
                j = jip.RegularGridInterpolator((G0, G1), vals, method=method, fill_value=fill)
                q = qip.RegularGridInterpolator((qb.array(G0), qb.array(G1)), qb.array(vals), method=method, fill_value=fill)
                assert_close(q(qb.array(XI)), j(XI), 1e-12, 1e-12, f"{method} {fill}")
                assert_close(q(qb.array(XI.reshape(1, -1, 2))), j(XI.reshape(1, -1, 2)), 1e-12, 1e-12)
                assert_close(q((qb.array(XI[:, 0]), qb.array(XI[:, 1]))), j((XI[:, 0], XI[:, 1])), 1e-12, 1e-12)
                other = "nearest" if method == "linear" else "linear"
                assert_close(q(qb.array(XI.reshape(-1)), method=other), j(XI.reshape(-1), method=other), 1e-12, 1e-12)
    vals = _r(4, 3, 2)
    q = qip.RegularGridInterpolator((qb.array(G0),), qb.array(vals))
    assert_close(q(qb.array(XI[:, :1])), jip.RegularGridInterpolator((G0,), vals)(XI[:, :1]), 1e-12, 1e-12)


def test_regular_grid_interpolator_pytree_grads_f32():
    vals = _r(4, 3)
    q = qip.RegularGridInterpolator((qb.array(G0), qb.array(G1)), qb.array(vals), fill_value=None)
    j = jip.RegularGridInterpolator((G0, G1), vals, fill_value=None)
    assert len(qb.tree_util.tree_leaves(q)) == 3
    assert_close(qb.jit(lambda f, x: f(x))(q, qb.array(XI)), j(XI), 1e-12, 1e-12)
    for method in ("linear", "nearest"):
        g = qb.grad(lambda f, x: (f(x, method=method) ** 2).sum(), argnums=(0, 1))(q, qb.array(XI))
        gj = jax.grad(lambda f, x: (f(x, method=method) ** 2).sum(), argnums=(0, 1))(j, XI)
        assert_close((g[0].values, g[0].grid[0], g[1]), (gj[0].values, gj[0].grid[0], gj[1]), 1e-11, 1e-11, method)
    q32 = qip.RegularGridInterpolator((qb.array(G0.astype(np.float32)), qb.array(G1.astype(np.float32))), qb.array(vals.astype(np.float32)))
    r = q32(qb.array(XI.astype(np.float32)))
    assert r.dtype == qb.float32
    assert qb.vmap(lambda x: q32(x))(qb.array(XI.reshape(-1, 1, 2).astype(np.float32))).shape == (XI.shape[0], 1)


def test_regular_grid_interpolator_errors():
    g, v = (qb.array(G0), qb.array(G1)), qb.array(_r(4, 3))
    with pytest.raises(QE.InvalidArgumentError, match="method 'cubic'"):
        qip.RegularGridInterpolator(g, v, method="cubic")
    with pytest.raises(QE.UnsupportedOperationError, match="bounds_error"):
        qip.RegularGridInterpolator(g, v, bounds_error=True)
    with pytest.raises(QE.ShapeError, match="3 point arrays"):
        qip.RegularGridInterpolator(g + (qb.array(G1),), v)
    with pytest.raises(QE.ShapeError, match="3 points in dimension 0"):
        qip.RegularGridInterpolator((qb.array(G1), qb.array(G1)), v)
    with pytest.raises(QE.ArgumentTypeError, match="points"):
        qip.RegularGridInterpolator(None, v)
    f = qip.RegularGridInterpolator(g, v)
    with pytest.raises(QE.ShapeError, match="dimension 3"):
        f(qb.ones((2, 3)))
    with pytest.raises(QE.InvalidArgumentError, match="method"):
        f(qb.ones((2, 2)), method="spline")
    with pytest.raises(QE.ArgumentTypeError, match="xi"):
        f("abc")


def test_docstring_examples():
    for mod in (qsig, qint, qnd, qip):
        for t in doctest.DocTestFinder().find(mod):
            if not t.examples:
                continue
            t.globs = {"qb": qb, "round": round, "np": np}
            out = []
            r = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
            r.run(t, out=out.append)
            assert r.failures == 0, "".join(out)
