"""The layout, construction, selection and histogram breadth of quabla._shape against
jax.numpy (x64): values eagerly and under jit, gradients (check_grads to second order or
jax.grad) where differentiable, vmap against a loop, f32 kept, and the typed errors."""

import numpy as np
import pytest

import quabla as qb
from breadth_util import assert_close, check_all, to_np

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402

from quabla.errors import (  # noqa: E402
    ArgumentTypeError,
    DTypeError,
    InvalidArgumentError,
    InvalidIndexError,
    ShapeError,
    TracerError,
    UnsupportedOperationError,
)

RNG = np.random.default_rng(11)


def U(*shape):
    return RNG.uniform(-2.0, 2.0, size=shape)


def both(f, g, *args, jit=True):
    """f(*qb args) == g(*jnp args), eagerly and (with jit) under qb.jit."""
    want = g(*[jnp.asarray(a) for a in args])
    assert_close(f(*[qb.array(a) for a in args]), want, what="eager")
    if jit:
        assert_close(qb.jit(f)(*[qb.array(a) for a in args]), want, what="jit")


# ---------------------------------------------------------------------------------------------
# Layout

LAYOUT = [
    ("moveaxis", lambda m: lambda x: m.moveaxis(x, 0, -1), U(2, 3, 4)),
    ("moveaxis_seq", lambda m: lambda x: m.moveaxis(x, (0, 1), (2, 0)), U(2, 3, 4)),
    ("rollaxis", lambda m: lambda x: m.rollaxis(x, 2, 0), U(2, 3, 4)),
    ("rollaxis_end", lambda m: lambda x: m.rollaxis(x, 0, 3), U(2, 3, 4)),
    ("permute_dims", lambda m: lambda x: m.permute_dims(x, (1, 2, 0)), U(2, 3, 4)),
    ("matrix_transpose", lambda m: lambda x: m.matrix_transpose(x), U(2, 3, 4)),
    ("atleast_3d_1", lambda m: lambda x: m.atleast_3d(x), U(4)),
    ("atleast_3d_2", lambda m: lambda x: m.atleast_3d(x), U(2, 4)),
    ("dstack", lambda m: lambda x: m.dstack([x, 2 * x]), U(2, 3)),
    ("append", lambda m: lambda x: m.append(x, x[:1]), U(2, 3)),
    ("append_axis", lambda m: lambda x: m.append(x, x[:, :1], axis=1), U(2, 3)),
    ("insert_scalar", lambda m: lambda x: m.insert(x, 1, 5.0), U(4)),
    ("insert_seq", lambda m: lambda x: m.insert(x, np.array([0, 2, 2, -1]), x[:4] * 3), U(5)),
    ("insert_axis", lambda m: lambda x: m.insert(x, 1, x[:, 0], axis=1), U(3, 4)),
    ("insert_axis_seq", lambda m: lambda x: m.insert(x, np.array([0, 3]), x[:2] * 2, axis=0), U(3, 4)),
    ("insert_slice", lambda m: lambda x: m.insert(x, slice(0, 4, 2), 7.0, axis=1), U(3, 4)),
    ("insert_bcast", lambda m: lambda x: m.insert(x, np.array([1, 2]), 9.0, axis=1), U(2, 3)),
    ("delete_int", lambda m: lambda x: m.delete(x, 1, axis=1), U(3, 4)),
    ("delete_neg", lambda m: lambda x: m.delete(x, -1), U(5)),
    ("delete_seq", lambda m: lambda x: m.delete(x, np.array([0, 2, 2])), U(5)),
    ("delete_slice", lambda m: lambda x: m.delete(x, slice(None, None, 2), axis=0), U(5, 2)),
    ("delete_mask", lambda m: lambda x: m.delete(x, np.array([True, False, True, False])), U(4)),
    ("delete_unique", lambda m: lambda x: m.delete(x, np.array([3, 0]), assume_unique_indices=True), U(5)),
    ("resize", lambda m: lambda x: m.resize(x, (3, 5)), U(2, 3)),
    ("resize_small", lambda m: lambda x: m.resize(x, 4), U(2, 3)),
    ("rot90", lambda m: lambda x: m.rot90(x), U(2, 3)),
    ("rot90_k2", lambda m: lambda x: m.rot90(x, 2), U(2, 3)),
    ("rot90_k3_axes", lambda m: lambda x: m.rot90(x, -1, axes=(2, 0)), U(2, 3, 4)),
    ("unstack", lambda m: lambda x: m.unstack(x, axis=1), U(2, 3)),
    ("block", lambda m: lambda x: m.block([[x, 2 * x], [x[:1], x[:1]]]), U(2, 2)),
    ("block_1d", lambda m: lambda x: m.block([x, x[:2], 1.0]), U(3)),
]


@pytest.mark.parametrize("name,mk,x", LAYOUT, ids=[t[0] for t in LAYOUT])
def test_layout(name, mk, x):
    f = mk(qb)
    check_all(f, mk(jnp), [x], vmap=name not in ("delete_mask",))


def test_layout_f32_and_ints():
    x = U(2, 3).astype(np.float32)
    for f, g in [(lambda a: qb.moveaxis(a, 0, 1), lambda a: jnp.moveaxis(a, 0, 1)), (lambda a: qb.insert(a, 1, 2.0, axis=1), lambda a: jnp.insert(a, 1, 2.0, axis=1))]:
        r = f(qb.array(x))
        assert r.dtype == qb.float32
        assert_close(r, g(x), 1e-6, 1e-6)
    i = np.arange(6).reshape(2, 3)
    both(lambda a: qb.insert(a, [0, 3], 2.7, axis=1), lambda a: jnp.insert(a, jnp.array([0, 3]), 2.7, axis=1), i)
    both(lambda a: qb.resize(a, (4, 4)), lambda a: jnp.resize(a, (4, 4)), i)


