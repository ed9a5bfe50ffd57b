"""x.at[idx].set/add/multiply/min/max against JAX 0.10.2 (x64) and NumPy: every combiner,
duplicate indices, out-of-bounds modes (drop by default, clip), mixed keys, jit, vmap vs a
loop, and gradients (first and second order) at 1e-12 in float64. Gradients of multiply
with respect to the values (JAX has none for non-unique indices) are checked against
central finite differences."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import quabla as qb

jax.config.update("jax_enable_x64", True)

RNG = np.random.default_rng(1)
COMBINERS = ["set", "add", "multiply", "min", "max"]
X = RNG.standard_normal((5, 4))
# Duplicates (1 twice), a negative index, out-of-bounds ones (7, -8).
IDX = np.array([1, 3, 1, -1, 7, -8])
V = RNG.standard_normal((6, 4))
KEYS = [
    ((IDX,), V),
    ((slice(None), np.array([0, 2, 2, 5])), RNG.standard_normal((5, 4))),
    ((np.array([0, 4, 0]), np.array([1, 1, 1])), np.array([2.0, -1.0, 3.0])),
    ((2,), 0.5),
    ((slice(1, 4), 2), np.array([1.0, 2.0, 3.0])),
    ((np.array([[0, 1], [1, 9]]), None), RNG.standard_normal((2, 2, 1, 4))),
]


def _ref(x, key, v, c, mode=None):
    return np.asarray(getattr(jnp.asarray(x).at[key], c)(jnp.asarray(v), mode=mode))


@pytest.mark.parametrize("c", COMBINERS)
@pytest.mark.parametrize("k", range(len(KEYS)))
def test_combiners_match_jax(c, k):
    key, v = KEYS[k]
    got = np.asarray(getattr(qb.array(X).at[key], c)(v))
    np.testing.assert_allclose(got, _ref(X, key, v, c), rtol=1e-12, atol=0)
    jitted = qb.jit(lambda x, v: getattr(x.at[key], c)(v))(X, np.asarray(v, dtype=np.float64))
    np.testing.assert_allclose(np.asarray(jitted), _ref(X, key, v, c), rtol=1e-12, atol=0)


@pytest.mark.parametrize("c", COMBINERS)
def test_modes(c):
    for mode in [None, "drop", "promise_in_bounds", "clip"]:
        if mode == "promise_in_bounds":
            key, v = (np.array([1, 3, 1]),), V[:3]  # in bounds, as promised
        else:
            key, v = (IDX,), V
        got = np.asarray(getattr(qb.array(X).at[key], c)(v, mode=mode))
        np.testing.assert_allclose(got, _ref(X, key, v, c, mode), rtol=1e-12, atol=0)


@pytest.mark.parametrize("mode", [None, "clip"])
def test_row_updates_of_higher_rank_operands(mode):
    # Keys of one index array on the first axis (positions from the indices and one row's
    # positions): a 3-D operand, a 2-D index array with duplicates, negative and
    # out-of-bounds indices, traced indices under jit, and the gradient.
    x = RNG.standard_normal((6, 3, 2))
    idx = np.array([[0, -1, 9], [2, 2, -7]])
    v = RNG.standard_normal((2, 3, 3, 2))
    for c in COMBINERS:
        want = getattr(jnp.asarray(x).at[idx], c)(v, mode=mode)
        got = qb.jit(lambda x, i, v: getattr(x.at[i], c)(v, mode=mode))(x, idx, v)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12, atol=0, err_msg=c)
    g = qb.grad(lambda x, v: qb.sum(x.at[idx].add(v, mode=mode) ** 2), argnums=(0, 1))(x, v)
    gj = jax.grad(lambda x, v: jnp.sum(x.at[idx].add(v, mode=mode) ** 2), argnums=(0, 1))(x, v)
    for a, b in zip(g, gj):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-12)


def test_integer_and_numpy_semantics():
    x = np.arange(10, dtype=np.int64)
    i = np.array([2, 2, 5, 9])
    got = np.asarray(qb.array(x).at[i].add(np.array([1, 2, 3, 4])))
    want = x.copy()
    np.add.at(want, i, np.array([1, 2, 3, 4]))
    np.testing.assert_array_equal(got, want)
    got = np.asarray(qb.array(x).at[i].min(np.array([0, 1, 9, -3])))
    want = x.copy()
    np.minimum.at(want, i, np.array([0, 1, 9, -3]))
    np.testing.assert_array_equal(got, want)
    got = np.asarray(qb.array(np.zeros(3, np.int32)).at[1].set(7))
    assert got.dtype == np.int32 and got.tolist() == [0, 7, 0]


def _fd_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[k] = eps
        g[k] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


@pytest.mark.parametrize("c", COMBINERS)
def test_grads_match_jax(c):
    key = (IDX,)
    w = RNG.standard_normal((5, 4))
    # Ties for min/max: some values equal the operand elements they land on.
    v = V.copy()
    v[0] = X[1]

    def loss(m):
        return lambda x, v: m.sum(w * m.sin(getattr(m.array(x).at[key], c)(v)))

    gx = qb.grad(loss(qb), argnums=0)(X, v)
    np.testing.assert_allclose(np.asarray(gx), np.asarray(jax.grad(loss(jnp), argnums=0)(X, v)), rtol=1e-12, atol=1e-12)
    gv = np.asarray(qb.grad(loss(qb), argnums=1)(X, v))
    if c == "multiply":
        # JAX raises for non-unique indices; check against finite differences.
        fd = _fd_grad(lambda vv: float(np.asarray(loss(qb)(qb.array(X), qb.array(vv)))), v)
        np.testing.assert_allclose(gv, fd, rtol=1e-6, atol=1e-8)
    else:
        np.testing.assert_allclose(gv, np.asarray(jax.grad(loss(jnp), argnums=1)(X, v)), rtol=1e-12, atol=1e-12)
    # Forward mode agrees with reverse mode (the dot-product identity).
    tx, tv = RNG.standard_normal(X.shape), RNG.standard_normal(v.shape)
    _, jv = qb.jvp(loss(qb), (X, v), (tx, tv))
    np.testing.assert_allclose(float(np.asarray(jv)), float(np.sum(np.asarray(gx) * tx) + np.sum(gv * tv)), rtol=1e-10)



@pytest.mark.parametrize("key", [2, -1, np.array([3, 0, 3]), np.array([[1, 4], [9, -2]])])
@pytest.mark.parametrize("c", ["set", "add"])
def test_row_updates_differentiate_operand_and_values_together(key, c):
    # Whole-row updates with both x and the values traced, jitted and not: a key of one
    # index array or int on the first axis (duplicates, negative and out-of-range rows).
    rng = np.random.default_rng(21)
    x = rng.normal(size=(5, 3))
    v = rng.normal(size=np.shape(jnp.asarray(x)[key]))
    q = lambda a, w: qb.sum(qb.sin(getattr(a.at[key], c)(w)))  # noqa: E731
    j = lambda a, w: jnp.sum(jnp.sin(getattr(a.at[key], c)(w)))  # noqa: E731
    want = jax.grad(j, argnums=(0, 1))(x, v)
    for g in (qb.grad(q, argnums=(0, 1))(x, v), qb.jit(qb.grad(q, argnums=(0, 1)))(x, v)):
        for a, b in zip(g, want):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-12)

@pytest.mark.parametrize("c", ["set", "add", "min", "max"])
def test_second_order_matches_jax(c):
    key = (IDX,)

    def loss(m):
        return lambda x, v: m.sum(getattr(m.array(x).at[key], c)(v) ** 3)

    hx = qb.grad(lambda x: qb.sum(qb.grad(loss(qb))(x, V) ** 2))(X)
    jx = jax.grad(lambda x: jnp.sum(jax.grad(loss(jnp))(x, V) ** 2))(X)
    np.testing.assert_allclose(np.asarray(hx), np.asarray(jx), rtol=1e-12, atol=1e-12)
    hv = qb.grad(lambda v: qb.sum(qb.grad(loss(qb), argnums=1)(X, v) ** 2))(V)
    jv = jax.grad(lambda v: jnp.sum(jax.grad(loss(jnp), argnums=1)(X, v) ** 2))(V)
    np.testing.assert_allclose(np.asarray(hv), np.asarray(jv), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("c", COMBINERS)
def test_vmap_matches_loop(c):
    xs = RNG.standard_normal((3, 5, 4))
    idx = np.array([[1, 1, 7], [0, -1, 4], [2, 2, 2]])
    vs = RNG.standard_normal((3, 3, 4))

    def f(m):
        return lambda x, i, v: getattr(m.array(x).at[i], c)(v)

    # Everything batched (per-example indices), then only the operand and values.
    got = np.asarray(qb.vmap(f(qb))(xs, idx, vs))
    want = np.stack([_ref(xs[b], idx[b], vs[b], c) for b in range(3)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    got = np.asarray(qb.vmap(f(qb), in_axes=(0, None, 0))(xs, idx[0], vs))
    want = np.stack([_ref(xs[b], idx[0], vs[b], c) for b in range(3)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    got = np.asarray(qb.vmap(f(qb), in_axes=(None, 0, None))(xs[0], idx, vs[0]))
    want = np.stack([_ref(xs[0], idx[b], vs[0], c) for b in range(3)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    # vmap of grad against JAX (multiply: wrt the operand only).
    loss = lambda m: (lambda x, i, v: m.sum(m.sin(getattr(m.array(x).at[i], c)(v))))  # noqa: E731
    g = qb.vmap(qb.grad(loss(qb)))(xs, idx, vs)
    w = jax.vmap(jax.grad(loss(jnp)))(xs, idx, vs)
    np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12, atol=1e-12)


def test_errors():
    x = qb.array(X)
    with pytest.raises(ValueError, match="mode"):
        x.at[IDX].add(1.0, mode="wrap")
    with pytest.raises(qb.ShapeError):
        x.at[IDX].set(np.ones((2, 2)))
    # Values that do not fit the indexed shape name the update, on every path.
    with pytest.raises(qb.ShapeError, match=r"at\[\]\.set: values of shape \(3,\) do not broadcast to the indexed shape \(5,\)"):
        x.at[:, 1].set(np.ones(3))
    with pytest.raises(qb.ShapeError, match=r"at\[\]\.add: .* \(5, 2\)"):
        x.at[:, np.array([0, 1])].add(np.ones(3))
    # An out-of-bounds int drops the update (clip clamps it), as JAX's scatter; not an error.
    np.testing.assert_array_equal(np.asarray(x.at[7, 1].set(1.0)), X)
    np.testing.assert_array_equal(np.asarray(x.at[7, 1].set(1.0, mode="clip")), np.asarray(jnp.asarray(X).at[7, 1].set(1.0, mode="clip")))


# Keys without index arrays update a box (quabla._indexing._box_update): static and stepped
# slices (negative steps too), ints, None, ..., and 0-d indices, traced or not.
BOX_X = RNG.standard_normal((6, 5, 4))
BOX_KEYS = [
    (slice(None), 3),
    (3,),
    (slice(1, 4),),
    (slice(None, None, 2),),
    (slice(None, None, -2), slice(1, None, 3)),
    (Ellipsis, 0),
    (None, 2, slice(1, 3)),
    (slice(4, 1, -1), -1, None),
    (slice(5, 5),),
    (1, slice(None), slice(0, 4, 3)),
    (Ellipsis,),
]


@pytest.mark.parametrize("c", COMBINERS)
@pytest.mark.parametrize("k", range(len(BOX_KEYS)))
def test_box_updates_match_jax(c, k):
    key = BOX_KEYS[k]
    ref_view = np.asarray(jnp.asarray(BOX_X)[key])
    # Values of the view's shape (distinct) and a broadcast scalar.
    # (Arrays have no zero extents: an empty view takes the scalar only.)
    values = [1.5] if ref_view.size == 0 else [np.arange(ref_view.size, dtype=np.float64).reshape(ref_view.shape) % 7 - 3.0, 1.5]
    for v in values:
        want = _ref(BOX_X, key, v, c)
        np.testing.assert_allclose(np.asarray(getattr(qb.array(BOX_X).at[key], c)(v)), want, rtol=0, atol=0)
        got = qb.jit(lambda x, v: getattr(x.at[key], c)(v))(BOX_X, np.asarray(v))
        np.testing.assert_allclose(np.asarray(got), want, rtol=0, atol=0)


@pytest.mark.parametrize("mode", [None, "drop", "clip", "promise_in_bounds"])
@pytest.mark.parametrize("i", [-7, -6, -1, 0, 5, 6, 100])
def test_traced_scalar_index_boxes(mode, i):
    """A traced (or 0-d array) index: wrapped once from the end, an out-of-bounds box left as
    it was (clamped with "clip"), as JAX's scatter."""
    if mode == "promise_in_bounds" and not -5 <= i < 5:
        return  # JAX leaves the result unspecified
    x = BOX_X[:, :, 0]
    for f in (lambda x, i: x.at[:, i].add(2.0, mode=mode), lambda x, i: x.at[i, 1:3].set(9.0, mode=mode), lambda x, i: x.at[i, ::2].max(0.5, mode=mode)):
        want = np.asarray(jax.jit(f)(jnp.asarray(x), np.int64(i)))
        np.testing.assert_array_equal(np.asarray(qb.jit(f)(x, np.int64(i))), want)
        np.testing.assert_array_equal(np.asarray(f(qb.array(x), qb.array(np.int32(i)))), want)


