"""qb.lax's gather/scatter with dimension numbers, the conv/shape helpers, reduce_precision,
nextafter, mulhi and the special-function aliases against jax.lax (x64): values eagerly
and under jit, gradients, vmap, f32 in -> f32 out, typed errors."""

import numpy as np
import pytest

import quabla as qb
from breadth_util import assert_close
from quabla import errors

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402
from jax import lax as jl  # noqa: E402

L = qb.lax
RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4, 5))

# (name, dimension numbers, start indices (in and out of bounds), slice sizes): the forms
# jnp indexing produces (x[i], x[:, i], x[i, j], x[i, :, j]), windows, batching dims (vmap).
GATHERS = [
    ("rows", ((1, 2), (0,), (0,)), [[2], [0], [-1], [3]], (1, 4, 5)),
    ("cols", ((0, 2), (1,), (1,)), [[1], [3], [5], [0]], (3, 1, 5)),
    ("pairs", ((1,), (0, 1), (0, 1)), [[2, 1], [0, 3], [1, 4], [-2, 0]], (1, 1, 5)),
    ("outer", ((1,), (0, 2), (0, 2)), [[2, 4], [0, 1], [2, 5]], (1, 4, 1)),
    ("window", ((1, 2), (0,), (0, 2)), [[1, 2], [2, 0], [0, 3], [2, -1]], (1, 4, 3)),
    ("window2d", ((0, 3), (0,), (0, 1)), [[[1, 1], [2, 2]], [[0, 0], [2, 3]], [[1, 2], [0, 1]]], (1, 3, 5)),
    ("batched", ((1,), (1,), (1,), (0,), (0,)), [[1], [3], [4]], (1, 1, 5)),
    ("scalar", ((), (0, 1, 2), (2, 0, 1)), [4, 1, 3], (1, 1, 1)),
]


def _jdn_g(dn):
    return jl.GatherDimensionNumbers(*dn)


@pytest.mark.parametrize("name,dn,idx,sizes", GATHERS, ids=[g[0] for g in GATHERS])
def test_gather(name, dn, idx, sizes):
    idx = np.array(idx, np.int32)
    qdn = L.GatherDimensionNumbers(*dn)
    for mode in (None, "clip", L.GatherScatterMode.FILL_OR_DROP):
        jm = mode if not isinstance(mode, L.GatherScatterMode) else "fill"
        want = jl.gather(X, idx, _jdn_g(dn), sizes, mode=jm)
        assert_close(L.gather(qb.array(X), qb.array(idx), qdn, sizes, mode=mode), want, what=f"{name} {mode}")
    want = jl.gather(X, idx, _jdn_g(dn), sizes, mode="fill", fill_value=-7.0)
    f = qb.jit(lambda x, i: L.gather(x, i, qdn, sizes, mode="fill", fill_value=-7.0))
    assert_close(f(qb.array(X), qb.array(idx)), want, what="jit fill")
    # Gradients (a scatter-add of the cotangent; nothing for filled windows).
    w = RNG.standard_normal(want.shape)
    for mode in ("clip", "fill"):
        g = qb.grad(lambda x: qb.sum(L.gather(x, qb.array(idx), qdn, sizes, mode=mode) * qb.where(qb.isnan(qb.array(want)), 0.0, qb.array(w))))(qb.array(X))
        gj = jax.grad(lambda x: jnp.sum(jnp.where(jnp.isnan(want), 0.0, jl.gather(x, idx, _jdn_g(dn), sizes, mode=mode) * w)))(X)
        assert_close(g, gj, what=f"grad {mode}")
    # f32 stays f32; ints gather exactly.
    assert L.gather(qb.array(X.astype(np.float32)), qb.array(idx), qdn, sizes, mode="clip").dtype == qb.float32
    xi = (X * 100).astype(np.int64)
    assert_close(L.gather(qb.array(xi), qb.array(idx), qdn, sizes, mode="fill"), jl.gather(xi, idx, _jdn_g(dn), sizes, mode="fill"))


