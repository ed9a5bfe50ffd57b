"""The selections with a static size (nonzero, argwhere, flatnonzero, one-argument where,
unique and its array-API forms, the set operations, lexsort), jnp.take's modes and the jax.nn
additions (dot_product_attention, glu, mish, ...) against jax.numpy / jax.nn in x64: eagerly,
under jit, gradients, vmap, typed errors."""

import numpy as np
import pytest

import quabla as qb
from breadth_util import assert_close

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402

RNG = np.random.default_rng(11)
X = np.array([[0, 1, 3], [2, 0, 0]])
V = np.array([3.0, 1.0, 1.0, np.nan, np.nan, 2.0])
M = np.array([[3, 1], [1, 2], [3, 1], [0, 5]])
A, B = np.array([5, 1, 3, 3, 7, 1]), np.array([3, 8, 1, 9])

CASES = [
    ("nonzero", lambda q: q.nonzero(q.array(X)), lambda: jnp.nonzero(X)),
    ("nonzero-size-fill", lambda q: q.nonzero(q.array(X), size=5, fill_value=(7, 8)), lambda: jnp.nonzero(X, size=5, fill_value=(7, 8))),
    ("nonzero-truncated", lambda q: q.nonzero(q.array(X), size=2), lambda: jnp.nonzero(X, size=2)),
    ("where-1arg", lambda q: q.where(q.array(X), size=4), lambda: jnp.where(X, size=4)),
    ("argwhere", lambda q: q.argwhere(q.array(X)), lambda: jnp.argwhere(X)),
    ("argwhere-size", lambda q: q.argwhere(q.array(X), size=4, fill_value=-1), lambda: jnp.argwhere(X, size=4, fill_value=-1)),
    ("flatnonzero", lambda q: q.flatnonzero(q.array(X)), lambda: jnp.flatnonzero(X)),
    ("unique", lambda q: q.unique(q.array(V), True, True, True), lambda: jnp.unique(V, True, True, True)),
    ("unique-size", lambda q: q.unique(q.array(V), True, True, True, size=6), lambda: jnp.unique(V, True, True, True, size=6)),
    ("unique-size-fill", lambda q: q.unique(q.array(V), True, True, True, size=6, fill_value=-1.0), lambda: jnp.unique(V, True, True, True, size=6, fill_value=-1.0)),
    ("unique-truncated", lambda q: q.unique(q.array(V), True, True, True, size=2), lambda: jnp.unique(V, True, True, True, size=2)),
    ("unique-nan-distinct", lambda q: q.unique(q.array(V), return_counts=True, equal_nan=False), lambda: jnp.unique(V, return_counts=True, equal_nan=False)),
    ("unique-axis0", lambda q: q.unique(q.array(M), True, True, True, axis=0), lambda: jnp.unique(M, True, True, True, axis=0)),
    ("unique-axis1", lambda q: q.unique(q.array(M), True, True, True, axis=1), lambda: jnp.unique(M, True, True, True, axis=1)),
    ("unique-2d-inverse", lambda q: q.unique(q.array(M), return_inverse=True), lambda: jnp.unique(M, return_inverse=True)),
    ("unique_all", lambda q: tuple(q.unique_all(q.array(M))), lambda: tuple(jnp.unique_all(M))),
    ("unique_counts", lambda q: tuple(q.unique_counts(q.array(M))), lambda: tuple(jnp.unique_counts(M))),
    ("unique_inverse", lambda q: tuple(q.unique_inverse(q.array(M))), lambda: tuple(jnp.unique_inverse(M))),
    ("unique_values", lambda q: q.unique_values(q.array(M), size=6, fill_value=9), lambda: jnp.unique_values(M, size=6, fill_value=9)),
    ("isin", lambda q: q.isin(q.array(M), q.array(B)), lambda: jnp.isin(M, B)),
    ("isin-search-invert", lambda q: q.isin(q.array(A), q.array(B), invert=True, method="binary_search"), lambda: jnp.isin(A, B, invert=True)),
    ("union1d", lambda q: q.union1d(q.array(A), q.array(B)), lambda: jnp.union1d(A, B)),
    ("union1d-size", lambda q: q.union1d(q.array(A), q.array(B), size=9), lambda: jnp.union1d(A, B, size=9)),
    ("intersect1d", lambda q: q.intersect1d(q.array(A), q.array(B), return_indices=True), lambda: jnp.intersect1d(A, B, return_indices=True)),
    ("intersect1d-size", lambda q: q.intersect1d(q.array(A), q.array(B), return_indices=True, size=4), lambda: jnp.intersect1d(A, B, return_indices=True, size=4)),
    ("intersect1d-fill", lambda q: q.intersect1d(q.array(A), q.array(B), size=4, fill_value=-3), lambda: jnp.intersect1d(A, B, size=4, fill_value=-3)),
    ("setdiff1d", lambda q: q.setdiff1d(q.array(A), q.array(B)), lambda: jnp.setdiff1d(A, B)),
    ("setdiff1d-size", lambda q: q.setdiff1d(q.array(A), q.array(B), size=5), lambda: jnp.setdiff1d(A, B, size=5)),
    ("setdiff1d-unique", lambda q: q.setdiff1d(q.array([5, 2, 9]), q.array(B), assume_unique=True), lambda: jnp.setdiff1d(np.array([5, 2, 9]), B, assume_unique=True)),
    ("setxor1d", lambda q: q.setxor1d(q.array(A), q.array(B)), lambda: jnp.setxor1d(A, B)),
    ("setxor1d-size", lambda q: q.setxor1d(q.array(A), q.array(B), size=8), lambda: jnp.setxor1d(A, B, size=8)),
    ("lexsort", lambda q: q.lexsort([q.array(X), q.array(X[::-1] % 2)]), lambda: jnp.lexsort([X, X[::-1] % 2])),
    ("lexsort-axis0", lambda q: q.lexsort([q.array(X), q.array(X[::-1] % 2)], axis=0), lambda: jnp.lexsort([X, X[::-1] % 2], axis=0)),
    ("lexsort-array", lambda q: q.lexsort(q.array(M.T)), lambda: jnp.lexsort(M.T)),
]