def test_box_update_gradients_match_jax():
    f = lambda np_: lambda x, v: (x.at[::2, 1].set(v * x[1::2, 2]) ** 2).sum() + (x.at[1:, ::-2].add(x[:-1, ::2] * v[0]) ** 3).sum()
    x, v = BOX_X[:, :, 0], RNG.standard_normal(3)
    for a in (0, 1):
        got = qb.grad(f(qb), argnums=a)(x, v)
        want = jax.grad(f(jnp), argnums=a)(jnp.asarray(x), jnp.asarray(v))
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12, atol=1e-12)


# Index arrays mixed with slices, ints and None: positions computed from the indices
# (quabla._indexing._flat_positions), placed as NumPy places advanced indices.
MIXED_X = RNG.standard_normal((5, 6, 7))
I5 = np.array([0, 2, 4, -1, 9])
J21 = np.array([[1], [3]], np.int32)
MIXED_KEYS = [(slice(None), I5), (I5, I5), (slice(None), I5, J21), (I5, slice(1, 5, 2), J21), (1, I5), (I5, slice(None), 2), (slice(None), J21, None, I5), (None, I5, J21), (Ellipsis, I5), (J21, slice(None, None, -1)), (slice(None), 2, I5)]


@pytest.mark.parametrize("mode", [None, "clip", "fill"])
@pytest.mark.parametrize("k", range(len(MIXED_KEYS)))
def test_mixed_index_arrays_match_jax(mode, k):
    key = MIXED_KEYS[k]
    xj = jnp.asarray(MIXED_X)
    want = np.asarray(xj.at[key].get(mode=mode))
    np.testing.assert_array_equal(np.asarray(qb.jit(lambda x: x.at[key].get(mode=mode))(MIXED_X)), want)
    np.testing.assert_array_equal(np.asarray(qb.array(MIXED_X).at[key].get(mode=mode)), want)
    for c in ("add", "min"):
        v = np.arange(want.size, dtype=np.float64).reshape(want.shape) % 5 + 1.0
        got = qb.jit(lambda x, v: getattr(x.at[key], c)(v, mode=mode))(MIXED_X, v)
        np.testing.assert_allclose(np.asarray(got), np.asarray(getattr(xj.at[key], c)(v, mode=mode)), rtol=1e-15, atol=0)