def test_gather_vmap():
    dn = ((1, 2), (0,), (0,))
    idx = np.array([[2], [0]])
    xs = RNG.standard_normal((2, 3, 4, 5))
    qf = lambda x, i: L.gather(x, i, L.GatherDimensionNumbers(*dn), (1, 4, 5), mode="clip")  # noqa: E731
    jf = lambda x, i: jl.gather(x, i, _jdn_g(dn), (1, 4, 5), mode="clip")  # noqa: E731
    assert_close(qb.vmap(qf, in_axes=(0, None))(qb.array(xs), qb.array(idx)), jax.vmap(jf, in_axes=(0, None))(xs, idx))
    ib = np.array([[[2], [0]], [[1], [1]]])
    assert_close(qb.vmap(qf)(qb.array(xs), qb.array(ib)), jax.vmap(jf)(xs, ib))
    assert_close(qb.vmap(qf, in_axes=(None, 0))(qb.array(X), qb.array(ib)), jax.vmap(jf, in_axes=(None, 0))(X, ib))


def test_gather_from_jnp_indexing():
    """The dimension numbers JAX emits for jnp indexing give the same results here."""
    i, j = np.array([2, 0, 1]), np.array([1, 3, 3])
    for f in (lambda x: x[i], lambda x: x[:, i], lambda x: x[i, j], lambda x: x[i, :, j], lambda x: x[..., i], lambda x: x[i[:, None], j]):
        eqn = jax.make_jaxpr(f)(X).eqns[-1]
        if eqn.primitive.name != "gather":
            continue
        p = eqn.params
        # Rebuild the indices JAX gathers with from the jaxpr's inputs.
        closed = jax.make_jaxpr(f)(X)
        env = {}

        def read(v):
            return v.val if hasattr(v, "val") else env[v]

        env[closed.jaxpr.invars[0]] = X
        for c, v in zip(closed.jaxpr.constvars, closed.consts):
            env[c] = v
        for e in closed.jaxpr.eqns[:-1]:
            outs = e.primitive.bind(*[read(v) for v in e.invars], **e.params)
            outs = outs if e.primitive.multiple_results else [outs]
            for v, o in zip(e.outvars, outs):
                env[v] = o
        idx = np.asarray(read(eqn.invars[1]))
        dn = L.GatherDimensionNumbers(*p["dimension_numbers"])
        got = L.gather(qb.array(X), qb.array(idx), dn, p["slice_sizes"], mode=p["mode"].name.lower().replace("fill_or_drop", "fill"))
        assert_close(got, f(X))


SCATTERS = [
    ("rows", ((1, 2), (0,), (0,)), [[2], [0], [2], [3], [-1]], (5, 4, 5)),
    ("pairs", ((1,), (0, 1), (0, 1)), [[2, 1], [0, 3], [2, 1], [3, 0], [1, -1]], (5, 5)),
    ("window", ((1, 2), (0,), (0, 2)), [[1, 2], [2, 0], [0, 3], [1, 2]], (4, 4, 3)),
    ("batched", ((1,), (1,), (1,), (0,), (0,)), [[1], [3], [4]], (3, 5)),
    ("scalar", ((), (0, 1, 2), (2, 0, 1)), [4, 1, 3], ()),
]


def _jdn_s(dn):
    return jl.ScatterDimensionNumbers(*dn)


@pytest.mark.parametrize("name,dn,idx,ushape", SCATTERS, ids=[s[0] for s in SCATTERS])
def test_scatter(name, dn, idx, ushape):
    idx = np.array(idx, np.int64)
    u = RNG.standard_normal(ushape)
    qdn = L.ScatterDimensionNumbers(*dn)
    for op in ("scatter", "scatter_add", "scatter_sub", "scatter_mul", "scatter_min", "scatter_max"):
        for mode in (None, "clip") if op in ("scatter", "scatter_add") else (None,):
            want = getattr(jl, op)(X, idx, u, _jdn_s(dn), mode=mode)
            assert_close(getattr(L, op)(qb.array(X), qb.array(idx), qb.array(u), qdn, mode=mode), want, what=f"{name} {op} {mode}")
    f = qb.jit(lambda x, i, v: L.scatter_add(x, i, v, qdn))
    assert_close(f(qb.array(X), qb.array(idx.astype(np.int32)), qb.array(u)), jl.scatter_add(X, idx, u, _jdn_s(dn)), what="jit")
    xi = (X * 100).astype(np.int32)
    ui = (u * 100).astype(np.int32)
    assert_close(L.scatter_max(qb.array(xi), qb.array(idx), qb.array(ui), qdn), jl.scatter_max(xi, idx, ui, _jdn_s(dn)))
    assert L.scatter(qb.array(X.astype(np.float32)), qb.array(idx), qb.array(u.astype(np.float32)), qdn).dtype == qb.float32