def test_broadcast_and_splits():
    assert qb.broadcast_shapes((2, 1), (3,), 1) == jnp.broadcast_shapes((2, 1), (3,), 1)
    assert qb.broadcast_shapes() == ()
    a, b = U(2, 1), U(3)
    for g, w in zip(qb.broadcast_arrays(qb.array(a), qb.array(b)), jnp.broadcast_arrays(a, b)):
        assert_close(g, w)
    x = U(7, 4)
    for qf, jf, arg in [
        (lambda v: qb.array_split(v, 3), lambda v: jnp.array_split(v, 3), x),
        (lambda v: qb.array_split(v, [2, 5]), lambda v: jnp.array_split(v, [2, 5]), x),
        (lambda v: qb.array_split(v, 3, axis=1), lambda v: jnp.array_split(v, 3, axis=1), x),
        (lambda v: qb.vsplit(v, [3]), lambda v: jnp.vsplit(v, [3]), x),
        (lambda v: qb.hsplit(v, 2), lambda v: jnp.hsplit(v, 2), x),
        (lambda v: qb.hsplit(v, 2), lambda v: jnp.hsplit(v, 2), U(6)),
        (lambda v: qb.dsplit(v, 2), lambda v: jnp.dsplit(v, 2), U(2, 3, 4)),
    ]:
        both(qf, jf, arg)
    with pytest.raises(ShapeError):
        qb.vsplit(qb.array(x), 2)  # 7 rows do not split evenly
    with pytest.raises(ShapeError):
        qb.array_split(qb.array(U(2)), 3)  # would give an empty piece


def test_layout_grads_against_jax():
    x = U(4, 3)
    for qf, jf in [
        (lambda v: qb.sum(qb.insert(v, [0, 2], v[1] * v[2], axis=0) ** 2), lambda v: jnp.sum(jnp.insert(v, jnp.array([0, 2]), v[1] * v[2], axis=0) ** 2)),
        (lambda v: qb.sum(qb.delete(v, [1, 3], axis=0) ** 3), lambda v: jnp.sum(jnp.delete(v, jnp.array([1, 3]), axis=0) ** 3)),
        (lambda v: qb.sum(qb.block([[v, v ** 2]]) ** 2), lambda v: jnp.sum(jnp.block([[v, v ** 2]]) ** 2)),
    ]:
        assert_close(qb.grad(qf)(qb.array(x)), jax.grad(jf)(x))


def test_delete_traced_unique():
    x = U(6)
    f = qb.jit(lambda v, i: qb.delete(v, i, assume_unique_indices=True))
    assert_close(f(qb.array(x), qb.array([4, 1])), jnp.delete(x, jnp.array([4, 1]), assume_unique_indices=True))
    with pytest.raises(TracerError):
        qb.jit(lambda v, i: qb.delete(v, i))(qb.array(x), qb.array([4, 1]))
    with pytest.raises(TracerError):
        qb.jit(lambda v, i: qb.insert(v, i, 1.0))(qb.array(x), qb.array([4, 1]))


def test_trim_zeros():
    for v, kw in [([0, 0, 1, 2, 0, 3, 0], {}), ([0, 0, 1, 2, 0], {"trim": "f"}), ([0.0, 1.0, 0.0], {"trim": "b"})]:
        assert_close(qb.trim_zeros(qb.array(v), **kw), jnp.trim_zeros(jnp.array(v), **kw))
    m = np.array([[0, 0, 0], [0, 1, 0], [0, 0, 2], [0, 0, 0]])
    assert_close(qb.trim_zeros(qb.array(m)), jnp.trim_zeros(jnp.array(m)))
    assert_close(qb.trim_zeros(qb.array(m), axis=0), jnp.trim_zeros(jnp.array(m), axis=0))
    with pytest.raises(TracerError, match="trim_zeros"):
        qb.jit(qb.trim_zeros)(qb.array([0, 1]))
    with pytest.raises(ShapeError):
        qb.trim_zeros(qb.array([0, 0]))


def test_layout_errors():
    x = qb.ones((2, 3))
    with pytest.raises(ShapeError, match="moveaxis"):
        qb.moveaxis(x, 0, 5)
    with pytest.raises(ShapeError, match="moveaxis"):
        qb.moveaxis(x, (0, 0), (0, 1))
    with pytest.raises(ShapeError, match="moveaxis"):
        qb.moveaxis(x, (0, 1), 0)
    with pytest.raises(ShapeError, match="rollaxis"):
        qb.rollaxis(x, 0, 4)
    with pytest.raises(ShapeError, match="matrix_transpose"):
        qb.matrix_transpose(qb.ones(3))
    with pytest.raises(ShapeError, match="rot90"):
        qb.rot90(x, axes=(1, 1))
    with pytest.raises(ShapeError, match="rot90"):
        qb.rot90(qb.ones(3))
    with pytest.raises(ArgumentTypeError, match="block"):
        qb.block((x, x))
    with pytest.raises(ShapeError, match="block"):
        qb.block([[x], x])
    with pytest.raises(InvalidArgumentError, match="block"):
        qb.block([])
    with pytest.raises(InvalidIndexError, match="delete"):
        qb.delete(qb.ones(3), 3)
    with pytest.raises(InvalidIndexError, match="delete"):
        qb.delete(qb.ones(3), [0, 5])
    with pytest.raises(ShapeError, match="delete"):
        qb.delete(qb.ones(3), [True, False])
    with pytest.raises(ShapeError, match="delete"):
        qb.delete(qb.ones(2), [0, 1])
    with pytest.raises(DTypeError, match="insert"):
        qb.insert(qb.ones(3), [0.5], 1.0)
    with pytest.raises(ShapeError, match="insert"):
        qb.insert(x, [0, 1], qb.ones((2, 3)), axis=1)
    with pytest.raises(ShapeError, match="resize"):
        qb.resize(x, (0, 3))
    with pytest.raises(ShapeError, match="unstack"):
        qb.unstack(qb.array(1.0))


