"""Convolutions, pooling and cumulative reductions against JAX 0.10.2 (x64): values, gradients
with respect to input and kernel (float64 within 1e-12 relative), forward mode, second order,
vmap over the input, the kernel and both, jit against eager; 1/2/3-D, strides, explicit,
negative and SAME paddings, lhs/rhs dilation, feature and batch groups, NCHW and NHWC
layouts. Pooling and cumulative ops against jax.lax.reduce_window / jax.numpy / jax.lax."""

import numpy as np
import pytest

import quabla as qb

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402

TOL = 1e-12


def close(got, want, tol=TOL, what=""):
    g = np.asarray(got.numpy() if isinstance(got, qb.Tensor) else got)
    w = np.asarray(want)
    assert g.shape == w.shape, (what, g.shape, w.shape)
    fin = np.isfinite(w)
    # Windows of padding only hold the reduction's identity (+-inf): those must match exactly.
    np.testing.assert_array_equal(g[~fin], w[~fin], err_msg=what)
    g, w = g[fin], w[fin]
    scale = 1.0 + (float(np.max(np.abs(w))) if w.size else 0.0)
    err = float(np.max(np.abs(g - w))) if w.size else 0.0
    assert err <= tol * scale, f"{what}: max error {err:.3e} (scale {scale:.3e})"


def rand(rng, shape):
    return rng.normal(size=shape)