@pytest.mark.parametrize("name,dn,idx,ushape", [SCATTERS[0], SCATTERS[2], SCATTERS[3]], ids=["rows", "window", "batched"])
def test_scatter_grads(name, dn, idx, ushape):
    idx = np.array(idx, np.int64)
    u = RNG.standard_normal(ushape)
    qdn = L.ScatterDimensionNumbers(*dn)
    w = RNG.standard_normal(X.shape)
    for op in ("scatter", "scatter_add", "scatter_sub", "scatter_min", "scatter_max"):
        # (With "clip", JAX gives inf to min/max updates whose indices were clamped.)
        for mode in (None, "clip") if op in ("scatter", "scatter_add") else (None,):
            g = qb.grad(lambda x, v: qb.sum(getattr(L, op)(x, qb.array(idx), v, qdn, mode=mode) * qb.array(w)), argnums=(0, 1))(qb.array(X), qb.array(u))
            gj = jax.grad(lambda x, v: jnp.sum(getattr(jl, op)(x, idx, v, _jdn_s(dn), mode=mode) * w), argnums=(0, 1))(X, u)
            assert_close(g, gj, what=f"{op} {mode}")
    # scatter_mul: JAX differentiates it for unique indices.
    uidx = idx[:2] if name != "batched" else idx
    um = u[:2] if name != "batched" else u
    g = qb.grad(lambda x, v: qb.sum(L.scatter_mul(x, qb.array(uidx), v, qdn) * qb.array(w)), argnums=(0, 1))(qb.array(X), qb.array(um))
    gj = jax.grad(lambda x, v: jnp.sum(jl.scatter_mul(x, uidx, v, _jdn_s(dn), unique_indices=True) * w), argnums=(0, 1))(X, um)
    assert_close(g, gj, what="scatter_mul")


def test_scatter_vmap_and_apply():
    dn = ((1, 2), (0,), (0,))
    qdn, jdn = L.ScatterDimensionNumbers(*dn), _jdn_s(dn)
    xs, us = RNG.standard_normal((2, 3, 4, 5)), RNG.standard_normal((2, 3, 4, 5))
    ib = np.array([[[2], [0], [2]], [[1], [7], [0]]])
    qf = lambda x, i, v: L.scatter_add(x, i, v, qdn)  # noqa: E731
    jf = lambda x, i, v: jl.scatter_add(x, i, v, jdn)  # noqa: E731
    assert_close(qb.vmap(qf)(qb.array(xs), qb.array(ib), qb.array(us)), jax.vmap(jf)(xs, ib, us))
    assert_close(qb.vmap(qf, in_axes=(0, None, 0))(qb.array(xs), qb.array(ib[0]), qb.array(us)), jax.vmap(jf, in_axes=(0, None, 0))(xs, ib[0], us))
    d1 = ((), (0,), (0,))
    i1 = np.array([[1], [1], [2], [9], [1]])
    want = jl.scatter_apply(jnp.arange(1.0, 6.0), i1, lambda v: v * 2.0 + 1.0, _jdn_s(d1), update_shape=(5,))
    for f in (lambda x: L.scatter_apply(x, qb.array(i1), lambda v: v * 2.0 + 1.0, L.ScatterDimensionNumbers(*d1), update_shape=(5,)),):
        assert_close(f(qb.arange(1.0, 6.0)), want)
        assert_close(qb.jit(f)(qb.arange(1.0, 6.0)), want)
    assert_close(L.index_take(qb.array(X), [qb.array([1, -1, 5]), qb.array([2, 0, 1])], (0, 2)),
                 jl.index_take(X, [jnp.array([1, -1, 5]), jnp.array([2, 0, 1])], (0, 2)))


