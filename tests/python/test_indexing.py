"""Advanced and mixed indexing, .at[].get and take_along_axis against JAX 0.10.2 (x64) and
NumPy: several integer arrays, ints, slices, None, negative and out-of-bounds indices
(clamped, as JAX's gathers; mode="fill"), traced indices under jit and vmap, gradients."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import quabla as qb

jax.config.update("jax_enable_x64", True)

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 5, 6))
I2 = np.array([[0, 3], [1, -1]])
KEYS = [
    (np.array([0, 2, -1]),),
    (slice(None), np.array([4, 0, 0])),
    (np.array([0, 3]), slice(1, 4), np.array([5, -6])),
    (np.array([1, 0]), np.array([2, 2]), np.array([0, 5])),
    (I2, slice(None), 1),
    (slice(None), I2, None),
    (np.array([0, 3]), None, slice(None), np.array([1, 2])),
    (Ellipsis, np.array([1, 2])),
    (2, np.array([[1], [3]]), slice(None, None, -2)),
    (np.array([7, -9, 2]),),  # out of bounds: clamped (after one wrap)
    (slice(None), np.array([5, 11]), np.array([-7, 0])),
]


@pytest.mark.parametrize("key", KEYS, ids=[str(i) for i in range(len(KEYS))])
def test_getitem_matches_jax(key):
    got = np.asarray(qb.array(X)[key])
    want = np.asarray(jnp.asarray(X)[key])
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=0)


@pytest.mark.parametrize("key", KEYS[:9], ids=[str(i) for i in range(9)])
def test_getitem_in_bounds_matches_numpy(key):
    np.testing.assert_array_equal(np.asarray(qb.array(X)[key]), X[key])


def test_fill_mode():
    i = np.array([1, 6, -1, -7])
    got = np.asarray(qb.array(X).at[:, i].get(mode="fill"))
    want = np.asarray(jnp.asarray(X).at[:, i].get(mode="fill"))
    np.testing.assert_array_equal(got, want)
    got = np.asarray(qb.array(np.arange(5)).at[np.array([2, 9])].get(mode="fill"))
    np.testing.assert_array_equal(got, np.asarray(jnp.arange(5).at[jnp.array([2, 9])].get(mode="fill")))
    got = np.asarray(qb.array(X).at[np.array([0, 9])].get(mode="fill", fill_value=-3.0))
    np.testing.assert_array_equal(got, np.asarray(jnp.asarray(X).at[jnp.array([0, 9])].get(mode="fill", fill_value=-3.0)))


def test_traced_indices_under_jit():
    f = qb.jit(lambda x, i, j: x[i, :, j])
    g = jax.jit(lambda x, i, j: x[i, :, j])
    i, j = np.array([0, 3, -1]), np.array([[5], [2]])
    np.testing.assert_allclose(np.asarray(f(X, i, j)), np.asarray(g(X, i, j)), rtol=0, atol=0)
    h = qb.jit(lambda x, k: x[k])
    np.testing.assert_array_equal(np.asarray(h(X, np.int64(2))), X[2])
    np.testing.assert_array_equal(np.asarray(h(X, np.int64(9))), np.asarray(jnp.asarray(X)[9]))


def test_vmap_of_traced_index():
    xs, ks = RNG.standard_normal((3, 7)), np.array([0, 6, 2])
    got = qb.vmap(lambda x, i: x[i])(xs, ks)
    np.testing.assert_array_equal(np.asarray(got), xs[np.arange(3), ks])
    got = qb.vmap(lambda i: qb.array(X)[:, i], in_axes=0)(np.array([[1, 2], [4, 0]]))
    want = jax.vmap(lambda i: jnp.asarray(X)[:, i])(jnp.array([[1, 2], [4, 0]]))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_grad_of_advanced_indexing_matches_jax():
    i, j = np.array([0, 3, 3, -1]), np.array([5, 0, 0, 2])

    def f(m):
        return lambda x: m.sum(m.sin(x[i, 1:4, j]) ** 2)

    g = qb.grad(f(qb))(X)
    w = jax.grad(f(jnp))(X)
    np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12, atol=1e-12)
    gg = qb.grad(lambda x: qb.sum(qb.grad(f(qb))(x) * x))(X)
    ww = jax.grad(lambda x: jnp.sum(jax.grad(f(jnp))(x) * x))(X)
    np.testing.assert_allclose(np.asarray(gg), np.asarray(ww), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, None])
def test_take_along_axis(axis):
    a = X
    if axis is None:
        idx = np.array([3, 0, 119, 200, -1])
    else:
        shape = list(a.shape)
        shape[axis] = 3
        idx = RNG.integers(-7, 8, size=shape)
    got = np.asarray(qb.take_along_axis(a, idx, axis=axis))
    want = np.asarray(jnp.take_along_axis(jnp.asarray(a), jnp.asarray(idx), axis=axis))
    np.testing.assert_array_equal(got, want)
    got = np.asarray(qb.take_along_axis(a, idx, axis=axis, mode="clip"))
    want = np.asarray(jnp.take_along_axis(jnp.asarray(a), jnp.asarray(idx), axis=axis, mode="clip"))
    np.testing.assert_array_equal(got, want)


def test_take_along_axis_broadcasts_and_differentiates():
    a = RNG.standard_normal((4, 6))
    idx = np.array([[1, 5]])
    np.testing.assert_array_equal(np.asarray(qb.take_along_axis(a, idx, axis=1)), np.asarray(jnp.take_along_axis(a, idx, axis=1)))
    lab = np.array([[0], [5], [5], [2]])
    g = qb.grad(lambda z: qb.sum(qb.take_along_axis(z - qb.logsumexp(z, axis=1, keepdims=True), lab, axis=1)))(a)
    w = jax.grad(lambda z: jnp.sum(jnp.take_along_axis(z - jax.scipy.special.logsumexp(z, axis=1, keepdims=True), lab, axis=1)))(a)
    np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12, atol=1e-12)


MASKS = [
    lambda a: a[a > 0.5],
    lambda a: a[:, np.array([True, False, True, True, False])],
    lambda a: a[..., np.array([True, False, True, False, False, True])],
    lambda a: a[abs(a[:, :, 0]) > 0.4],
    lambda a: a[True],
    lambda a: a[1, [True, False, False, True, True]],
    lambda a: a[np.array([True, False, True, True]), 1:, np.array([2, 3, 3])],
    lambda a: a.at[a > 0.5].set(0.0),
    lambda a: a.at[:, np.array([True, False, True, False, True])].add(1.0),
    lambda a: a.at[a < 0].get(),
]


@pytest.mark.parametrize("k", range(len(MASKS)))
def test_concrete_boolean_masks_as_jax(k):
    # Eagerly a concrete mask selects its True positions (as NumPy and JAX), gathers and
    # scatters alike.
    f = MASKS[k]
    np.testing.assert_array_equal(np.asarray(f(qb.array(X))), np.asarray(f(jnp.asarray(X))))


def test_errors():
    x = qb.array(X)
    with pytest.raises(qb.errors.InvalidIndexError, match="boolean index at position 0 has shape"):
        x[np.array([True, False, True, True, False])]
    with pytest.raises(qb.ShapeError, match="selects no element"):
        x[x > 100]
    with pytest.raises(qb.errors.NonConcreteBooleanIndexError, match="traced"):
        qb.jit(lambda z: z[z > 0])(x)
    with pytest.raises(IndexError):  # JAX's class is an IndexError too
        qb.jit(lambda z: z.at[z > 0].set(0.0))(x)
    # An out-of-bounds int is clamped (after one wrap), as JAX's gather; not an error.
    np.testing.assert_array_equal(np.asarray(x[np.array([0]), 9]), np.asarray(jnp.asarray(X)[np.array([0]), 9]))
    with pytest.raises(qb.DTypeError, match="integers"):
        x[qb.array([0.5])]
    with pytest.raises(ValueError, match="mode"):
        x.at[np.array([0])].get(mode="wrap")


def test_at_with_slices_only_matches_jax():
    # A key of basic slices alone (`x.at[::2]`, `x.at[:, 1:3]`, reversed and strided) in
    # every .at[] form, eager, jitted and differentiated: it raised a bare ValueError (the
    # gather behind the flat positions had no array index to broadcast).
    X = np.random.default_rng(21).standard_normal((8, 6)).astype(np.float32)
    V = np.arange(8, dtype=np.float32).reshape(4, 2)
    forms = [lambda x: x.at[::2].set(0.0), lambda x: x.at[:, 1:3].add(5.0), lambda x: x.at[::-1, ::2].multiply(2.0),
             lambda x: x.at[2:6, 1:3].set(V), lambda x: x.at[::2].get(), lambda x: x.at[1:].max(0.5), lambda x: x.at[:, ::3].min(-0.25)]
    for k, fn in enumerate(forms):
        want = np.asarray(fn(jnp.asarray(X)))
        np.testing.assert_array_equal(np.asarray(fn(qb.array(X))), want, err_msg=str(k))
        np.testing.assert_array_equal(np.asarray(qb.jit(fn)(X)), want, err_msg=str(k))
    loss = lambda x: (x.at[::2].set(0.0) ** 2).sum() + (x.at[:, 1:3].add(1.0) ** 3).sum()  # noqa: E731
    np.testing.assert_allclose(np.asarray(qb.grad(loss)(X)), np.asarray(jax.grad(loss)(X)), rtol=1e-6)


SLICES = [slice(None), slice(None, -1), slice(1, None), slice(None, None, 2), slice(1, None, 3), slice(None, None, -1), slice(2, 4)]


@pytest.mark.parametrize("a", range(len(SLICES)))
def test_slice_combinations_compile_and_match_numpy(a):
    """Every pair of slice kinds on a 2-D array (and the pair around a middle dim of a 3-D one),
    jitted, with the gradient: a dim read from 0 with step 1 but shortened (`x[:-1, ::2]`)
    beside a stepped one was a generic whose loop took the operand's extent (a compile error)."""
    x2 = np.arange(42.0).reshape(6, 7)
    x3 = np.arange(210.0).reshape(6, 5, 7)
    for b in SLICES:
        key = (SLICES[a], b)
        np.testing.assert_array_equal(np.asarray(qb.jit(lambda x: x[key])(x2)), x2[key])
        np.testing.assert_array_equal(np.asarray(qb.jit(lambda x: x[key[0], 1:, key[1]] * 2)(x3)), x3[key[0], 1:, key[1]] * 2)
        g = np.zeros_like(x2)
        g[key] = 2 * x2[key]
        np.testing.assert_array_equal(np.asarray(qb.jit(qb.grad(lambda x: (x[key] ** 2).sum()))(x2)), g)