# ---------------------------------------------------------------------------------------------
# Construction


def test_empty_identity():
    assert_close(qb.empty((2, 3)), jnp.empty((2, 3)))
    assert qb.empty(3, dtype=qb.int32).dtype == qb.int32
    p = qb.ones((2,), dtype=qb.float32)
    assert_close(qb.empty_like(p), jnp.empty_like(jnp.ones(2, jnp.float32)))
    assert qb.empty_like(p).dtype == qb.float32
    assert qb.empty_like(p, shape=(3, 1)).shape == (3, 1)
    assert qb.jit(lambda v: qb.empty_like(v) + v)(p).tolist() == [1.0, 1.0]
    assert_close(qb.identity(3), jnp.identity(3))
    assert qb.identity(2, dtype=qb.int32).dtype == qb.int32


def test_logspace_geomspace():
    for kw in [{}, {"endpoint": False}, {"base": 2.0}, {"num": 7}]:
        assert_close(qb.logspace(0.0, 3.0, **{"num": 5, **kw}), jnp.logspace(0.0, 3.0, **{"num": 5, **kw}), 1e-12, 0)
    for a, b, kw in [(1.0, 1000.0, {}), (-1.0, -16.0, {"num": 5}), (2.0, 50.0, {"endpoint": False, "num": 6})]:
        assert_close(qb.geomspace(a, b, **kw), jnp.geomspace(a, b, **kw), 1e-12, 0)
    a, b = np.array([1.0, 2.0]), np.array([10.0, 200.0])
    assert_close(qb.logspace(qb.array(a), qb.array(b), 4, axis=1), jnp.logspace(a, b, 4, axis=1), 1e-12, 0)
    assert_close(qb.geomspace(qb.array(a), qb.array(b), 4, axis=-1), jnp.geomspace(a, b, 4, axis=-1), 1e-12, 0)
    assert_close(qb.jit(lambda s: qb.logspace(s, 2.0, 3))(qb.array(0.5)), jnp.logspace(0.5, 2.0, 3), 1e-12, 0)
    assert qb.logspace(qb.array(np.float32(0)), 1.0, 3).dtype == qb.float32
    assert_close(qb.logspace(0, 3, 4, dtype=qb.int64), jnp.logspace(0, 3, 4, dtype=jnp.int64))
    # differentiable in the endpoints
    g = qb.grad(lambda s: qb.sum(qb.geomspace(s, 8.0, 4)))(qb.array(1.0))
    assert_close(g, jax.grad(lambda s: jnp.sum(jnp.geomspace(s, 8.0, 4)))(1.0), 1e-10, 1e-10)


def test_indices_grids():
    assert_close(qb.indices((2, 3)), jnp.indices((2, 3)))
    assert_close(qb.indices((2, 3), sparse=True), jnp.indices((2, 3), sparse=True))
    assert qb.indices((2,), dtype=qb.int32).dtype == qb.int32
    assert_close(qb.jit(lambda: qb.indices((3, 2)))(), jnp.indices((3, 2)))
    assert_close(qb.ix_(qb.array([0, 2]), qb.array([1, 0, 3])), jnp.ix_(jnp.array([0, 2]), jnp.array([1, 0, 3])))
    assert_close(qb.mgrid[0:3, 1:5:2], jnp.mgrid[0:3, 1:5:2])
    assert_close(qb.mgrid[0:1:5j], jnp.mgrid[0:1:5j])
    assert_close(qb.mgrid[0:2, 0:1:3j], jnp.mgrid[0:2, 0:1:3j])
    assert_close(qb.ogrid[0:3, 0:2], jnp.ogrid[0:3, 0:2])
    assert_close(qb.ogrid[2:6], jnp.ogrid[2:6])
    with pytest.raises(ShapeError, match="ix_"):
        qb.ix_(qb.ones((2, 2)))