def test_gather_scatter_errors():
    dn = L.GatherDimensionNumbers((1, 2), (0,), (0,))
    x, i = qb.array(X), qb.array([[1]])
    with pytest.raises(errors.ShapeError):
        L.gather(x, i, dn, (1, 4))
    with pytest.raises(errors.ShapeError):
        L.gather(x, qb.array([[1, 2]]), dn, (1, 4, 5))
    with pytest.raises(errors.ShapeError):
        L.gather(x, i, dn, (2, 4, 5))
    with pytest.raises(errors.DTypeError):
        L.gather(x, qb.array([[1.0]]), dn, (1, 4, 5))
    with pytest.raises(errors.ArgumentTypeError):
        L.gather(x, i, "rows", (1, 4, 5))
    with pytest.raises(errors.ArgumentTypeError):
        L.gather(x, i, None, (1, 4, 5))
    with pytest.raises(errors.InvalidArgumentError):
        L.gather(x, i, dn, (1, 4, 5), mode="wrap")
    with pytest.raises(errors.InvalidArgumentError):
        L.gather(x, i, dn, (1, 4, 5), mode=L.GatherScatterMode.ONE_HOT)
    sdn = L.ScatterDimensionNumbers((1, 2), (0,), (0,))
    with pytest.raises(errors.DTypeError):
        L.scatter_add(x, i, qb.ones((1, 4, 5), dtype=qb.float32), sdn)
    with pytest.raises(errors.ShapeError):
        L.scatter_add(x, i, qb.ones((2, 4, 5)), sdn)
    with pytest.raises(errors.ShapeError):
        L.scatter_add(x, i, qb.ones((1, 4, 6)), sdn)
    with pytest.raises(errors.DTypeError):
        L.scatter_add(qb.array([True]), qb.array([[0]]), qb.array([True]), L.ScatterDimensionNumbers((), (0,), (0,)))
    with pytest.raises(errors.ArgumentTypeError):
        L.scatter_apply(x, i, "f", sdn)
    assert L.GatherScatterMode.from_any("drop") is L.GatherScatterMode.FILL_OR_DROP


def _bits_equal(got, want):
    got, want = np.asarray(got), np.asarray(want)
    bad = ~((got == want) | (np.isnan(got) & np.isnan(want))) | (np.signbit(got) != np.signbit(want))
    assert not bad.any(), f"{bad.sum()} differ, e.g. got {got[bad][:4]} want {want[bad][:4]}"


def _wide(n, dt):
    return (RNG.uniform(-1, 1, n) * 2.0 ** RNG.integers(-30, 30, n)).astype(dt)


def test_reduce_precision_bit_exact():
    for dt, cases in ((np.float32, ((8, 7), (5, 10), (4, 3), (8, 0), (8, 23))), (np.float64, ((8, 7), (5, 10), (8, 23), (11, 10)))):
        fi = np.finfo(dt)
        ties = (np.arange(1, 600) * 2.0 ** -7 + 2.0 ** -8).astype(dt) * 4
        x = np.concatenate([_wide(4000, dt), ties, -ties, np.array([0, -0.0, np.inf, -np.inf, np.nan, 65504, 65519, 65520, 6.1e-5, -6.2e-5, fi.max, fi.tiny], dt)])
        xq = qb.array(x)
        for eb, mb in cases:
            want = jl.reduce_precision(x, eb, mb)
            _bits_equal(L.reduce_precision(xq, eb, mb).numpy(), want)
        _bits_equal(qb.jit(lambda v: L.reduce_precision(v, 5, 10))(xq).numpy(), jl.reduce_precision(x, 5, 10))
    assert L.reduce_precision(qb.ones(2, dtype=qb.float32), 8, 7).dtype == qb.float32
    # The derivative is the reduced tangent (JAX's linear rule).
    g = qb.grad(lambda v: qb.sum(L.reduce_precision(v * 1.001, 5, 2)))(qb.array([1.0, 2.0]))
    assert_close(g, jax.grad(lambda v: jnp.sum(jl.reduce_precision(v * 1.001, 5, 2)))(jnp.array([1.0, 2.0])))
    with pytest.raises(errors.DTypeError):
        L.reduce_precision(qb.array([1, 2]), 8, 7)
    with pytest.raises(errors.InvalidArgumentError):
        L.reduce_precision(qb.array([1.0]), 0, 7)