def test_slices_of_gathers_match_numpy():
    """A slice of a gather by a 1-D index is the gather of the operand's slice by the index's
    slice (fold.rs sunk_slice): flips and index arrays cropped, stepped and reversed, with the
    gradient."""
    x = np.arange(6 * 7 * 8 * 3, dtype=np.float64).reshape(6, 7, 8, 3)
    idx = np.array([3, 1, 1, 5])
    cases = [
        (lambda x: qb.flip(x, 2)[:, 1:5, 2:7, :], lambda x: np.flip(x, 2)[:, 1:5, 2:7, :]),
        (lambda x: qb.flip(x, 2)[:, ::2, 1:8:3, 1:], lambda x: np.flip(x, 2)[:, ::2, 1:8:3, 1:]),
        (lambda x: x[:, idx][1:4, 1:3], lambda x: x[:, idx][1:4, 1:3]),
        (lambda x: qb.flip(x, (1, 2))[::-1, 2:6, :3], lambda x: np.flip(x, (1, 2))[::-1, 2:6, :3]),
    ]
    for fq, fn in cases:
        np.testing.assert_array_equal(np.asarray(qb.jit(fq)(x)), fn(x))
        g = np.asarray(qb.jit(qb.grad(lambda x: (fq(x) ** 2).sum()))(x))
        want = np.zeros_like(x)
        for k in np.ndindex(*x.shape):
            e = np.zeros_like(x)
            e[k] = 1.0
            want[k] = 2 * (fn(x) * fn(e)).sum()
        np.testing.assert_allclose(g, want, rtol=1e-12, atol=0)


def test_ragged_index_lists_are_invalid_index_errors():
    x = qb.ones((3, 4))
    for use in (lambda k: x[k], lambda k: x.at[k].set(1.0), lambda k: x.at[k].get()):
        with pytest.raises(qb.errors.InvalidIndexError, match="rectangular"):
            use([[1, 2], [3]])