def test_r_c():
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    qa, qbb = qb.array(a), qb.array(b)
    cases = [
        (lambda m, x, y: m.r_[x, y]),
        (lambda m, x, y: m.r_[x, 0.0, 5:8]),
        (lambda m, x, y: m.r_[x, -1:1:5j]),
        (lambda m, x, y: m.r_["0,2", x, y]),
        (lambda m, x, y: m.r_["1,2,0", x, y]),
        (lambda m, x, y: m.r_["-1,3,1", x, y]),
        (lambda m, x, y: m.r_["r", x, y]),
        (lambda m, x, y: m.r_["c", x, y]),
        (lambda m, x, y: m.c_[x, y]),
        (lambda m, x, y: m.c_[m.stack([x, y]), m.stack([y, x])]),
        (lambda m, x, y: m.c_[x, y, x]),
    ]
    for c in cases:
        want = c(jnp, jnp.asarray(a), jnp.asarray(b))
        assert_close(c(qb, qa, qbb), want)
        assert_close(qb.jit(lambda x, y: c(qb, x, y))(qa, qbb), want)
    assert qb.s_[1:2, ::3] == np.s_[1:2, ::3]
    assert qb.index_exp[1] == (1,)
    with pytest.raises(InvalidArgumentError, match="r_"):
        qb.r_[qa, "0,2"]
    with pytest.raises(InvalidArgumentError, match="r_"):
        qb.r_["x,y", qa]


def test_fromfunction():
    for f, shape, dt in [(lambda i, j: i * 10 + j, (2, 3), float), (lambda i: i ** 2, (4,), int), (lambda i, j, k: i - j * k, (2, 2, 3), int)]:
        want = jnp.fromfunction(f, shape, dtype=dt)
        assert_close(qb.fromfunction(f, shape, dtype=dt), want)
        assert_close(qb.jit(lambda: qb.fromfunction(f, shape, dtype=dt))(), want)
    # keyword arguments pass through unmapped (NumPy's oracle: JAX maps them along with the indices)
    assert_close(qb.fromfunction(lambda i, j, s: (i + j) * s, (2, 2), s=3.0), np.fromfunction(lambda i, j, s: (i + j) * s, (2, 2), s=3.0))


def test_triangle_diag_indices():
    for n, k, m in [(3, 0, None), (4, 1, None), (4, -1, 6), (3, -1, 2)]:
        # NumPy's oracle (jnp's are the same, one jit compile each)
        assert_close(qb.tril_indices(n, k, m), np.tril_indices(n, k, m))
        assert_close(qb.triu_indices(n, k, m), np.triu_indices(n, k, m))
    a = np.zeros((3, 5))
    for k in (0, 2, -1):
        assert_close(qb.tril_indices_from(qb.array(a), k), np.tril_indices_from(a, k))
        assert_close(qb.triu_indices_from(qb.array(a), k), np.triu_indices_from(a, k))
    assert_close(qb.tril_indices(4, 1), jnp.tril_indices(4, 1))
    assert_close(qb.diag_indices(4, 3), jnp.diag_indices(4, 3))
    assert_close(qb.diag_indices_from(qb.zeros((3, 3))), jnp.diag_indices_from(jnp.zeros((3, 3))))
    x = U(2, 3)
    x[0, 0] = 0.3
    both(lambda v: qb.triu(v)[qb.triu_indices_from(v)], lambda v: jnp.triu(v)[jnp.triu_indices_from(v)], x)
    check_all(lambda v: qb.diagflat(v, -1), lambda v: jnp.diagflat(v, -1), [U(2, 2)])
    for k in (0, 2):
        v = U(3)
        assert_close(qb.diagflat(qb.array(v), k), jnp.diagflat(v, k))
    with pytest.raises(ShapeError, match="tril_indices_from"):
        qb.tril_indices_from(qb.zeros(3))
    with pytest.raises(ShapeError, match="diag_indices_from"):
        qb.diag_indices_from(qb.zeros((2, 3)))
    with pytest.raises(InvalidArgumentError, match="diag_indices"):
        qb.diag_indices(-1)


def test_fill_diagonal():
    for shape, val in [((3, 3), 5.0), ((2, 4), np.array([1.0, 2.0])), ((4, 2), np.array([7.0, 8.0, 9.0])), ((2, 2, 2), 1.5)]:
        x = U(*shape)
        want = jnp.fill_diagonal(x, val, inplace=False)
        assert_close(qb.fill_diagonal(qb.array(x), val, inplace=False), want)
        assert_close(qb.jit(lambda v: qb.fill_diagonal(v, val, inplace=False))(qb.array(x)), want)
    xs = U(3, 3)
    assert_close(qb.grad(lambda v: qb.sum(qb.fill_diagonal(v * v, 2.0, inplace=False)))(qb.array(xs)), jax.grad(lambda v: jnp.sum(jnp.fill_diagonal(v * v, 2.0, inplace=False)))(xs))
    with pytest.raises(UnsupportedOperationError, match="inplace"):
        qb.fill_diagonal(qb.zeros((2, 2)), 1.0)
    with pytest.raises(UnsupportedOperationError, match="wrap"):
        qb.fill_diagonal(qb.zeros((2, 2)), 1.0, wrap=True, inplace=False)
    with pytest.raises(ShapeError, match="fill_diagonal"):
        qb.fill_diagonal(qb.zeros((2, 3, 2)), 1.0, inplace=False)


def test_mask_indices():
    for func, jfunc, k in [(qb.triu, jnp.triu, 0), (qb.tril, jnp.tril, -1), (qb.triu, jnp.triu, 1)]:
        assert_close(qb.mask_indices(4, func, k), jnp.mask_indices(4, jfunc, k))
    want = jnp.mask_indices(3, jnp.triu, 0, size=8)
    assert_close(qb.mask_indices(3, qb.triu, 0, size=8), want)
    assert_close(qb.mask_indices(3, qb.triu, 0, size=4), jnp.mask_indices(3, jnp.triu, 0, size=4))
    assert_close(qb.jit(lambda: qb.mask_indices(3, qb.triu, 0, size=8))(), want)