# (lhs shape, rhs shape, keyword arguments of conv_general_dilated)
CASES = {
    "1d_valid": ((2, 3, 11), (4, 3, 3), dict(window_strides=(1,), padding="VALID")),
    "1d_same_stride_dil": ((2, 3, 13), (4, 3, 3), dict(window_strides=(2,), padding="SAME", rhs_dilation=(2,))),
    "1d_lhs_dilation": ((1, 2, 6), (3, 2, 4), dict(window_strides=(1,), padding=((2, 1),), lhs_dilation=(3,))),
    "2d_explicit": ((2, 3, 9, 8), (5, 3, 3, 2), dict(window_strides=(2, 1), padding=((1, 2), (0, 1)), lhs_dilation=(1, 2), rhs_dilation=(2, 1))),
    "2d_negative_pad": ((2, 2, 10, 9), (3, 2, 3, 3), dict(window_strides=(1, 2), padding=((-1, 0), (2, -2)))),
    "2d_nhwc_same": ((2, 9, 7, 3), (3, 3, 3, 4), dict(window_strides=(2, 2), padding="SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    "2d_mixed_layouts": ((3, 2, 6, 5), (2, 3, 2, 4), dict(window_strides=(1, 1), padding="SAME_LOWER", dimension_numbers=("NCHW", "HWIO", "NHWC"))),
    "2d_feature_groups": ((2, 4, 7, 7), (6, 2, 3, 3), dict(window_strides=(1, 2), padding=((1, 1), (1, 0)), feature_group_count=2)),
    "2d_depthwise": ((2, 3, 8, 8), (6, 1, 3, 3), dict(window_strides=(2, 2), padding="SAME", feature_group_count=3, rhs_dilation=(1, 2))),
    "2d_batch_groups": ((4, 3, 7, 6), (6, 3, 2, 3), dict(window_strides=(1, 1), padding=((0, 1), (1, 1)), batch_group_count=2)),
    "3d_ncdhw": ((1, 2, 6, 5, 7), (3, 2, 2, 3, 2), dict(window_strides=(1, 2, 1), padding="VALID")),
    "3d_ndhwc_dilated": ((2, 5, 6, 5, 2), (2, 3, 2, 2, 3), dict(window_strides=(2, 1, 1), padding="SAME", rhs_dilation=(1, 2, 1), dimension_numbers=("NDHWC", "DHWIO", "NDHWC"))),
}


def setup(name, seed=0):
    ls, rs, kw = CASES[name]
    rng = np.random.default_rng(seed)
    return rand(rng, ls), rand(rng, rs), kw


@pytest.mark.parametrize("name", sorted(CASES))
def test_values(name):
    x, w, kw = setup(name)
    want = jax.lax.conv_general_dilated(x, w, **kw)
    close(qb.conv_general_dilated(x, w, **kw), want, what=name)
    close(qb.jit(lambda a, b: qb.conv_general_dilated(a, b, **kw))(x, w), want, what=name + " jit")


@pytest.mark.parametrize("name", sorted(CASES))
def test_grads(name):
    x, w, kw = setup(name)
    ct = np.random.default_rng(1).normal(size=np.shape(jax.lax.conv_general_dilated(x, w, **kw)))

    def jf(a, b):
        return jnp.sum(jax.lax.conv_general_dilated(a, b, **kw) * ct)

    def qf(a, b):
        return qb.sum(qb.conv_general_dilated(a, b, **kw) * ct)

    gx, gw = jax.grad(jf, argnums=(0, 1))(x, w)
    qx, qw = qb.grad(qf, argnums=(0, 1))(x, w)
    close(qx, gx, what=name + " d/dlhs")
    close(qw, gw, what=name + " d/drhs")
    jx, jw = qb.jit(qb.grad(qf, argnums=(0, 1)))(x, w)
    close(jx, gx, what=name + " jit d/dlhs")
    close(jw, gw, what=name + " jit d/drhs")


@pytest.mark.parametrize("name", ["1d_same_stride_dil", "2d_explicit", "2d_feature_groups", "2d_batch_groups", "3d_ncdhw"])
def test_jvp(name):
    x, w, kw = setup(name)
    rng = np.random.default_rng(2)
    tx, tw = rng.normal(size=x.shape), rng.normal(size=w.shape)
    want = jax.jvp(lambda a, b: jax.lax.conv_general_dilated(a, b, **kw), (x, w), (tx, tw))
    got = qb.jvp(lambda a, b: qb.conv_general_dilated(a, b, **kw), (x, w), (tx, tw))
    close(got[0], want[0], what=name + " primal")
    close(got[1], want[1], what=name + " tangent")


@pytest.mark.parametrize("name", ["1d_valid", "2d_explicit", "2d_nhwc_same", "2d_feature_groups"])
def test_second_order(name):
    x, w, kw = setup(name)

    def jf(a, b):
        return jnp.sum(jnp.tanh(jax.lax.conv_general_dilated(a, b, **kw)))

    def qf(a, b):
        return qb.sum(qb.tanh(qb.conv_general_dilated(a, b, **kw)))

    # d/dw of sum(d f / dx * v): mixed second derivative through both transposed convolutions.
    v = np.random.default_rng(3).normal(size=x.shape)
    want = jax.grad(lambda b: jnp.sum(jax.grad(jf)(x, b) * v))(w)
    got = qb.grad(lambda b: qb.sum(qb.grad(qf)(x, b) * v))(w)
    close(got, want, what=name + " mixed second order")


@pytest.mark.parametrize("name", ["1d_valid", "2d_explicit", "2d_nhwc_same", "2d_feature_groups", "2d_depthwise", "2d_batch_groups", "3d_ncdhw"])
@pytest.mark.parametrize("axes", [(0, None), (None, 0), (0, 0)])
def test_vmap(name, axes):
    x, w, kw = setup(name)
    rng = np.random.default_rng(4)
    xs = rng.normal(size=(3,) + x.shape) if axes[0] == 0 else x
    ws = rng.normal(size=(3,) + w.shape) if axes[1] == 0 else w
    want = jax.vmap(lambda a, b: jax.lax.conv_general_dilated(a, b, **kw), in_axes=axes)(xs, ws)
    got = qb.vmap(lambda a, b: qb.conv_general_dilated(a, b, **kw), in_axes=axes)(xs, ws)
    close(got, want, what=f"{name} vmap {axes}")
    # vmap of the gradient (batched transposed convolutions).
    jg = jax.vmap(jax.grad(lambda a, b: jnp.sum(jnp.sin(jax.lax.conv_general_dilated(a, b, **kw))), argnums=(0, 1)), in_axes=axes)(xs, ws)
    qg = qb.vmap(qb.grad(lambda a, b: qb.sum(qb.sin(qb.conv_general_dilated(a, b, **kw))), argnums=(0, 1)), in_axes=axes)(xs, ws)
    close(qg[0], jg[0], what=f"{name} vmap grad lhs {axes}")
    close(qg[1], jg[1], what=f"{name} vmap grad rhs {axes}")


def test_float32_and_int():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(2, 3, 8, 8)).astype(np.float32)
    w = rng.normal(size=(4, 3, 3, 3)).astype(np.float32)
    got = qb.conv(x, w, (1, 1), "SAME")
    assert got.dtype == qb.float32
    close(got, jax.lax.conv(x, w, (1, 1), "SAME"), tol=1e-5)
    xi = rng.integers(-5, 5, size=(1, 2, 6)).astype(np.int32)
    wi = rng.integers(-5, 5, size=(3, 2, 2)).astype(np.int32)
    np.testing.assert_array_equal(np.asarray(qb.conv(xi, wi, (1,), "VALID")), np.asarray(jax.lax.conv(xi, wi, (1,), "VALID")))


def test_conv_shortcut_and_interp_agree():
    x, w, _ = setup("2d_explicit")
    close(qb.conv(x, w[:, :, :, :], (1, 1), "VALID"), jax.lax.conv(x, w, (1, 1), "VALID"))


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("na,nv", [(7, 3), (3, 7), (6, 4), (1, 1), (5, 5)])
def test_convolve_correlate(mode, na, nv):
    rng = np.random.default_rng(6)
    a, v = rng.normal(size=na), rng.normal(size=nv)
    close(qb.convolve(a, v, mode=mode), jnp.convolve(a, v, mode=mode), what=f"convolve {mode}")
    close(qb.correlate(a, v, mode=mode), jnp.correlate(a, v, mode=mode), what=f"correlate {mode}")
    close(qb.convolve(a, v, mode=mode), np.convolve(a, v, mode=mode), what="numpy convolve")
    close(qb.correlate(a, v, mode=mode), np.correlate(a, v, mode=mode), what="numpy correlate")
    g = qb.grad(lambda p, q: qb.sum(qb.convolve(p, q, mode=mode) ** 2), argnums=(0, 1))(a, v)
    want = jax.grad(lambda p, q: jnp.sum(jnp.convolve(p, q, mode=mode) ** 2), argnums=(0, 1))(a, v)
    close(g[0], want[0], what="convolve grad a")
    close(g[1], want[1], what="convolve grad v")
    close(qb.convolve(np.arange(na), np.arange(nv), mode=mode), np.convolve(np.arange(na), np.arange(nv), mode=mode).astype(float), what="int convolve")


# ---------------------------------------------------------------------------------------------
# Windows

WINDOWS = {
    "pool2d": ((2, 6, 7, 3), (1, 2, 3, 1), (1, 2, 2, 1), "VALID", None, None),
    "same": ((2, 7, 5, 2), (1, 3, 3, 1), (1, 2, 1, 1), "SAME", None, None),
    "explicit": ((3, 8), (2, 3), (1, 2), ((1, 0), (2, 1)), None, None),
    "dilated": ((2, 9), (1, 3), (1, 1), ((0, 0), (1, 2)), (1, 2), (1, 2)),
    "1d": ((10,), (4,), (3,), ((1, 2),), None, None),
}


def finite(y):
    """``y`` with its non-finite entries (windows of padding only, constant) set to 0."""
    y = np.asarray(y)
    return np.where(np.isfinite(y), y, 0.0)


def central_differences(f, x, h=1e-6):
    """The gradient of scalar ``f`` at ``x`` by central differences (error ~h^2)."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def jax_window(x, fn, init, dims, strides, pad, base, wdil):
    return jax.lax.reduce_window(x, init, fn, dims, strides, pad, base_dilation=base, window_dilation=wdil)


@pytest.mark.parametrize("name", sorted(WINDOWS))
@pytest.mark.parametrize("kind", ["add", "max", "min"])
def test_reduce_window(name, kind):
    shape, dims, strides, pad, base, wdil = WINDOWS[name]
    x = np.random.default_rng(7).normal(size=shape)
    qfn, jfn, init = {"add": (qb.add, jax.lax.add, 0.0), "max": (qb.maximum, jax.lax.max, -np.inf), "min": (qb.minimum, jax.lax.min, np.inf)}[kind]
    want = jax_window(x, jfn, init, dims, strides, pad, base, wdil)

    def q(a):
        return qb.reduce_window(a, init, qfn, dims, strides, pad, base_dilation=base, window_dilation=wdil)

    close(q(x), want, what=f"{name} {kind}")
    close(qb.jit(q)(x), want, what=f"{name} {kind} jit")
    ct = np.random.default_rng(8).normal(size=np.shape(want))
    fd = kind != "add" and wdil is not None  # JAX has no VJP of a window-dilated max/min pool
    if fd:
        gw, gtol = central_differences(lambda a: float(np.sum(finite(jax_window(a, jfn, init, dims, strides, pad, base, wdil)) * ct)), x), 1e-7
    else:
        gw, gtol = jax.grad(lambda a: jnp.sum(jax_window(a, jfn, init, dims, strides, pad, base, wdil) * ct))(x), TOL
    close(qb.grad(lambda a: qb.sum(q(a) * ct))(x), gw, tol=gtol, what=f"{name} {kind} grad")
    close(qb.jit(qb.grad(lambda a: qb.sum(q(a) * ct)))(x), gw, tol=gtol, what=f"{name} {kind} jit grad")
    t = np.random.default_rng(9).normal(size=shape)
    jt = jax.jvp(lambda a: jax_window(a, jfn, init, dims, strides, pad, base, wdil), (x,), (t,))[1]
    close(qb.jvp(q, (x,), (t,))[1], jt, what=f"{name} {kind} jvp")
    xs = np.random.default_rng(10).normal(size=(3,) + shape)
    close(qb.vmap(q)(xs), jax.vmap(lambda a: jax_window(a, jfn, init, dims, strides, pad, base, wdil))(xs), what=f"{name} {kind} vmap")
    qg = qb.vmap(qb.grad(lambda a: qb.sum(qb.sin(q(a)))))(xs)
    if fd:
        want = np.stack([central_differences(lambda a: float(np.sum(np.sin(finite(jax_window(a, jfn, init, dims, strides, pad, base, wdil))))), xi) for xi in xs])
    else:
        want = jax.vmap(jax.grad(lambda a: jnp.sum(jnp.sin(jax_window(a, jfn, init, dims, strides, pad, base, wdil)))))(xs)
    close(qg, want, tol=gtol, what=f"{name} {kind} vmap grad")


def test_max_pool_second_order():
    x = np.random.default_rng(11).normal(size=(2, 6, 6, 2))

    def jpool(a):
        return jax.lax.reduce_window(a, -np.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    v = np.random.default_rng(12).normal(size=x.shape)
    # Hessian-vector product of sum(pool(x)^3): through select_and_scatter_add's own VJP.
    want = jax.jvp(jax.grad(lambda a: jnp.sum(jpool(a) ** 3)), (x,), (v,))[1]
    got = qb.jvp(qb.grad(lambda a: qb.sum(qb.max_pool(a, (2, 2), strides=(2, 2)) ** 3)), (x,), (v,))[1]
    close(got, want, what="max_pool hvp (jvp of grad)")
    want = jax.grad(lambda a: jnp.sum(jax.grad(lambda b: jnp.sum(jpool(b) ** 3))(a) * v))(x)
    got = qb.grad(lambda a: qb.sum(qb.grad(lambda b: qb.sum(qb.max_pool(b, (2, 2), strides=(2, 2)) ** 3))(a) * v))(x)
    close(got, want, what="max_pool grad of grad")


def test_pools_match_flax_definitions():
    x = np.random.default_rng(13).normal(size=(2, 7, 6, 3))
    want = jax.lax.reduce_window(x, -np.inf, jax.lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
    close(qb.max_pool(x, (3, 3), strides=(2, 2), padding="SAME"), want)
    s = jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
    close(qb.avg_pool(x, (3, 3), strides=(2, 2), padding="SAME"), s / 9.0)
    cnt = jax.lax.reduce_window(np.ones_like(x), 0.0, jax.lax.add, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
    close(qb.avg_pool(x, (3, 3), strides=(2, 2), padding="SAME", count_include_pad=False), s / cnt)
    # Unbatched inputs.
    close(qb.max_pool(x[0], (2, 2)), jax.lax.reduce_window(x[0], -np.inf, jax.lax.max, (2, 2, 1), (1, 1, 1), "VALID"))
    g = qb.grad(lambda a: qb.sum(qb.avg_pool(a, (2, 2), padding=((1, 0), (0, 1)), count_include_pad=False) ** 2))(x)
    jcnt = jax.lax.reduce_window(np.ones_like(x), 0.0, jax.lax.add, (1, 2, 2, 1), (1, 1, 1, 1), ((0, 0), (1, 0), (0, 1), (0, 0)))
    want = jax.grad(lambda a: jnp.sum((jax.lax.reduce_window(a, 0.0, jax.lax.add, (1, 2, 2, 1), (1, 1, 1, 1), ((0, 0), (1, 0), (0, 1), (0, 0))) / jcnt) ** 2))(x)
    close(g, want, what="avg_pool grad")


# ---------------------------------------------------------------------------------------------
# Cumulative reductions


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative(axis, reverse):
    x = np.random.default_rng(14).normal(size=(5, 7))
    for qf, jf in [(qb.cumsum, jax.lax.cumsum), (qb.cumprod, jax.lax.cumprod)]:
        q = lambda a: qf(a, axis, reverse=reverse)  # noqa: E731
        j = lambda a: jf(a, axis=axis % 2, reverse=reverse)  # noqa: E731
        close(q(x), j(x), what=f"{qf.__name__}")
        close(qb.grad(lambda a: qb.sum(qb.sin(q(a))))(x), jax.grad(lambda a: jnp.sum(jnp.sin(j(a))))(x), what=f"{qf.__name__} grad")
        close(qb.jit(q)(x), j(x), what=f"{qf.__name__} jit")
    for qf, jf in [(qb.cummax, jax.lax.cummax), (qb.cummin, jax.lax.cummin), (qb.cumlogsumexp, jax.lax.cumlogsumexp)]:
        q = lambda a: qf(a, axis, reverse)  # noqa: E731
        j = lambda a: jf(a, axis=axis % 2, reverse=reverse)  # noqa: E731
        close(q(x), j(x), what=f"{qf.__name__}")
        close(qb.grad(lambda a: qb.sum(qb.sin(q(a))))(x), jax.grad(lambda a: jnp.sum(jnp.sin(j(a))))(x), what=f"{qf.__name__} grad")
        close(qb.vmap(q)(x[None].repeat(2, 0)), jax.vmap(j)(x[None].repeat(2, 0)), what=f"{qf.__name__} vmap")


@pytest.mark.parametrize("axis", [0, 1])
def test_long_cumulative_axes_are_scans(axis):
    # Long axes take the scan lowering (one pass; the window formulation is O(n^2)): equal to
    # NumPy's sequential accumulation, forward and reverse, also under grad.
    x = np.random.default_rng(15).normal(size=(600, 700)).astype(np.float32)
    flip = lambda f: lambda a: np.flip(f(np.flip(a, axis)), axis)  # noqa: E731
    for qf, nf in [(qb.cumsum, lambda a: np.cumsum(a.astype(np.float64), axis)), (qb.cummax, lambda a: np.maximum.accumulate(a, axis)), (qb.cummin, lambda a: np.minimum.accumulate(a, axis))]:
        tol = 1e-5 if qf is qb.cumsum else 0.0  # f32 sums against float64 ones
        close(qb.jit(lambda a: qf(a, axis))(x), nf(x), tol, what=f"{qf.__name__} axis {axis}")
        close(qb.jit(lambda a: qf(a, axis, reverse=True))(x), flip(nf)(x), tol, what=f"{qf.__name__} reverse axis {axis}")
    g = qb.jit(qb.grad(lambda a: qb.sum(qb.cumsum(a, axis) * a)))(x)
    want = np.cumsum(x.astype(np.float64), axis) + flip(lambda a: np.cumsum(a.astype(np.float64), axis))(x)
    close(g, want, 1e-5, what="cumsum grad")


def test_cumprod_is_a_scan_with_exact_derivatives():
    # cumprod is reduce_window_prod on the cumulative window: a scan when compiled, and its
    # JVP / VJP run the recursive doubling without division, so zeros in the input give
    # JAX's gradients exactly; also under jit, vmap and forward mode, on a long axis.
    rng = np.random.default_rng(16)
    x = rng.normal(size=(4, 9))
    x[1, 3] = 0.0
    x[2, [2, 6]] = 0.0
    for axis in (0, 1):
        for reverse in (False, True):
            q = lambda a: qb.cumprod(a, axis, reverse=reverse)  # noqa: E731
            j = lambda a: jax.lax.cumprod(a, axis=axis, reverse=reverse)  # noqa: E731
            what = f"axis {axis} reverse {reverse}"
            close(qb.jit(q)(x), j(x), what=what)
            close(qb.grad(lambda a: qb.sum(qb.sin(q(a))))(x), jax.grad(lambda a: jnp.sum(jnp.sin(j(a))))(x), what="grad " + what)
            close(qb.jit(qb.grad(lambda a: qb.sum(q(a) * a)))(x), jax.grad(lambda a: jnp.sum(j(a) * a))(x), what="jit grad " + what)
            t = rng.normal(size=x.shape)
            close(qb.jvp(q, (x,), (t,))[1], jax.jvp(j, (x,), (t,))[1], what="jvp " + what)
            close(qb.vmap(q)(x[None].repeat(2, 0)), jax.vmap(j)(x[None].repeat(2, 0)), what="vmap " + what)
    # Axes of length 1 (an identity window): the tangent passes through.
    for shape, axis in [((3, 1), 1), ((1,), 0), ((1, 4), 0)]:
        z = rng.normal(size=shape)
        close(qb.grad(lambda a: qb.sum(qb.sin(qb.cumprod(a, axis))))(z), jax.grad(lambda a: jnp.sum(jnp.sin(jnp.cumprod(a, axis))))(z), what=f"length-1 axis {shape}")
        close(qb.jvp(lambda a: qb.cumprod(a, axis), (z,), (z,))[1], jax.jvp(lambda a: jnp.cumprod(a, axis), (z,), (z,))[1], what=f"length-1 axis jvp {shape}")
    # A long axis (values near 1, so the products stay normal), against NumPy in float64.
    y = (1 + 1e-3 * rng.normal(size=(300, 500))).astype(np.float32)
    close(qb.jit(lambda a: qb.cumprod(a, 1))(y), np.cumprod(y.astype(np.float64), 1), 1e-5, what="long axis")
    close(qb.jit(lambda a: qb.cumprod(a, 0, reverse=True))(y), np.flip(np.cumprod(np.flip(y, 0).astype(np.float64), 0), 0), 1e-5, what="long axis reverse")
    # Integer products wrap as NumPy's do.
    k = rng.integers(-3, 4, size=(3, 40)).astype(np.int32)
    np.testing.assert_array_equal(np.asarray(qb.jit(lambda a: qb.cumprod(a, 1))(k)), np.cumprod(k, 1, dtype=np.int32))


def test_product_windows():
    # reduce_window with qb.multiply (sliding windows): forward against JAX; derivatives exist
    # for cumulative windows only, elsewhere a typed error naming the op.
    x = np.random.default_rng(17).normal(size=(6, 8))
    q = lambda a: qb.reduce_window(a, 1.0, qb.multiply, (2, 3), (1, 2), "SAME")  # noqa: E731
    close(q(x), jax.lax.reduce_window(x, 1.0, jax.lax.mul, (2, 3), (1, 2), "SAME"))
    close(qb.reduce_window(x, 1.0, "mul", (1, 2), (1, 1), "VALID"), x[:, :-1] * x[:, 1:])
    with pytest.raises(qb.QuablaError, match="reduce_window_prod"):
        qb.grad(lambda a: qb.sum(q(a)))(x)
    with pytest.raises(qb.UnsupportedOperationError, match="identity"):
        qb.reduce_window(x, 2.0, qb.multiply, (2, 2), (1, 1), "VALID")


def test_cumsum_numpy_signature():
    a = np.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(np.asarray(qb.cumsum(a)), np.asarray(jnp.cumsum(a)))
    np.testing.assert_array_equal(np.asarray(qb.cumsum(a, axis=1)), np.asarray(jnp.cumsum(a, axis=1)))
    assert qb.cumsum(np.array([True, True, False])).tolist() == [1, 2, 2]
    close(qb.cumsum(a, dtype=qb.float64), np.cumsum(a, dtype=np.float64))
    close(qb.cumprod(a + 1, axis=0), np.cumprod(a + 1, axis=0))


# ---------------------------------------------------------------------------------------------
# Errors


def test_errors():
    x, w = np.ones((1, 2, 5)), np.ones((3, 4, 2))
    with pytest.raises(qb.ShapeError, match="convolution_c6"):
        qb.conv(x, w, (1,), "VALID")
    with pytest.raises(qb.ShapeError, match="padding"):
        qb.conv(x, np.ones((3, 2, 2)), (1,), "FULL")
    with pytest.raises(qb.ShapeError, match="convolution_c9"):
        qb.conv(x, np.ones((3, 2, 7)), (1,), "VALID")
    with pytest.raises(qb.DTypeError, match="same dtype"):
        qb.conv(x.astype(np.float32), np.ones((3, 2, 2)), (1,), "VALID")
    with pytest.raises(qb.ShapeError, match="window_strides"):
        qb.conv_general_dilated(x, np.ones((3, 2, 2)), (1, 1), "VALID")
    with pytest.raises(qb.ShapeError, match="1-dimensional"):
        qb.convolve(np.ones((2, 2)), np.ones(2))
    with pytest.raises(qb.ShapeError, match="mode"):
        qb.convolve(np.ones(3), np.ones(2), mode="wide")
    with pytest.raises(qb.ShapeError, match="reduce_window_c3"):
        qb.max_pool(np.ones((1, 3, 1)), (4,))
    with pytest.raises(qb.UnsupportedOperationError, match="init_value"):
        qb.reduce_window(np.ones(4), 1.0, qb.add, (2,), (1,), "VALID")
    with pytest.raises(qb.ShapeError, match="axis"):
        qb.cummax(np.ones(3), axis=2)
    with pytest.raises(qb.ShapeError, match="need 3 or 4 dims"):
        qb.max_pool(np.ones(4), (2, 2))
    with pytest.raises(qb.ShapeError, match="dimension_numbers"):
        qb.conv_general_dilated(np.ones((1, 2, 5)), np.ones((3, 2, 2)), (1,), "VALID", dimension_numbers=("NCH", "OIW", "NCH"))


# ---------------------------------------------------------------------------------------------
# Docstring examples of quabla._conv (test_docs.py runs those of the other modules)

import builtins  # noqa: E402
import doctest  # noqa: E402

from quabla import _conv  # noqa: E402

DOCTESTS = [t for t in doctest.DocTestFinder().find(_conv) if t.examples]


@pytest.mark.parametrize("test", DOCTESTS, ids=[t.name for t in DOCTESTS])
def test_docstring_example(test):
    test.globs = {"qb": qb, "round": builtins.round}
    out = []
    r = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    r.run(test, out=out.append)
    assert r.failures == 0, "".join(out)


# 1-D convolutions laid out NWC whose product the runtime computes read their patches as
# overlapping rows of the (padded) input (lowering/src/linalg/convolution.rs `windowed`): no
# patch matrix. Paddings (SAME, VALID, asymmetric, cropping), kernel layouts, an input that
# is a slice of a wider array (copied first, checked at run time), outputs read by later
# ops, f32 and f64, gradients, against JAX.
WINDOWED = {
    "same_f64": ((2, 1024, 64), (5, 64, 64), dict(padding="SAME", dimension_numbers=("NWC", "WIO", "NWC")), np.float64),
    "valid_f32": ((3, 1030, 64), (7, 64, 48), dict(padding="VALID", dimension_numbers=("NWC", "WIO", "NWC")), np.float32),
    "cropped_oiw": ((2, 1100, 64), (5, 64, 64), dict(padding=((3, -2),), dimension_numbers=("NWC", "OIW", "NWC")), np.float64),
    # NCW (lax.conv's default): transposed to NWC and back.
    "ncw_same_f32": ((2, 64, 1024), (64, 64, 5), dict(padding="SAME"), np.float32),
    "ncw_valid_f64": ((3, 48, 1030), (32, 48, 7), dict(padding=((0, 2),)), np.float64),
    # Dilated windows (a WaveNet's causal stack): one product per tap, accumulating.
    "causal_dilated_f32": ((4, 1024, 32), (3, 32, 32), dict(padding=((8, 0),), rhs_dilation=(4,), dimension_numbers=("NWC", "WIO", "NWC")), np.float32),
    "same_dilated_f64": ((2, 1000, 48), (5, 48, 40), dict(padding="SAME", rhs_dilation=(3,), dimension_numbers=("NWC", "WIO", "NWC")), np.float64),
    "valid_dilated_ncw_f64": ((2, 40, 1030), (24, 40, 4), dict(padding="VALID", rhs_dilation=(2,)), np.float64),
}


@pytest.mark.parametrize("name", sorted(WINDOWED))
def test_windowed_nwc_conv1d(name):
    ls, rs, kw, dt = WINDOWED[name]
    rng = np.random.default_rng(11)
    x, w = rng.normal(size=ls).astype(dt), rng.normal(size=rs).astype(dt)
    tol = 1e-12 if dt == np.float64 else 2e-5
    conv = lambda m: lambda x, w: m(x, w, (1,), **kw)  # noqa: E731
    want = jax.lax.conv_general_dilated(x, w, (1,), **kw)
    close(qb.conv_general_dilated(x, w, (1,), **kw), want, tol, name)
    close(qb.jit(conv(qb.conv_general_dilated))(x, w), want, tol, name + " jit")
    # Read by a later op (a fresh result buffer, not the output's).
    close(qb.jit(lambda x, w: qb.tanh(conv(qb.conv_general_dilated)(x, w)))(x, w), jnp.tanh(want), tol, name + " tanh")
    # An input whose positions are not C apart: the features of a wider array.
    if "dimension_numbers" in kw:
        wide = np.concatenate([x, rng.normal(size=ls[:2] + (32,)).astype(dt)], -1)
        close(qb.jit(lambda xw, w: conv(qb.conv_general_dilated)(xw[:, :, : ls[2]], w))(wide, w), want, tol, name + " slice")
    g = jax.grad(lambda x, w: jnp.sum(jnp.tanh(conv(jax.lax.conv_general_dilated)(x, w))), argnums=(0, 1))(x, w)
    got = qb.jit(qb.grad(lambda x, w: qb.sum(qb.tanh(conv(qb.conv_general_dilated)(x, w))), argnums=(0, 1)))(x, w)
    close(got[0], g[0], tol * 10, name + " dx")
    close(got[1], g[1], tol * 100, name + " dw")


# 2-D and 3-D convolutions laid out channels-first with 32+ features and large patch
# matrices are computed channels-last (convolution.rs `channels_last`: the input transposed
# to NHWC, the result back): strides, dilation, padding kinds, kernel layouts, gradients.
CHANNELS_LAST = {
    "2d_same": ((4, 32, 40, 40), (48, 32, 3, 3), dict(window_strides=(1, 1), padding="SAME")),
    "2d_strided_dilated": ((3, 40, 41, 38), (32, 40, 3, 2), dict(window_strides=(2, 1), padding=((1, 2), (0, 1)), rhs_dilation=(1, 2))),
    "2d_hwio_kernel": ((4, 32, 40, 40), (3, 3, 32, 16), dict(window_strides=(1, 1), padding="VALID", dimension_numbers=("NCHW", "HWIO", "NCHW"))),
    "3d_ncdhw": ((2, 32, 12, 12, 12), (32, 32, 3, 3, 3), dict(window_strides=(1, 1, 1), padding="SAME")),
}


@pytest.mark.parametrize("name", sorted(CHANNELS_LAST))
def test_channels_first_computed_channels_last(name):
    ls, rs, kw = CHANNELS_LAST[name]
    rng = np.random.default_rng(13)
    x, w = rand(rng, ls), rand(rng, rs)
    n = len(ls) - 2
    conv = lambda m: lambda x, w: m(x, w, **kw)  # noqa: E731
    want = jax.lax.conv_general_dilated(x, w, **kw)
    close(qb.jit(conv(qb.conv_general_dilated))(x, w), want, TOL, name)
    close(qb.conv_general_dilated(x, w, **kw), want, TOL, name + " eager")
    g = jax.grad(lambda x, w: jnp.sum(jnp.sin(conv(jax.lax.conv_general_dilated)(x, w))), argnums=(0, 1))(x, w)
    got = qb.jit(qb.grad(lambda x, w: qb.sum(qb.sin(conv(qb.conv_general_dilated)(x, w))), argnums=(0, 1)))(x, w)
    close(got[0], g[0], TOL * 10, name + " dx")
    close(got[1], g[1], TOL * 100, name + " dw")
    assert n in (2, 3)


# (lhs shape, rhs shape, keyword arguments of conv_transpose)
TRANSPOSE_CASES = {
    "1d_default_same_s2": ((2, 7, 3), (3, 3, 4), dict(strides=(2,), padding="SAME")),
    "1d_valid_s3_dilated": ((1, 5, 2), (2, 2, 3), dict(strides=(3,), padding="VALID", rhs_dilation=(2,))),
    "2d_nhwc_same_s2": ((2, 4, 5, 3), (3, 3, 3, 4), dict(strides=(2, 2), padding="SAME")),
    "2d_valid_k4_s2": ((1, 3, 3, 2), (4, 4, 2, 3), dict(strides=(2, 2), padding="VALID")),
    "2d_same_k2_s3": ((1, 3, 4, 2), (2, 2, 2, 2), dict(strides=(3, 1), padding="SAME")),
    "2d_explicit_nchw": ((2, 3, 5, 4), (4, 3, 3, 3), dict(strides=(2, 1), padding=((1, 2), (0, 1)), dimension_numbers=("NCHW", "OIHW", "NCHW"))),
    "2d_transpose_kernel": ((1, 5, 5, 4), (3, 3, 2, 4), dict(strides=(2, 2), padding="SAME", transpose_kernel=True)),
    "3d_same": ((1, 3, 2, 3, 2), (2, 2, 2, 2, 3), dict(strides=(2, 1, 2), padding="SAME")),
}


@pytest.mark.parametrize("name", sorted(TRANSPOSE_CASES))
def test_conv_transpose_matches_jax(name):
    ls, rs, kw = TRANSPOSE_CASES[name]
    rng = np.random.default_rng(7)
    x, w = rand(rng, ls), rand(rng, rs)
    want = jax.lax.conv_transpose(x, w, **kw)
    close(qb.conv_transpose(x, w, **kw), want, what=name)
    close(qb.jit(lambda x, w: qb.conv_transpose(x, w, **kw))(x, w), want, what=name + " jit")
    loss_q = lambda x, w: (qb.conv_transpose(x, w, **kw) ** 2).sum()  # noqa: E731
    loss_j = lambda x, w: (jax.lax.conv_transpose(x, w, **kw) ** 2).sum()  # noqa: E731
    for got, exp in zip(qb.grad(loss_q, argnums=(0, 1))(x, w), jax.grad(loss_j, argnums=(0, 1))(x, w)):
        close(got, exp, what=name + " grad")


def test_conv_transpose_errors():
    x, w = np.ones((1, 4, 4, 2)), np.ones((3, 3, 2, 2))
    with pytest.raises(qb.ShapeError, match="conv_transpose"):
        qb.conv_transpose(x, w, (2, 2), "FULL")
    with pytest.raises(qb.ShapeError, match="conv_transpose"):
        qb.conv_transpose(x, w, (2, 2, 2), "SAME")
    with pytest.raises(qb.DTypeError, match="conv_transpose"):
        qb.conv_transpose(x.astype(np.float32), w, (2, 2), "SAME")