@pytest.mark.parametrize("name,f,j", CASES, ids=[c[0] for c in CASES])
def test_against_jax(name, f, j):
    assert_close(f(qb), j(), what=name)


def test_sized_forms_under_jit_and_vmap():
    x = RNG.integers(0, 4, size=(3, 10))
    f = qb.jit(lambda a: qb.nonzero(a, size=7, fill_value=-1)[0])
    assert_close(f(qb.array(x[0])), jnp.nonzero(x[0], size=7, fill_value=-1)[0])
    g = qb.jit(lambda a: qb.unique(a, return_inverse=True, return_counts=True, size=5, fill_value=-1))
    assert_close(g(qb.array(x[1])), jnp.unique(x[1], return_inverse=True, return_counts=True, size=5, fill_value=-1))
    h = lambda a: qb.unique(a, return_counts=True, size=5, fill_value=-1)  # noqa: E731
    want = jax.vmap(lambda a: jnp.unique(a, return_counts=True, size=5, fill_value=-1))(x)
    assert_close(qb.vmap(h)(qb.array(x)), want)
    s = qb.jit(lambda a, b: qb.setxor1d(a, b, size=6))
    assert_close(s(qb.array(x[0]), qb.array(x[2] + 2)), jnp.setxor1d(x[0], x[2] + 2, size=6))
    assert_close(qb.vmap(lambda a: qb.argwhere(a, size=12))(qb.array(x)), jax.vmap(lambda a: jnp.argwhere(a, size=12))(x))


def test_unique_values_are_differentiable():
    # The values come from a gather: the gradient goes to each unique value's first
    # occurrence... as JAX's (a gather's transpose scatters to the taken positions).
    x = np.array([2.0, 1.0, 2.0, 3.0])
    got = qb.grad(lambda a: (qb.unique(a, size=3) ** 2).sum())(qb.array(x))
    want = jax.grad(lambda a: (jnp.unique(a, size=3) ** 2).sum())(x)
    assert_close(got, want)