def test_ravel_unravel():
    i, j = np.array([0, 1, 2, 3]), np.array([2, 0, 1, 4])
    dims = (4, 5)
    for mode, order in [("raise", "C"), ("raise", "F"), ("wrap", "C"), ("clip", "F")]:
        ii, jj = (i, j) if mode == "raise" else (i * 3 - 2, j + 3)
        want = jnp.ravel_multi_index((ii, jj), dims, mode=mode, order=order)
        assert_close(qb.ravel_multi_index((qb.array(ii), qb.array(jj)), dims, mode=mode, order=order), want)
        if mode != "raise":
            assert_close(qb.jit(lambda a, b, mode=mode, order=order: qb.ravel_multi_index((a, b), dims, mode=mode, order=order))(qb.array(ii), qb.array(jj)), want)
    flat = np.array([0, 7, 19, 20, 25, -1, -2, -30])
    for shape in [(4, 5), (2, 2, 5), (20,)]:
        want = jnp.unravel_index(flat, shape)
        assert_close(qb.unravel_index(qb.array(flat), shape), want)
        assert_close(qb.jit(lambda f, shape=shape: qb.unravel_index(f, shape))(qb.array(flat)), want)
    with pytest.raises(InvalidIndexError, match="ravel_multi_index"):
        qb.ravel_multi_index((qb.array([0, 5]),), (5,))
    with pytest.raises(TracerError, match="mode"):
        qb.jit(lambda a: qb.ravel_multi_index((a,), (5,)))(qb.array([1]))
    with pytest.raises(DTypeError, match="unravel_index"):
        qb.unravel_index(qb.array([1.0]), (2,))
    with pytest.raises(InvalidArgumentError, match="order"):
        qb.ravel_multi_index((qb.array([1]),), (5,), order="K")


# ---------------------------------------------------------------------------------------------
# Comparison and selection


def test_array_equal_equiv():
    a = np.array([1.0, np.nan, 3.0])
    cases = [(a, a, {}), (a, a, {"equal_nan": True}), (a, a[:2], {}), (np.array([1, 2]), np.array([1.0, 2.0]), {}), (np.array([1, 2]), np.array([1, 3]), {})]
    for x, y, kw in cases:
        want = jnp.array_equal(x, y, **kw)
        assert qb.array_equal(qb.array(x), qb.array(y), **kw).item() == bool(want)
        assert qb.jit(lambda u, v, kw=kw: qb.array_equal(u, v, **kw))(qb.array(x), qb.array(y)).item() == bool(want)
    for x, y in [(np.array([1, 2]), np.array([[1, 2], [1, 2]])), (np.array([1, 2]), np.array([[1, 2], [1, 3]])), (np.array([1, 2]), np.array([1, 2, 3]))]:
        # NumPy's oracle: jnp.array_equiv raises for shapes that do not broadcast
        assert qb.array_equiv(qb.array(x), qb.array(y)).item() == bool(np.array_equiv(x, y))


def test_select():
    x = U(3, 4)
    f = lambda m: lambda v: m.select([v < -0.5, v > 0.5, v > 1.0], [v * 2, v ** 2, -v], default=0.25)  # noqa: E731
    check_all(f(qb), f(jnp), [x])
    g = lambda m: lambda v, w: m.select([v > 0], [w], default=v[0])  # noqa: E731
    check_all(g(qb), g(jnp), [x, U(4)], vmap=False)
    r = qb.select([qb.array([True, False])], [qb.array([1.0, 2.0], dtype=qb.float32)])
    assert r.dtype == qb.float32
    with pytest.raises(ShapeError, match="select"):
        qb.select([qb.array([True])], [])
    with pytest.raises(InvalidArgumentError, match="select"):
        qb.select([], [])
    with pytest.raises(DTypeError, match="select"):
        qb.select([qb.array([1.0])], [qb.array([1.0])])


def test_choose():
    idx = np.array([[0, 2, 1], [1, 0, 2]])
    ch = [U(2, 3), U(3), U(2, 1)]
    want = jnp.choose(idx, ch)
    assert_close(qb.choose(qb.array(idx), [qb.array(c) for c in ch]), want)
    for mode in ("wrap", "clip"):
        bad = idx * 2 - 1
        want = jnp.choose(bad, ch, mode=mode)
        assert_close(qb.choose(qb.array(bad), [qb.array(c) for c in ch], mode=mode), want)
        assert_close(qb.jit(lambda a, *c, mode=mode: qb.choose(a, list(c), mode=mode))(qb.array(bad), *[qb.array(c) for c in ch]), want)
    fq = lambda c0, c1: qb.sum(qb.choose(qb.array(idx % 2), [c0 * c0, qb.sin(c1)]) ** 2)  # noqa: E731
    fj = lambda c0, c1: jnp.sum(jnp.choose(idx % 2, [c0 * c0, jnp.sin(c1)]) ** 2)  # noqa: E731
    a0, a1 = U(2, 3), U(2, 3)
    for k in (0, 1):
        assert_close(qb.grad(fq, argnums=k)(qb.array(a0), qb.array(a1)), jax.grad(fj, argnums=k)(a0, a1))
    with pytest.raises(InvalidIndexError, match="choose"):
        qb.choose(qb.array([0, 3]), [qb.ones(2), qb.zeros(2)])
    with pytest.raises(TracerError, match="choose"):
        qb.jit(lambda a: qb.choose(a, [qb.ones(2), qb.zeros(2)]))(qb.array([0, 1]))
    with pytest.raises(DTypeError, match="choose"):
        qb.choose(qb.array([0.0]), [qb.ones(1)])
    with pytest.raises(InvalidArgumentError, match="mode"):
        qb.choose(qb.array([0]), [qb.ones(1)], mode="bad")