def test_nextafter_exact():
    for dt in (np.float32, np.float64):
        fi = np.finfo(dt)
        x, y = _wide(3000, dt), _wide(3000, dt)
        sp = np.array([0, -0.0, 0, 1, 1, -1, np.inf, -np.inf, fi.max, fi.tiny, -fi.tiny, fi.tiny, 0.5, 0.5, 2.0, -2.0, np.nan, 1.0], dt)
        sq = np.array([1, 1, -0.0, 1, 2, 0, 0, 0, np.inf, 0, 0, 1, 0, 1, 0, 0, 1.0, np.nan], dt)
        a, b = np.concatenate([x, sp, x]), np.concatenate([y, sq, -x])
        want = jl.nextafter(a, b)
        _bits_equal(L.nextafter(qb.array(a), qb.array(b)).numpy(), want)
        _bits_equal(qb.jit(L.nextafter)(qb.array(a), qb.array(b)).numpy(), want)
    assert L.nextafter(qb.ones(2, dtype=qb.float32), 2.0).dtype == qb.float32
    with pytest.raises(errors.DTypeError):
        L.nextafter(qb.ones(2, dtype=qb.float32), qb.ones(2))


def test_mulhi():
    for dt, qdt in ((np.int32, qb.int32), (np.uint32, qb.uint32), (np.uint8, qb.uint8), (np.int64, qb.int64)):
        ii = np.iinfo(dt)
        a = np.concatenate([RNG.integers(ii.min, ii.max, 3000, dtype=dt, endpoint=True), np.array([ii.min, ii.max, ii.min, 0, ii.max], dt)])
        b = np.concatenate([RNG.integers(ii.min, ii.max, 3000, dtype=dt, endpoint=True), np.array([ii.min, ii.max, ii.max, ii.min, 1], dt)])
        got = L.mulhi(qb.array(a, dtype=qdt), qb.array(b, dtype=qdt))
        assert got.dtype == qdt
        assert_close(got, jl.mulhi(a, b))
    assert_close(qb.jit(L.mulhi)(qb.array(a), qb.array(b)), jl.mulhi(a, b))
    with pytest.raises(errors.DTypeError):
        L.mulhi(qb.array([1.0]), qb.array([2.0]))


def test_special_aliases():
    import scipy.special as ss

    a, x = np.array([0.5, 2.0, 3.5, 7.0]), np.array([0.3, 1.0, 4.0, 2.5])
    qa, qx = qb.array(a), qb.array(x)
    assert_close(L.igamma(qa, qx), ss.gammainc(a, x), 1e-12, 1e-14)
    assert_close(L.igammac(qa, qx), ss.gammaincc(a, x), 1e-12, 1e-14)
    h = 1e-6
    dpda = (ss.gammainc(a + h, x) - ss.gammainc(a - h, x)) / (2 * h)
    assert_close(L.igamma_grad_a(qa, qx), dpda, 1e-6, 1e-9)
    dpdx = np.exp((a - 1) * np.log(x) - x - ss.gammaln(a))
    assert_close(L.random_gamma_grad(qa, qx), -dpda / dpdx, 1e-6, 1e-9)
    assert_close(L.zeta(qa + 1.0, qx), ss.zeta(a + 1.0, x), 1e-12, 1e-14)
    assert_close(L.polygamma(qb.array([0.0, 1.0, 2.0, 1.5]), qb.array([1.5, 2.0, 3.0, 2.0])), np.append(ss.polygamma([0, 1, 2], [1.5, 2.0, 3.0]), np.nan), 1e-12, 1e-14)
    p = np.array([0.1, 0.5, 0.7, 0.9])
    assert_close(L.betainc(qa, qx + 1, qb.array(p)), ss.betainc(a, x + 1, p), 1e-10, 1e-12)
    z = np.array([-3.0, -0.5, 0.0, 0.7, 12.0])
    assert_close(L.bessel_i0e(qb.array(z)), ss.i0e(z), 1e-12, 1e-14)
    assert_close(L.bessel_i1e(qb.array(z)), ss.i1e(z), 1e-12, 1e-14)
    g = qb.grad(lambda v: qb.sum(L.igamma(qa, v)))(qx)
    assert_close(g, dpdx, 1e-10, 1e-12)
    assert L.igamma(qb.array(a, dtype=qb.float32), qb.array(x, dtype=qb.float32)).dtype == qb.float32
    with pytest.raises(errors.DTypeError):
        L.igamma(qb.array(a, dtype=qb.float32), qa)
    with pytest.raises(errors.DTypeError):
        L.bessel_i0e(qb.array([1, 2]))


