"""``qb.pure_callback`` and ``qb.experimental.io_callback`` against JAX 0.10.2 (x64): eagerly,
under jit, in loops (scan), under vmap with each vmap_method (nested vmaps, unmapped
arguments), several results, keyword arguments; the errors (a raising callback, wrong result
shapes, differentiation) reach the caller typed. (The interpreter's side: the unit tests of
interp/src/callback.rs.)"""

import numpy as np
import pytest
import scipy.special as sp

import quabla as qb
from quabla.errors import ArgumentTypeError, InvalidArgumentError, UnsupportedOperationError

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")

X = np.linspace(0.1, 2.0, 5)
M = np.arange(6.0).reshape(2, 3) / 4


def both(fn):
    got, want = fn(qb), fn(jax)
    got, want = qb.tree.leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=1e-13)


def gamma(L):
    return lambda v: L.pure_callback(sp.gamma, L.ShapeDtypeStruct(v.shape, v.dtype), v)


CASES = {
    "eager": lambda L: gamma(L)(X),
    "jit": lambda L: L.jit(gamma(L))(X),
    "jit_f32": lambda L: L.jit(gamma(L))(X.astype(np.float32)),
    "two_results_kwargs": lambda L: L.jit(lambda v, w: L.pure_callback(lambda a, b, k: (a * b * k, (a + b).astype(np.int32)), (L.ShapeDtypeStruct(v.shape, v.dtype), L.ShapeDtypeStruct(v.shape, np.int32)), v, w, k=3.0))(X, X),
    "pytree_args": lambda L: L.jit(lambda d: L.pure_callback(lambda t: t["a"] * t["b"][0], L.ShapeDtypeStruct((5,), np.float64), d))({"a": X, "b": (X + 1,)}),
    "scan": lambda L: L.jit(lambda v: L.lax.scan(lambda c, u: (c + L.pure_callback(np.cos, L.ShapeDtypeStruct((), v.dtype), u), c), 0.0, v))(X),
    "vmap_sequential": lambda L: L.vmap(lambda v: L.pure_callback(lambda a: np.cumsum(a), L.ShapeDtypeStruct(v.shape, v.dtype), v, vmap_method="sequential"))(M),
    "vmap_expand_dims": lambda L: L.vmap(lambda v, w: L.pure_callback(lambda a, b: a * b, L.ShapeDtypeStruct(v.shape, v.dtype), v, w, vmap_method="expand_dims"), in_axes=(0, None))(M, M[0]),
    "vmap_broadcast_all": lambda L: L.vmap(lambda v, w: L.pure_callback(lambda a, b: a * b, L.ShapeDtypeStruct(v.shape, v.dtype), v, w, vmap_method="broadcast_all"), in_axes=(0, None))(M, M[0]),
    "vmap_unmapped_arg": lambda L: L.vmap(lambda v, w: v + L.pure_callback(lambda a: a * 10, L.ShapeDtypeStruct((3,), np.float64), w, vmap_method="sequential"), in_axes=(0, None))(M, M[1]),
    "nested_vmap": lambda L: L.vmap(L.vmap(lambda v, w: L.pure_callback(lambda a, b: a * b, L.ShapeDtypeStruct((), np.float64), v, w, vmap_method="sequential"), in_axes=(0, None)), in_axes=(None, 0))(M[0], M[1]),
    "jit_of_vmap": lambda L: L.jit(L.vmap(lambda v: L.pure_callback(lambda a: a[::-1].copy(), L.ShapeDtypeStruct(v.shape, v.dtype), v, vmap_method="sequential")))(M),
    "custom_jvp_around": lambda L: L.grad(_custom(L))(0.7),
}


def _custom(L):
    @L.custom_jvp
    def f(x):
        return L.pure_callback(np.sin, L.ShapeDtypeStruct((), np.float64), x)

    @f.defjvp
    def f_jvp(p, t):
        return f(p[0]), L.numpy.cos(p[0]) * t[0]

    return f


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_jax(name):
    both(CASES[name])


def test_io_callback_runs_every_call_in_order():
    seen = []
    f = qb.jit(lambda x: qb.experimental.io_callback(lambda v: seen.append(float(v)) or v * 2, qb.ShapeDtypeStruct((), qb.float64), x) + 1)
    assert float(f(qb.array(1.0))) == 3.0
    assert float(f(qb.array(2.0))) == 5.0
    assert seen == [1.0, 2.0]


def test_errors_reach_the_caller():
    def boom(a):
        raise ValueError("boom from the callback")

    f = qb.jit(lambda v: qb.pure_callback(boom, qb.ShapeDtypeStruct((5,), qb.float64), v))
    with pytest.raises(ValueError, match="boom from the callback"):
        f(X)
    # The next call is clean (nothing left over from the failure).
    assert np.allclose(np.asarray(qb.jit(lambda v: v * 2)(X)), X * 2)
    g = qb.jit(lambda v: qb.pure_callback(lambda a: a[:2], qb.ShapeDtypeStruct((5,), qb.float64), v))
    with pytest.raises(InvalidArgumentError, match="shape"):
        g(X)
    with pytest.raises(InvalidArgumentError, match="dtype"):
        qb.jit(lambda v: qb.pure_callback(lambda a: a.astype(np.float64), qb.ShapeDtypeStruct((5,), qb.int32), v))(X)
    with pytest.raises(UnsupportedOperationError, match="pure_callback has none"):
        qb.grad(lambda v: qb.pure_callback(np.sin, qb.ShapeDtypeStruct((), qb.float64), v))(1.0)
    with pytest.raises(UnsupportedOperationError):
        qb.jvp(lambda v: qb.pure_callback(np.sin, qb.ShapeDtypeStruct((), qb.float64), v), (1.0,), (1.0,))
    with pytest.raises(ArgumentTypeError):
        qb.pure_callback(3, qb.ShapeDtypeStruct((), qb.float64), 1.0)
    with pytest.raises(ArgumentTypeError):
        qb.pure_callback(np.sin, "not a shape", 1.0)
    with pytest.raises(InvalidArgumentError):
        qb.pure_callback(np.sin, qb.ShapeDtypeStruct((), qb.float64), 1.0, vmap_method="parallel")
    with pytest.raises(UnsupportedOperationError):
        qb.pure_callback(np.sin, qb.ShapeDtypeStruct((), qb.float64), 1.0, sharding=object())