def test_piecewise():
    x = U(3, 5)
    cases = [
        lambda m: lambda v: m.piecewise(v, [v < 0, v >= 0], [lambda t: -t * t, lambda t: m.sin(t)]),
        lambda m: lambda v: m.piecewise(v, [v < -1, v > 1], [lambda t: t ** 3, 2.0, lambda t: t * 0.5]),
        lambda m: lambda v: m.piecewise(v, [v > 0.5], [lambda t, s: t * s], 3.0),
    ]
    for c in cases:
        check_all(c(qb), c(jnp), [x])
    i = np.array([-3, 0, 4])
    both(lambda v: qb.piecewise(v, [v < 0], [lambda t: t * 2, 7]), lambda v: jnp.piecewise(v, [v < 0], [lambda t: t * 2, 7]), i)
    with pytest.raises(ShapeError, match="piecewise"):
        qb.piecewise(qb.array(x), [qb.array(x) > 0], [1.0, 2.0, 3.0])


def test_compress_extract():
    a = U(3, 4)
    cond = np.array([True, False, True, True])
    for axis in (1, None):
        assert_close(qb.compress(qb.array(cond), qb.array(a), axis=axis), jnp.compress(cond, a, axis=axis))
    assert_close(qb.compress(qb.array(cond[:2]), qb.array(a), axis=0), jnp.compress(cond[:2], a, axis=0))
    for size, fill in [(2, 0.0), (4, -1.0), (3, 9.0)]:
        want = jnp.compress(cond, a, axis=1, size=size, fill_value=fill)
        f = qb.jit(lambda c, v, size=size, fill=fill: qb.compress(c, v, axis=1, size=size, fill_value=fill))
        assert_close(f(qb.array(cond), qb.array(a)), want)
    c2 = a > 0
    assert_close(qb.extract(qb.array(c2), qb.array(a)), jnp.extract(c2, a))
    want = jnp.extract(c2, a, size=12, fill_value=-5.0)
    assert_close(qb.jit(lambda c, v: qb.extract(c, v, size=12, fill_value=-5.0))(qb.array(c2), qb.array(a)), want)
    # gradient flows to the selected entries
    fq = lambda v: qb.sum(qb.compress(qb.array(cond), v, axis=1, size=3) ** 2)  # noqa: E731
    fj = lambda v: jnp.sum(jnp.compress(cond, v, axis=1, size=3) ** 2)  # noqa: E731
    assert_close(qb.grad(fq)(qb.array(a)), jax.grad(fj)(a))
    with pytest.raises(TracerError, match="size"):
        qb.jit(lambda c, v: qb.compress(c, v))(qb.array(cond), qb.array(a))
    with pytest.raises(ShapeError, match="compress"):
        qb.compress(qb.array(np.ones((2, 2), bool)), qb.array(a))
    with pytest.raises(ShapeError, match="compress"):
        qb.compress(qb.array(cond), qb.array(a), axis=1, size=5)
    with pytest.raises(InvalidIndexError, match="compress"):
        qb.compress(qb.array([True, False, True, False, True]), qb.array(a), axis=1)


def test_put():
    a = U(3, 4)
    ind, v = np.array([0, 5, 11, 5]), np.array([1.0, 2.0])
    for mode, ii in [(None, ind), (None, np.array([0, 13, -1, -20])), ("clip", np.array([-3, 20, 4])), ("wrap", np.array([-3, 20, 4]))]:
        want = jnp.put(a, ii, v, mode=mode, inplace=False)
        assert_close(qb.put(qb.array(a), qb.array(ii), qb.array(v), mode=mode, inplace=False), want)
        assert_close(qb.jit(lambda x, i, w, mode=mode: qb.put(x, i, w, mode=mode, inplace=False))(qb.array(a), qb.array(ii), qb.array(v)), want)
    idx = np.array([[1], [0], [3]])
    for axis, ii, vals in [(1, idx, 5.0), (0, np.array([[2, 0, 1, 1]]), U(1, 4)), (None, np.array([0, 7, 11]), U(3))]:
        want = jnp.put_along_axis(a, ii, vals, axis=axis, inplace=False)
        assert_close(qb.put_along_axis(qb.array(a), qb.array(ii), vals, axis=axis, inplace=False), want)
    fq = lambda x, w: qb.sum(qb.put_along_axis(x, qb.array(idx), w * w, axis=1, inplace=False) ** 2)  # noqa: E731
    fj = lambda x, w: jnp.sum(jnp.put_along_axis(x, idx, w * w, axis=1, inplace=False) ** 2)  # noqa: E731
    w = U(3, 1)
    for k in (0, 1):
        assert_close(qb.grad(fq, argnums=k)(qb.array(a), qb.array(w)), jax.grad(fj, argnums=k)(a, w))
    with pytest.raises(UnsupportedOperationError, match="inplace"):
        qb.put(qb.array(a), qb.array([0]), 1.0)
    with pytest.raises(UnsupportedOperationError, match="inplace"):
        qb.put_along_axis(qb.array(a), qb.array(idx), 1.0, axis=1)
    with pytest.raises(ShapeError, match="put_along_axis"):
        qb.put_along_axis(qb.array(a), qb.array([1]), 1.0, axis=1, inplace=False)
    with pytest.raises(InvalidArgumentError, match="put"):
        qb.put(qb.array(a), qb.array([0]), 1.0, mode="bad", inplace=False)