def test_conv_shape_helpers():
    dn = ("NHWC", "HWIO", "NHWC")
    assert L.conv_general_permutations(dn) == jl.conv_general_permutations(dn)
    assert tuple(L.conv_dimension_numbers((2, 9, 9, 3), (3, 3, 3, 4), dn)) == tuple(jl.conv_dimension_numbers((2, 9, 9, 3), (3, 3, 3, 4), dn))
    assert tuple(L.conv_dimension_numbers((2, 3, 9), (4, 3, 3), None)) == tuple(jl.conv_dimension_numbers((2, 3, 9), (4, 3, 3), None))
    for pad in ("SAME", "VALID", "SAME_LOWER"):
        assert L.padtype_to_pads((9, 8), (3, 4), (2, 3), pad) == [tuple(int(v) for v in p) for p in jl.padtype_to_pads((9, 8), (3, 4), (2, 3), pad)]
        assert L.conv_shape_tuple((2, 3, 9, 8), (4, 3, 3, 4), (2, 3), pad) == tuple(int(v) for v in jl.conv_shape_tuple((2, 3, 9, 8), (4, 3, 3, 4), (2, 3), pad))
        if pad != "SAME_LOWER":
            assert L.conv_transpose_shape_tuple((2, 9, 8, 3), (3, 4, 3, 4), (2, 3), pad, dn) == tuple(int(v) for v in jl.conv_transpose_shape_tuple((2, 9, 8, 3), (3, 4, 3, 4), (2, 3), pad, dn))
    assert L.conv_general_shape_tuple((2, 9, 8, 3), (3, 4, 3, 4), (2, 1), ((1, 0), (2, 2)), dn) == tuple(int(v) for v in jl.conv_general_shape_tuple((2, 9, 8, 3), (3, 4, 3, 4), (2, 1), ((1, 0), (2, 2)), dn))
    assert L.conv_transpose_shape_tuple((2, 9, 8, 3), (3, 4, 3, 4), (2, 1), ((1, 0), (2, 2)), dn) == tuple(int(v) for v in jl.conv_transpose_shape_tuple((2, 9, 8, 3), (3, 4, 3, 4), (2, 1), ((1, 0), (2, 2)), dn))
    args = ((7, 6), (3, 2), (2, 1), ((1, 1), (0, 2)), (2, 1), (1, 2))
    assert L.reduce_window_shape_tuple(*args) == tuple(int(v) for v in jl.reduce_window_shape_tuple(*args))
    with pytest.raises(errors.InvalidArgumentError):
        L.padtype_to_pads((9,), (3,), (1,), "FULL")
    with pytest.raises(errors.ArgumentTypeError):
        L.conv_general_permutations(None)
    with pytest.raises(errors.ShapeError):
        L.conv_shape_tuple((2, 3, 9), (4, 3, 3, 3), (1,), "SAME")