def test_data_dependent_sizes_need_size_under_jit():
    with pytest.raises(qb.TracerError, match="nonzero: size=None"):
        qb.jit(qb.nonzero)(qb.array(X))
    with pytest.raises(qb.TracerError, match="unique: size=None"):
        qb.jit(qb.unique)(qb.array(V))
    with pytest.raises(qb.TracerError, match="setdiff1d: size=None"):
        qb.jit(qb.setdiff1d)(qb.array(A), qb.array(B))


def test_errors():
    with pytest.raises(qb.ShapeError, match="nothing selected"):
        qb.nonzero(qb.zeros(3))
    with pytest.raises(qb.ShapeError, match="0-d"):
        qb.nonzero(qb.array(1.0))
    with pytest.raises(qb.ShapeError, match="size must be positive"):
        qb.unique(qb.array([1, 2]), size=0)
    with pytest.raises(qb.ShapeError, match="fill_value has 1 entries for an array of rank 2"):
        qb.nonzero(qb.array(X), size=3, fill_value=(1,))
    with pytest.raises(qb.ShapeError, match=r"key 1 has shape \(3,\)"):
        qb.lexsort([qb.array([1, 2]), qb.array([1, 2, 3])])
    with pytest.raises(qb.InvalidArgumentError, match="isin: method"):
        qb.isin(qb.array([1]), qb.array([1]), method="hash")
    with pytest.raises(qb.ArgumentTypeError, match="where: pass both x and y"):
        qb.where(qb.array([True]), 1.0)
    with pytest.raises(qb.ArgumentTypeError, match="one-argument form"):
        qb.where(qb.array([True]), 1.0, 2.0, size=3)


TAKE = [(dict(axis=1), np.array([[0, 5], [-1, 2]])), (dict(axis=1, mode="clip"), np.array([[0, 5], [-1, -7]])),
        (dict(axis=0, mode="wrap"), np.array([4, -5, 2])), (dict(axis=None), np.array([0, 13, -1])),
        (dict(axis=None, fill_value=7.0), np.array([0, 13, -13]))]


@pytest.mark.parametrize("kw,idx", TAKE, ids=[str(t[0]) for t in TAKE])
def test_take_modes(kw, idx):
    x = np.arange(12.0).reshape(3, 4)
    want = jnp.take(x, idx, **kw)
    assert_close(qb.take(qb.array(x), idx, **kw), want)
    assert_close(qb.jit(lambda a, i: qb.take(a, i, **kw))(qb.array(x), qb.array(idx)), want)
    got = qb.grad(lambda a: qb.where(qb.isnan(t := qb.take(a, idx, **kw)), 0.0, t).sum())(qb.array(x))
    assert_close(got, jax.grad(lambda a: jnp.where(jnp.isnan(t := jnp.take(a, idx, **kw)), 0.0, t).sum())(x))


def test_take_fill_values_by_dtype():
    for x in (np.arange(3, dtype=np.uint32), np.arange(3, dtype=np.int32), np.array([True, False])):
        assert_close(qb.take(qb.array(x), np.array([5, 1])), jnp.take(x, np.array([5, 1])))
    with pytest.raises(qb.InvalidIndexError, match="take: index out of range"):
        qb.take(qb.ones(3), [3], mode="raise")
    with pytest.raises(qb.UnsupportedOperationError, match="take: mode"):
        qb.take(qb.ones(3), [1], mode="promise")


NN = ["identity", "tanh", "glu", "mish", "squareplus", "sparse_plus", "sparse_sigmoid", "logmeanexp"]


@pytest.mark.parametrize("name", NN)
def test_nn_functions(name):
    x = RNG.normal(size=(3, 6)) * 2
    f, j = getattr(qb.nn, name), getattr(jax.nn, name)
    assert_close(f(qb.array(x)), j(x), 1e-12, 1e-12)
    assert_close(qb.jit(f)(qb.array(x)), j(x), 1e-12, 1e-12)
    assert_close(qb.grad(lambda a: f(a).sum())(qb.array(x)), jax.grad(lambda a: j(a).sum())(x), 1e-10, 1e-10)
    x32 = x.astype(np.float32)
    assert f(qb.array(x32)).dtype == qb.float32