def test_partition():
    x = RNG.integers(0, 5, size=(3, 7))  # ties
    for kth, axis in [(0, -1), (3, -1), (6, 1), (-2, 1), (1, 0)]:
        both(lambda v, k=kth, a=axis: qb.partition(v, k, a), lambda v, k=kth, a=axis: jnp.partition(v, k, a), x)
        both(lambda v, k=kth, a=axis: qb.argpartition(v, k, a), lambda v, k=kth, a=axis: jnp.argpartition(v, k, a), x)
    f = U(4, 6)
    check_all(lambda v: qb.partition(v, 2), lambda v: jnp.partition(v, 2), [f])
    check_all(lambda v: qb.argpartition(v, 2, axis=0), lambda v: jnp.argpartition(v, 2, axis=0), [f], grads=False)
    u = np.array([3, 0, 255, 7], np.uint8)
    both(lambda v: qb.partition(v, 1), lambda v: jnp.partition(v, 1), u)
    both(lambda v: qb.argpartition(v, 1), lambda v: jnp.argpartition(v, 1), u)
    with pytest.raises(InvalidIndexError, match="partition"):
        qb.partition(qb.array(f), 6)


def test_apply_along_over_axes():
    x = U(2, 3, 4)
    pairs = [(lambda v: v * v[0], lambda v: v * v[0]), (lambda v: qb.sum(v ** 2), lambda v: jnp.sum(v ** 2)), (lambda v: qb.stack([v[0], v[-1]]), lambda v: jnp.stack([v[0], v[-1]]))]
    for axis in (0, 1, 2, -1):
        for n, (qf, jf) in enumerate(pairs):
            if n == axis % 3:
                check_all(lambda v, qf=qf, axis=axis: qb.apply_along_axis(qf, axis, v), lambda v, jf=jf, axis=axis: jnp.apply_along_axis(jf, axis, v), [x], vmap=axis == 1)
            else:
                both(lambda v, qf=qf, axis=axis: qb.apply_along_axis(qf, axis, v), lambda v, jf=jf, axis=axis: jnp.apply_along_axis(jf, axis, v), x)
    assert_close(qb.apply_along_axis(lambda v, s: v * s, 1, qb.array(x), 2.0), jnp.apply_along_axis(lambda v, s: v * s, 1, x, 2.0))
    for axes in ([0, 2], [1], (2, 0)):
        check_all(lambda v, axes=axes: qb.apply_over_axes(qb.sum, v, axes), lambda v, axes=axes: jnp.apply_over_axes(jnp.sum, v, axes), [x])
    assert_close(qb.apply_over_axes(lambda v, a: qb.cumsum(v, axis=a), qb.array(x), [1]), jnp.apply_over_axes(lambda v, a: jnp.cumsum(v, axis=a), x, [1]))
    with pytest.raises(ShapeError, match="apply_over_axes"):
        qb.apply_over_axes(lambda v, a: qb.sum(v), qb.array(x), [0])


def test_vectorize():
    a, b = U(4, 3), U(3)
    dot_q = qb.vectorize(lambda u, v: qb.sum(u * v), signature="(n),(n)->()")
    dot_j = jnp.vectorize(lambda u, v: jnp.sum(u * v), signature="(n),(n)->()")
    check_all(dot_q, dot_j, [a, b], vmap=False)
    # elementwise with broadcasting of loop dims, a scalar function
    fq = qb.vectorize(lambda u, v: qb.where(u > v, u * v, u - v))
    fj = jnp.vectorize(lambda u, v: jnp.where(u > v, u * v, u - v))
    check_all(fq, fj, [U(2, 1, 3), U(4, 1)])
    # several outputs, an output core dim, excluded positional and keyword
    mq = qb.vectorize(lambda u, k, scale=1.0: (qb.sum(u) * k * scale, u[::-1] * scale), excluded={1, "scale"}, signature="(n)->(),(n)")
    mj = jnp.vectorize(lambda u, k, scale=1.0: (jnp.sum(u) * k * scale, u[::-1] * scale), excluded={1, "scale"}, signature="(n)->(),(n)")
    assert_close(mq(qb.array(a), 3.0, scale=2.0), mj(a, 3.0, scale=2.0))
    assert_close(qb.jit(lambda u: mq(u, 3.0, scale=2.0))(qb.array(a)), mj(a, 3.0, scale=2.0))
    # matrix core dims
    mv_q = qb.vectorize(qb.matmul, signature="(m,n),(n)->(m)")
    mv_j = jnp.vectorize(jnp.matmul, signature="(m,n),(n)->(m)")
    check_all(mv_q, mv_j, [U(5, 2, 3), U(3)], vmap=False)
    check_all(mv_q, mv_j, [U(2, 3), U(4, 3)], vmap=False)
    # None arguments are passed through
    assert_close(qb.vectorize(lambda u, n: u * 2 if n is None else u)(qb.array(b), None), b * 2)
    with pytest.raises(ShapeError, match="core dim"):
        dot_q(qb.ones(3), qb.ones(4))
    with pytest.raises(InvalidArgumentError, match="signature"):
        qb.vectorize(qb.sum, signature="(n)->")
    with pytest.raises(ShapeError, match="vectorize"):
        qb.vectorize(lambda u: u[:2], signature="(n)->(n)")(qb.ones((2, 3)))
    with pytest.raises(ArgumentTypeError, match="outputs"):
        qb.vectorize(lambda u: u, signature="(n)->(n),()")(qb.ones((2, 3)))
    with pytest.raises(InvalidArgumentError, match="excluded"):
        qb.vectorize(qb.sum, excluded={-1})