def test_conv_patches_and_local():
    x = RNG.standard_normal((2, 7, 6, 3))
    dn = ("NHWC", "HWIO", "NHWC")
    for pad in (((1, 0), (0, 2)),):
        want = jl.conv_general_dilated_patches(x, (3, 2), (2, 1), pad, rhs_dilation=(1, 2), dimension_numbers=dn)
        assert_close(L.conv_general_dilated_patches(qb.array(x), (3, 2), (2, 1), pad, rhs_dilation=(1, 2), dimension_numbers=dn), want, 1e-12, 1e-12)
    xc = RNG.standard_normal((2, 3, 6))
    assert_close(L.conv_general_dilated_patches(qb.array(xc), (2,), (1,), "VALID"), jl.conv_general_dilated_patches(xc, (2,), (1,), "VALID"))
    w = RNG.standard_normal((4, 3, 3 * 6, 5))  # per-position kernels, HWIO with out spatial 4x3
    want = jl.conv_general_dilated_local(x, w, (2, 2), "SAME", (3, 2), dimension_numbers=dn)
    assert_close(L.conv_general_dilated_local(qb.array(x), qb.array(w), (2, 2), "SAME", (3, 2), dimension_numbers=dn), want, 1e-10, 1e-12)
    g = qb.grad(lambda v: qb.sum(L.conv_general_dilated_patches(v, (3, 2), (2, 1), "SAME", dimension_numbers=dn) ** 2))(qb.array(x))
    assert_close(g, jax.grad(lambda v: jnp.sum(jl.conv_general_dilated_patches(v, (3, 2), (2, 1), "SAME", dimension_numbers=dn) ** 2))(x), 1e-12, 1e-12)


def test_small_helpers():
    assert L.broadcast_shapes((2, 1), (3,), (1, 1, 1)) == jl.broadcast_shapes((2, 1), (3,), (1, 1, 1))
    with pytest.raises(errors.ShapeError):
        L.broadcast_shapes((2,), (3,))
    assert_close(L.broadcast_like(qb.array([1.0, 2.0]), qb.zeros((3, 2))), jl.broadcast_like(jnp.array([1.0, 2.0]), jnp.zeros((3, 2))))
    assert L.dtype(1.0) == qb.float64 and L.dtype(3) == qb.int64 and L.dtype(qb.ones(1, dtype=qb.float32)) == qb.float32
    assert L.dtype("uint8") == qb.uint8 and L.dtype(np.float32) == qb.float32
    assert L.empty((2, 3), qb.int32).shape == (2, 3)
    ops = [qb.array([1, 2, 3]), qb.array([4, 5, 6])]
    for ax in (0, 1, -1):
        assert_close(L.stack(ops, ax), jl.stack([jnp.array([1, 2, 3]), jnp.array([4, 5, 6])], ax))
    assert_close(L.unstack(qb.array(X), 1), jl.unstack(X, 1))
    with pytest.raises(errors.DTypeError):
        L.stack([qb.array([1]), qb.array([1.0])])
    assert L.platform_dependent(qb.array(2.0), cpu=lambda v: v * 3, default=lambda v: v).item() == 6.0
    assert L.platform_dependent(qb.array(2.0), tpu=lambda v: v * 3, default=lambda v: v + 1).item() == 3.0
    with pytest.raises(errors.InvalidArgumentError):
        L.platform_dependent(1, tpu=lambda v: v)
    assert L.with_sharding_constraint((1, qb.array(2.0)), None)[1].item() == 2.0
    v = L.rng_uniform(qb.array(-1.0, dtype=qb.float32), qb.array(1.0, dtype=qb.float32), (1000,))
    assert v.dtype == qb.float32 and float(v.min()) >= -1.0 and float(v.max()) < 1.0 and abs(float(v.mean())) < 0.1
    k = L.rng_uniform(qb.array(3), qb.array(7), (200,))
    assert set(np.unique(k.numpy())) == {3, 4, 5, 6}
    xs = RNG.standard_normal((3, 8))
    for qf, jf in ((L.approx_max_k, jl.approx_max_k), (L.approx_min_k, jl.approx_min_k)):
        assert_close(qf(qb.array(xs), 3), jf(xs, 3))
        assert_close(qf(qb.array(xs), 2, reduction_dimension=0), jf(xs, 2, reduction_dimension=0))