def test_log1mexp_and_logmeanexp():
    x = np.concatenate([np.geomspace(1e-8, 0.69, 5), np.geomspace(0.7, 40.0, 5)])
    assert_close(qb.nn.log1mexp(qb.array(x)), jax.nn.log1mexp(x), 1e-14, 0)
    assert_close(qb.grad(lambda a: qb.nn.log1mexp(a).sum())(qb.array(x)), jax.grad(lambda a: jax.nn.log1mexp(a).sum())(x), 1e-12, 0)
    y = RNG.normal(size=(3, 6))
    w = y > -0.5
    assert_close(qb.nn.logmeanexp(qb.array(y), axis=1, where=qb.array(w), keepdims=True), jax.nn.logmeanexp(y, axis=1, where=w, keepdims=True))
    with pytest.raises(qb.ShapeError, match="odd length 5"):
        qb.nn.glu(qb.ones((2, 5)))


ATTN = [{}, {"bias": True}, {"mask": True}, {"is_causal": True}, {"local_window_size": (2, 1)}, {"local_window_size": 1},
        {"scale": 0.3, "is_causal": True, "bias": True},
        {"query_seq_lengths": np.array([3, 5], np.int32), "key_value_seq_lengths": np.array([7, 4], np.int32)}]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("kw", ATTN, ids=[str(sorted(a)) for a in ATTN])
def test_dot_product_attention(kw, dt):
    Bs, T, S, N, K, H = 2, 5, 7, 4, 2, 8
    q, k, v = (RNG.normal(size=s).astype(dt) for s in [(Bs, T, N, H), (Bs, S, K, H), (Bs, S, K, H)])
    kw = dict(kw)
    if kw.get("bias") is True:
        kw["bias"] = RNG.normal(size=(Bs, 1, T, S)).astype(dt)
    if kw.get("mask") is True:
        kw["mask"] = RNG.uniform(size=(Bs, N, T, S)) > 0.2
    tol = 2e-6 if dt == np.float32 else 1e-6  # the softmax runs in float32 for both, as JAX's
    kq = {a: qb.array(b) if isinstance(b, np.ndarray) else b for a, b in kw.items()}
    want = jax.nn.dot_product_attention(q, k, v, **kw)
    got = qb.nn.dot_product_attention(qb.array(q), qb.array(k), qb.array(v), **kq)
    assert got.dtype == qb.dtype(dt)
    assert_close(got, want, tol, tol)
    f = qb.jit(lambda a, b, c: (qb.nn.dot_product_attention(a, b, c, **kq) ** 2).sum())
    g = qb.grad(f, argnums=(0, 1, 2))(qb.array(q), qb.array(k), qb.array(v))
    gj = jax.grad(lambda a, b, c: (jax.nn.dot_product_attention(a, b, c, **kw) ** 2).sum(), argnums=(0, 1, 2))(q, k, v)
    assert_close(g, gj, 50 * tol, 50 * tol)


def test_dot_product_attention_residual_rank3_and_errors():
    q = RNG.normal(size=(5, 4, 8))
    k = RNG.normal(size=(6, 2, 8))
    o, r = qb.nn.dot_product_attention(qb.array(q), qb.array(k), qb.array(k), return_residual=True)
    oj, rj = jax.nn.dot_product_attention(q, k, k, return_residual=True)
    assert_close((o, r), (oj, rj), 1e-6, 1e-6)
    with pytest.raises(qb.ShapeError, match="multiple of key/value heads"):
        qb.nn.dot_product_attention(qb.ones((1, 2, 3, 4)), qb.ones((1, 2, 2, 4)), qb.ones((1, 2, 2, 4)))
    with pytest.raises(qb.DTypeError, match="mask must be bool"):
        qb.nn.dot_product_attention(qb.ones((1, 2, 2, 4)), qb.ones((1, 2, 2, 4)), qb.ones((1, 2, 2, 4)), mask=qb.ones((1, 1, 2, 2)))
    with pytest.raises(qb.UnsupportedOperationError, match="cudnn"):
        qb.nn.dot_product_attention(qb.ones((1, 2, 2, 4)), qb.ones((1, 2, 2, 4)), qb.ones((1, 2, 2, 4)), implementation="cudnn")