# ---------------------------------------------------------------------------------------------
# Histograms


def test_histogram_bin_edges():
    a = U(50)
    for kw in [{}, {"bins": 4}, {"bins": 3, "range": (-1.0, 1.0)}, {"bins": np.array([-2.0, 0.0, 0.5, 2.0])}]:
        want = jnp.histogram_bin_edges(a, **kw)
        assert_close(qb.histogram_bin_edges(qb.array(a), **kw), want)
        assert_close(qb.jit(lambda v, kw=kw: qb.histogram_bin_edges(v, **kw))(qb.array(a)), want)
    assert_close(qb.histogram_bin_edges(qb.array([2.0, 2.0]), 2), jnp.histogram_bin_edges(jnp.array([2.0, 2.0]), 2))
    assert qb.histogram_bin_edges(qb.array(a.astype(np.float32))).dtype == qb.float32
    with pytest.raises(UnsupportedOperationError, match="string"):
        qb.histogram_bin_edges(qb.array(a), "auto")


def test_histogram2d_dd():
    x, y, z = U(40), U(40), U(40)
    w = RNG.uniform(0, 1, 40)
    for kw in [{}, {"bins": 3}, {"bins": (2, 4)}, {"bins": 3, "range": [(-1, 1), (-2, 0)]}, {"bins": np.array([-2.0, 0.0, 2.0])}, {"bins": 3, "weights": w}, {"bins": 3, "density": True}, {"bins": [np.array([-2.0, 0.0, 2.0]), 3]}]:
        want = jnp.histogram2d(x, y, **kw)
        qkw = dict(kw, weights=qb.array(w)) if "weights" in kw else kw
        assert_close(qb.histogram2d(qb.array(x), qb.array(y), **qkw), want)
        if "weights" in kw or "range" in kw:
            assert_close(qb.jit(lambda u, v, qkw=qkw: qb.histogram2d(u, v, **qkw))(qb.array(x), qb.array(y)), want)
    s = np.stack([x, y, z], axis=1)
    for kw in [{"bins": 2}, {"bins": (2, 3, 4), "density": True}, {"bins": 3, "weights": w, "range": [None, (-1, 1), None]}]:
        want = jnp.histogramdd(s, **kw)
        qkw = dict(kw, weights=qb.array(w)) if "weights" in kw else kw
        got = qb.histogramdd(qb.array(s), **qkw)
        assert_close(got[0], want[0])
        assert_close(got[1], want[1])
    # differentiable in the weights
    fq = lambda v: qb.sum(qb.histogram2d(qb.array(x), qb.array(y), bins=3, weights=v * v)[0] ** 2)  # noqa: E731
    fj = lambda v: jnp.sum(jnp.histogram2d(x, y, bins=3, weights=v * v)[0] ** 2)  # noqa: E731
    assert_close(qb.grad(fq)(qb.array(w)), jax.grad(fj)(w))
    with pytest.raises(ShapeError, match="histogramdd"):
        qb.histogramdd(qb.array(x))
    with pytest.raises(ShapeError, match="weights"):
        qb.histogramdd(qb.array(s), weights=qb.ones(3))
    with pytest.raises(ShapeError, match="range"):
        qb.histogramdd(qb.array(s), range=[(0, 1)])
    with pytest.raises(ShapeError, match="histogram2d"):
        qb.histogram2d(qb.array(x), qb.array(y[:3]))


def test_vmap_and_f32_selection():
    idx = np.array([0, 2, 1, 1])
    c = U(3, 3, 4)
    f = lambda v: qb.choose(qb.array(idx), [v[0], v[1], v[2]], mode="clip")  # noqa: E731
    got = qb.vmap(f)(qb.array(c))
    assert_close(got, np.stack([to_np(f(qb.array(c[k]))) for k in range(3)]))
    g = lambda v: qb.compress(v > 0, v, size=2, fill_value=-9.0)  # noqa: E731
    x = U(3, 5)
    assert_close(qb.vmap(g)(qb.array(x)), jax.vmap(lambda v: jnp.compress(v > 0, v, size=2, fill_value=-9.0))(x))
    h = lambda v: qb.put_along_axis(v, qb.argsort(v)[:1], 0.0, axis=0, inplace=False)  # noqa: E731
    assert_close(qb.vmap(h)(qb.array(x)), jax.vmap(lambda v: jnp.put_along_axis(v, jnp.argsort(v)[:1], 0.0, axis=0, inplace=False))(x))
    x32 = qb.array(U(4).astype(np.float32))
    assert qb.select([x32 > 0], [x32 * 2], 1.0).dtype == qb.float32
    assert qb.piecewise(x32, [x32 > 0], [lambda t: t * 2, 0.5]).dtype == qb.float32
    assert qb.choose(qb.array([0, 1, 0, 1]), [x32, x32 + 1]).dtype == qb.float32
    assert qb.partition(x32, 1).dtype == qb.float32
    assert qb.compress(qb.array([True, False, True, True]), x32).dtype == qb.float32
