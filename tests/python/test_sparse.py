"""qb.experimental.sparse (BCOO, BCSR, sparsify) against jax.experimental.sparse (x64): values,
stored buffers, jit, grad with respect to data and dense operands, vmap over batched arrays,
typed errors, and a graph-convolution layer."""

import numpy as np
import pytest

import quabla as qb
import quabla.experimental.sparse as qs
from breadth_util import assert_close

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402
from jax.experimental import sparse as js  # noqa: E402

RNG = np.random.default_rng(0)


def _sparse_array(shape, p=0.35, seed=0):
    r = np.random.default_rng(seed)
    return r.normal(size=shape) * (r.random(shape) < p)


A = _sparse_array((5, 4))
B3 = _sparse_array((3, 4, 5), seed=1)
D3 = _sparse_array((4, 3, 2), p=0.5, seed=2)


def _pair(x, **kw):
    return qs.BCOO.fromdense(qb.array(x), **kw), js.BCOO.fromdense(jnp.asarray(x), **kw)


def _same_buffers(m, j):
    assert m.shape == j.shape and m.nse == j.nse and m.n_batch == j.n_batch and m.n_dense == j.n_dense
    assert_close(m.data, np.asarray(j.data))
    assert_close(m.indices, np.asarray(j.indices).astype(np.int64) if m.indices.dtype == qb.int64 else np.asarray(j.indices))


@pytest.mark.parametrize("x,kw", [(A, {"nse": 9}), (B3, {"n_batch": 1}), (D3, {"n_dense": 1}), (B3, {"n_batch": 2})],
                         ids=["2d_padded", "batch1", "dense1", "batch2"])
def test_fromdense_todense(x, kw):
    m, j = _pair(x, **kw)
    _same_buffers(m, j)
    assert_close(m.todense(), np.asarray(j.todense()))
    assert_close(qs.bcoo_todense(m), x)
    assert m.indices.dtype == qb.int32 and m.indices_sorted and m.unique_indices
    nse = m.nse
    got = qb.jit(lambda a: qs.bcoo_fromdense(a, nse=nse, **{k: v for k, v in kw.items() if k != "nse"}).todense())(qb.array(x))
    assert_close(got, x)


def test_fromdense_f32_and_jit_needs_nse():
    x32 = A.astype(np.float32)
    m = qs.BCOO.fromdense(qb.array(x32))
    assert m.dtype == qb.float32 and m.todense().dtype == qb.float32
    assert (m @ qb.array(np.ones((4, 2), np.float32))).dtype == qb.float32
    assert (m * 2.0).dtype == qb.float32
    with pytest.raises(qb.errors.ConcretizationTypeError, match="nse"):
        qb.jit(lambda a: qs.BCOO.fromdense(a).data)(qb.array(A))
    z = qs.BCOO.fromdense(qb.zeros((2, 3)))  # JAX: nse=0; Quabla stores one padding element
    assert z.nse == 1 and z.todense().tolist() == [[0.0] * 3] * 2
    assert repr(m) == repr(js.BCOO.fromdense(x32))


DNUMS = [
    # (lhs dense, fromdense kw, rhs shape, dimension numbers)
    (A, {}, (4, 3), (((1,), (0,)), ((), ()))),
    (A, {}, (5,), (((0,), (0,)), ((), ()))),
    (A, {}, (2, 4), (((1,), (1,)), ((), ()))),
    (B3, {"n_batch": 1}, (3, 5, 2), (((2,), (1,)), ((0,), (0,)))),
    (B3, {"n_batch": 1}, (3, 4), (((0, 1), (0, 1)), ((), ()))),
    (B3, {"n_batch": 1}, (5, 2), (((2,), (0,)), ((), ()))),
    (D3, {"n_dense": 1}, (3, 6), (((1,), (0,)), ((), ()))),
    (B3, {"n_batch": 2}, (3, 5), (((2,), (1,)), ((0,), (0,)))),
]


@pytest.mark.parametrize("case", range(len(DNUMS)))
def test_dot_general(case):
    x, kw, rshape, dn = DNUMS[case]
    m, j = _pair(x, **kw)
    r = np.random.default_rng(case).normal(size=rshape)
    want = np.asarray(js.bcoo_dot_general(j, jnp.asarray(r), dimension_numbers=dn))
    assert_close(qs.bcoo_dot_general(m, qb.array(r), dimension_numbers=dn), want, 1e-12, 1e-12)
    if case in (0, 3):
        assert_close(qb.jit(lambda mm, rr: qs.bcoo_dot_general(mm, rr, dimension_numbers=dn))(m, qb.array(r)), want, 1e-12, 1e-12)
    # The same contraction with the sparse operand on the right.
    (lc, rc), (lb, rb) = dn
    rev = ((rc, lc), (rb, lb))
    want_r = np.asarray(js.bcoo_dot_general(jnp.asarray(r), j, dimension_numbers=rev))
    assert_close(qs.bcoo_dot_general(qb.array(r), m, dimension_numbers=rev), want_r, 1e-12, 1e-12)


def test_matmul_operators():
    m, j = _pair(A)
    x, v, w = RNG.normal(size=(4, 3)), RNG.normal(size=4), RNG.normal(size=5)
    assert_close(m @ qb.array(x), np.asarray(j @ x))
    assert_close(m @ qb.array(v), np.asarray(j @ v))
    assert_close(m.T @ qb.array(w), np.asarray(j.T @ w))
    assert_close(w @ m, np.asarray(jnp.asarray(w) @ j))  # NumPy on the left defers to the BCOO
    assert_close(qs.bcoo_dot_general(qb.array(w), m, dimension_numbers=(((0,), (0,)), ((), ()))), np.asarray(jnp.asarray(w) @ j))
    mb, jb = _pair(B3, n_batch=1)
    y = RNG.normal(size=(3, 5, 2))
    assert_close(mb @ qb.array(y), np.asarray(jb @ y))
    assert_close(mb @ qb.array(y[0]), np.asarray(jb @ y[0]))


def test_sparse_sparse_dot():
    m, j = _pair(A)
    m2, j2 = _pair(_sparse_array((4, 6), seed=5))
    got = m @ m2
    assert isinstance(got, qs.BCOO) and got.nse == m.nse * m2.nse
    assert_close(got.todense(), A @ np.asarray(j2.todense()), 1e-12, 1e-12)
    assert_close(qb.jit(lambda a, b: (a @ b.T.T).todense())(m, m2), A @ np.asarray(j2.todense()), 1e-12, 1e-12)


def test_grad_data_and_dense():
    m, j = _pair(A)
    x = RNG.normal(size=(4, 3))
    w = RNG.normal(size=5)

    def f(d, xx, ww):
        M = qs.BCOO((d, m.indices), shape=m.shape)
        return ((M @ xx) ** 2).sum() + (ww @ M.todense()).sum() + (M * 3.0).sum() + qb.sum(qs.bcoo_dot_general(ww, M, dimension_numbers=(((0,), (0,)), ((), ()))) ** 3)

    def fj(d, xx, ww):
        M = js.BCOO((d, j.indices), shape=j.shape)
        return ((M @ xx) ** 2).sum() + (ww @ M.todense()).sum() + (M * 3.0).sum() + jnp.sum(js.bcoo_dot_general(ww, M, dimension_numbers=(((0,), (0,)), ((), ()))) ** 3)

    args = (m.data, qb.array(x), qb.array(w))
    want = jax.grad(fj, argnums=(0, 1, 2))(j.data, x, w)
    assert_close(qb.grad(f, argnums=(0, 1, 2))(*args), [np.asarray(g) for g in want], 1e-10, 1e-12)
    assert_close(qb.jit(qb.grad(f, argnums=(0, 1, 2)))(*args), [np.asarray(g) for g in want], 1e-10, 1e-12)
    # Through fromdense: the gradient reaches the stored positions of the dense input.
    gx = qb.grad(lambda a: (qs.BCOO.fromdense(a, nse=6) @ qb.array(x)).sum())(qb.array(A))
    gj = jax.grad(lambda a: (js.BCOO.fromdense(a, nse=6) @ x).sum())(A)
    assert_close(gx, np.asarray(gj))


def test_grad_batched_and_multiply():
    mb, jb = _pair(B3, n_batch=1)
    v = RNG.normal(size=(4, 5))

    def f(d, vv):
        M = qs.BCOO((d, mb.indices), shape=mb.shape)
        return qb.sum(qs.bcoo_multiply_dense(M, vv) ** 2) + qb.sum(M.sum(2).todense() ** 2)

    def fj(d, vv):
        M = js.BCOO((d, jb.indices), shape=jb.shape)
        return jnp.sum(js.bcoo_multiply_dense(M, vv) ** 2) + jnp.sum(M.sum(2).todense() ** 2)

    want = jax.grad(fj, argnums=(0, 1))(jb.data, v)
    assert_close(qb.grad(f, argnums=(0, 1))(mb.data, qb.array(v)), [np.asarray(g) for g in want], 1e-10, 1e-12)


def test_vmap():
    mb, jb = _pair(B3, n_batch=1)
    y = RNG.normal(size=(3, 5))
    got = qb.vmap(lambda M, yy: M @ yy)(mb, qb.array(y))
    want = jax.vmap(lambda M, yy: M @ yy)(jb, y)
    assert_close(got, np.asarray(want))
    got = qb.vmap(lambda M: M.todense())(mb)
    assert_close(got, B3)
    # A BCOO built inside vmap comes out with one more batch dimension.
    out = qb.vmap(lambda a: qs.BCOO.fromdense(a, nse=8))(qb.array(B3))
    jout = jax.vmap(lambda a: js.BCOO.fromdense(a, nse=8))(B3)
    assert out.shape == jout.shape and out.n_batch == jout.n_batch == 1
    _same_buffers(out, jout)
    # vmap over a dense operand with the sparse matrix closed over; over data with fixed indices.
    m, j = _pair(A)
    xs = RNG.normal(size=(2, 4))
    assert_close(qb.vmap(lambda v: m @ v)(qb.array(xs)), np.asarray(jax.vmap(lambda v: j @ v)(xs)))
    ds = np.stack([np.asarray(j.data), 2 * np.asarray(j.data)])
    got = qb.vmap(lambda d: qs.BCOO((d, m.indices), shape=m.shape) @ qb.array(xs[0]))(qb.array(ds))
    want = jax.vmap(lambda d: js.BCOO((d, j.indices), shape=j.shape) @ xs[0])(ds)
    assert_close(got, np.asarray(want))
    with pytest.raises(qb.errors.BatchingError):
        qb.vmap(lambda M: M.todense())(m)


@pytest.mark.parametrize("x,kw,perm", [(A, {}, (1, 0)), (B3, {"n_batch": 1}, (0, 2, 1)), (D3, {"n_dense": 1}, (1, 0, 2)),
                                       (_sparse_array((2, 3, 4, 2), seed=3), {"n_batch": 1, "n_dense": 1}, (0, 2, 1, 3))],
                         ids=["2d", "batch", "dense", "both"])
def test_transpose_sum_reshape(x, kw, perm):
    m, j = _pair(x, **kw)
    t = qs.bcoo_transpose(m, permutation=perm)
    assert_close(t.todense(), np.transpose(x, perm))
    assert_close(t.indices, np.asarray(js.bcoo_transpose(j, permutation=perm).indices))
    for ax in range(x.ndim):
        got = m.sum(ax)
        assert isinstance(got, qs.BCOO)
        assert_close(got.todense(), x.sum(ax), 1e-12, 1e-12)
    got = qs.bcoo_reduce_sum(m, axes=tuple(range(1, x.ndim)))
    assert_close(qs.todense(got), x.sum(axis=tuple(range(1, x.ndim))), 1e-12, 1e-12)
    assert_close(m.sum(), x.sum(), 1e-12, 1e-12)
    assert_close(qb.jit(lambda M: M.sum(0).todense())(m), x.sum(0), 1e-12, 1e-12)


def test_reshape():
    m, j = _pair(A)
    for shp in [(20,), (2, 10), (1, 20), (10, -1)]:
        assert_close(m.reshape(shp).todense(), A.reshape(shp))
    got = qs.bcoo_reshape(m, new_sizes=(20,))
    want = js.bcoo_reshape(j, new_sizes=(20,))
    _same_buffers(got, want)
    mb, jb = _pair(B3, n_batch=1)
    assert_close(mb.reshape(3, 20).todense(), B3.reshape(3, 20))
    with pytest.raises(qb.ShapeError, match="bcoo_reshape"):
        mb.reshape(4, 15)


def _dup():
    data = np.array([1.0, 2.0, 0.0, 4.0, 5.0])
    idx = np.array([[2, 1], [0, 3], [1, 1], [2, 1], [9, 0]], np.int32)  # a repeat, an explicit zero, padding
    return qs.BCOO((qb.array(data), qb.array(idx)), shape=(3, 4)), js.BCOO((data, idx), shape=(3, 4))


def test_sum_duplicates_sort_extract():
    m, j = _dup()
    assert_close(m.todense(), np.asarray(j.todense()))
    _same_buffers(qs.bcoo_sum_duplicates(m), js.bcoo_sum_duplicates(j))
    _same_buffers(m.sum_duplicates(), j.sum_duplicates())
    _same_buffers(m.sum_duplicates(nse=6), j.sum_duplicates(nse=6))
    got = qb.jit(lambda M: qs.bcoo_sum_duplicates(M, nse=4).todense())(m)
    assert_close(got, np.asarray(j.todense()))
    s = qs.bcoo_sort_indices(m)
    assert_close(s.todense(), np.asarray(j.todense()))
    assert s.indices.tolist()[:4] == [[0, 3], [1, 1], [2, 1], [2, 1]]
    arr = RNG.normal(size=(3, 4))
    assert_close(qs.bcoo_extract(m, qb.array(arr), assume_unique=False).data, np.asarray(js.bcoo_extract(j, arr, assume_unique=False).data))
    assert_close(qs.bcoo_extract(m, qb.array(arr), assume_unique=True).data, np.array([arr[2, 1], arr[0, 3], arr[1, 1], arr[2, 1], 0.0]))
    # Summed groups [0,3]: 2, [1,1]: 0, [2,1]: 1 + 4, padding: 5 (JAX's grad is the same).
    g = qb.grad(lambda d: qb.sum(qs.bcoo_sum_duplicates(qs.BCOO((d, m.indices), shape=m.shape), nse=4).data ** 2))(m.data)
    assert_close(g, np.array([10.0, 4.0, 0.0, 10.0, 10.0]))
    # Batched duplicates.
    mb, jb = _pair(B3, n_batch=1)
    cat = qs.BCOO((qb.concatenate([mb.data, mb.data], axis=1), qb.concatenate([mb.indices, mb.indices], axis=1)), shape=mb.shape)
    jcat = js.BCOO((jnp.concatenate([jb.data, jb.data], 1), jnp.concatenate([jb.indices, jb.indices], 1)), shape=jb.shape)
    _same_buffers(qs.bcoo_sum_duplicates(cat), js.bcoo_sum_duplicates(jcat))


def test_elementwise():
    m, j = _pair(A)
    d = RNG.normal(size=(5, 4))
    row = RNG.normal(size=(4,))
    col = RNG.normal(size=(5, 1))
    for other in (2.5, d, row, col):
        got = m * (qb.array(other) if isinstance(other, np.ndarray) else other)
        assert isinstance(got, qs.BCOO) and got.nse == m.nse
        assert_close(got.todense(), A * other)
        assert_close((other * m).todense(), A * other)  # a NumPy left operand defers to the BCOO
    assert_close((m / 2.0).todense(), A / 2.0)
    assert_close((-m).todense(), -A)
    assert_close(abs(m).todense(), np.abs(A))
    assert_close((m ** 2).todense(), A ** 2)
    assert_close(m + qb.array(d), A + d)
    A2 = _sparse_array((5, 4), seed=9)
    m2, j2 = _pair(A2)
    assert (m + m2).nse == m.nse + m2.nse
    assert_close((m + m2).todense(), A + A2)
    assert_close((m - m2).todense(), A - A2)
    prod = qs.bcoo_multiply_sparse(m, m2)
    assert_close(prod.todense(), np.asarray(js.bcoo_multiply_sparse(j, j2).todense()))
    assert prod.nse == js.bcoo_multiply_sparse(j, j2).nse
    assert_close((m * m2).todense(), A * A2)
    mb = qs.BCOO.fromdense(qb.array(B3), n_batch=1)
    C3 = _sparse_array((3, 4, 5), seed=11)
    mb2 = qs.BCOO.fromdense(qb.array(C3), n_batch=1)
    assert_close(qs.bcoo_multiply_sparse(mb, mb2).todense(), B3 * C3)
    assert_close(qs.bcoo_multiply_sparse(mb, qs.BCOO.fromdense(qb.array(C3))).todense(), B3 * C3)
    assert_close((mb * qb.array(B3[0])).todense(), B3 * B3[0])
    assert (m * m).unique_indices and m.astype("float32").dtype == qb.float32


def test_update_layout():
    x = _sparse_array((2, 3, 4), p=0.5, seed=4)
    m, j = _pair(x)
    for nb, nd in [(1, 0), (0, 1), (1, 1), (2, 0)]:
        got = qs.bcoo_update_layout(m, n_batch=nb, n_dense=nd, on_inefficient=None)
        assert (got.n_batch, got.n_dense) == (nb, nd)
        assert_close(got.todense(), x)
        back = got.update_layout(n_batch=0, n_dense=0)
        assert_close(back.todense(), x)
        if (nb, nd) == (1, 1):  # stored buffers as JAX's, both ways
            want = js.bcoo_update_layout(j, n_batch=nb, n_dense=nd, on_inefficient=None)
            _same_buffers(got, want)
            _same_buffers(back, want.update_layout(n_batch=0, n_dense=0))
    with pytest.raises(qs.SparseEfficiencyError):
        qs.bcoo_update_layout(m, n_batch=1)
    with pytest.warns(qs.SparseEfficiencyWarning):
        qs.bcoo_update_layout(m, n_dense=1, on_inefficient="warn")


def test_bcsr():
    m = qs.BCSR.fromdense(qb.array(A))
    j = js.BCSR.fromdense(A)
    for a, b in ((m.data, j.data), (m.indices, j.indices), (m.indptr, j.indptr)):
        assert_close(a, np.asarray(b))
    assert_close(m.todense(), A)
    assert_close(qs.bcsr_todense(m), A)
    x = RNG.normal(size=(4, 2))
    assert_close(m @ qb.array(x), np.asarray(j @ x))
    assert_close(qb.jit(lambda M, xx: M @ xx)(m, qb.array(x)), np.asarray(j @ x))
    mb = qs.bcsr_fromdense(qb.array(B3), n_batch=1)
    jbb = js.bcsr_fromdense(B3, n_batch=1)
    for a, b in ((mb.data, jbb.data), (mb.indices, jbb.indices), (mb.indptr, jbb.indptr)):
        assert_close(a, np.asarray(b))
    assert_close(mb.todense(), B3)
    assert_close(mb.to_bcoo().todense(), B3)
    y = RNG.normal(size=(3, 5, 2))
    assert_close(qs.bcsr_dot_general(mb, qb.array(y), dimension_numbers=(((2,), (1,)), ((0,), (0,)))), np.asarray(jbb @ y))
    assert_close(qb.vmap(lambda M: M.todense())(mb), B3)
    p = qs.BCSR.fromdense(qb.array(A), nse=10)
    assert_close(p.indptr, np.asarray(js.BCSR.fromdense(A, nse=10).indptr))
    assert_close(p.todense(), A)


def test_sparsify():
    import quabla.numpy as qnp
    m, j = _pair(A)
    v, d = RNG.normal(size=4), RNG.normal(size=(5, 4))

    def f(np_, M, vv, dd):
        return np_.dot(np_.sin(M), vv) * 2 + np_.sum(np_.multiply(M, dd), axis=0).sum() + np_.sum(np_.add(M, dd))

    got = qs.sparsify(lambda M, vv, dd: f(qnp, M, vv, dd))(m, qb.array(v), qb.array(d))
    want = js.sparsify(lambda M, vv, dd: f(jnp, M, vv, dd))(j, v, d)
    assert_close(got, np.asarray(want), 1e-12, 1e-12)
    got = qb.jit(qs.sparsify(lambda M, vv: qnp.matmul(M.T, qb.lax.dot_general(M, vv, (((1,), (0,)), ((), ()))))))(m, qb.array(v))
    assert_close(got, A.T @ (A @ v))
    # Outside the call, the functions are the package's own again.
    assert qnp.dot is qb.dot and "sparse" not in repr(qnp.sum)
    with pytest.raises(qb.errors.ArgumentTypeError):
        qnp.dot(m, qb.array(v))
    assert_close(qs.sparsify(lambda M: -M.sum(1))(m).todense(), -A.sum(1))


def test_eye_empty_random():
    for args in [(3,), (3, 4), (3, 4, 1), (4, 3, -2), (2, 2, 5)]:
        want = np.eye(*args)
        assert_close(qs.eye(*args).todense(), want)
        assert_close(qs.eye(*args, n_batch=1).todense(), want)
    _same_buffers(qs.eye(3, 4, -1), js.eye(3, 4, -1))
    assert_close(qs.eye(3, dtype="float32").todense(), np.eye(3, dtype=np.float32))
    e = qs.empty((2, 3), n_batch=1)
    assert e.n_batch == 1 and e.todense().tolist() == [[0.0] * 3] * 2
    assert_close(qs.empty((2, 3), sparse_format="bcsr").todense(), np.zeros((2, 3)))
    r = qs.random_bcoo(qb.random.PRNGKey(1), (6, 7), nse=0.3)
    assert r.nse == 13  # ceil(0.3 * 42), as JAX
    lin = r.indices.numpy()[:, 0] * 7 + r.indices.numpy()[:, 1]
    assert len(set(lin.tolist())) == 13 and ((r.data.numpy() >= 0) & (r.data.numpy() < 1)).all()
    rb = qs.random_bcoo(qb.random.PRNGKey(2), (2, 5, 3), nse=4, n_batch=1, n_dense=1, sorted_indices=True)
    assert rb.data.shape == (2, 4, 3) and rb.indices.shape == (2, 4, 1) and rb.indices_sorted


def test_dot_general_sampled():
    a, b = RNG.normal(size=(5, 3)), RNG.normal(size=(3, 4))
    m, j = _pair(A)
    for dn, aa, bb in [((((1,), (0,)), ((), ())), a, b), ((((0,), (0,)), ((), ())), a.T.copy(), b), ((((1,), (1,)), ((), ())), a, b.T.copy())]:
        want = js.bcoo_dot_general_sampled(aa, bb, j.indices, dimension_numbers=dn)
        assert_close(qs.bcoo_dot_general_sampled(qb.array(aa), qb.array(bb), m.indices, dimension_numbers=dn), np.asarray(want))
    g = qb.grad(lambda x: qb.sum(qs.bcoo_dot_general_sampled(x, qb.array(b), m.indices, dimension_numbers=(((1,), (0,)), ((), ()))) ** 2))(qb.array(a))
    gj = jax.grad(lambda x: jnp.sum(js.bcoo_dot_general_sampled(x, b, j.indices, dimension_numbers=(((1,), (0,)), ((), ()))) ** 2))(a)
    assert_close(g, np.asarray(gj))
    mb, jb = _pair(B3, n_batch=1)
    x3, y3 = RNG.normal(size=(3, 4, 2)), RNG.normal(size=(3, 2, 5))
    dn = (((2,), (1,)), ((0,), (0,)))
    assert_close(qs.bcoo_dot_general_sampled(qb.array(x3), qb.array(y3), mb.indices, dimension_numbers=dn),
                 np.asarray(js.bcoo_dot_general_sampled(x3, y3, jb.indices, dimension_numbers=dn)))


def test_graph_convolution():
    """Two GCN layers: normalized adjacency (BCOO) @ features @ weights, trained by one grad step."""
    n, f, h = 8, 3, 4
    r = np.random.default_rng(7)
    adj = (r.random((n, n)) < 0.3).astype(np.float64)
    adj = np.maximum(adj, adj.T) + np.eye(n)
    deg = adj.sum(1)
    norm = adj / np.sqrt(deg[:, None] * deg[None, :])
    feats, w1, w2 = r.normal(size=(n, f)), r.normal(size=(f, h)), r.normal(size=(h, 2))
    labels = r.integers(0, 2, size=n)

    def loss(np_, nn, A_, X, W1, W2):
        H = nn.relu(A_ @ (X @ W1))
        logits = A_ @ (H @ W2)
        return -np_.mean(np_.take_along_axis(nn.log_softmax(logits), np_.asarray(labels)[:, None], axis=1))

    Aq, Aj = qs.BCOO.fromdense(qb.array(norm)), js.BCOO.fromdense(norm)
    args_q = (qb.array(feats), qb.array(w1), qb.array(w2))
    val, grads = qb.jit(qb.value_and_grad(lambda *a: loss(qb.numpy, qb.nn, Aq, *a), argnums=(1, 2)))(*args_q)
    val_j, grads_j = jax.value_and_grad(lambda *a: loss(jnp, jax.nn, Aj, *a), argnums=(1, 2))(feats, w1, w2)
    assert_close(val, np.asarray(val_j), 1e-12, 1e-12)
    assert_close(grads, [np.asarray(g) for g in grads_j], 1e-10, 1e-12)
    # Gradient with respect to the edge weights (the adjacency's data).
    gq = qb.grad(lambda d: loss(qb.numpy, qb.nn, qs.BCOO((d, Aq.indices), shape=Aq.shape), *args_q))(Aq.data)
    gj = jax.grad(lambda d: loss(jnp, jax.nn, js.BCOO((d, Aj.indices), shape=Aj.shape), feats, w1, w2))(Aj.data)
    assert_close(gq, np.asarray(gj), 1e-10, 1e-12)


def test_errors():
    m, _ = _pair(A)
    E = qb.errors
    with pytest.raises(E.ArgumentTypeError, match="BCOO"):
        qs.BCOO("nope", shape=(2, 2))
    with pytest.raises(E.DTypeError, match="BCOO"):
        qs.BCOO((qb.ones(2), qb.ones((2, 1))), shape=(3,))
    with pytest.raises(E.ShapeError, match="BCOO"):
        qs.BCOO((qb.ones(3), qb.zeros((2, 1), dtype=qb.int32)), shape=(3,))
    with pytest.raises(E.ArgumentTypeError, match="shape"):
        qs.BCOO((qb.ones(2), qb.zeros((2, 1), dtype=qb.int32)), shape=None)
    with pytest.raises(E.ArgumentTypeError, match="bcoo_todense"):
        qs.bcoo_todense(qb.ones(3))
    with pytest.raises(E.ShapeError, match="bcoo_fromdense"):
        qs.bcoo_fromdense(qb.ones((2, 2)), n_batch=1, n_dense=1)
    with pytest.raises(E.InvalidArgumentError):
        qs.bcoo_fromdense(qb.ones((2, 2)), nse=-1)
    with pytest.raises(E.ArgumentTypeError):
        qs.bcoo_fromdense(None)
    with pytest.raises(E.ShapeError, match="bcoo_dot_general"):
        m @ qb.ones((3, 2))
    with pytest.raises(E.UnsupportedOperationError, match="dense"):
        qs.bcoo_dot_general(qs.BCOO.fromdense(qb.array(D3), n_dense=1), qb.ones((2,)), dimension_numbers=(((2,), (0,)), ((), ())))
    with pytest.raises(E.ArgumentTypeError, match="dimension_numbers"):
        qs.bcoo_dot_general(m, qb.ones(4), dimension_numbers="x")
    with pytest.raises(E.ShapeError, match="permutation"):
        qs.bcoo_transpose(m, permutation=(0, 0))
    with pytest.raises(E.UnsupportedOperationError, match="bcoo_transpose"):
        qs.BCOO.fromdense(qb.array(B3), n_batch=1).transpose((1, 0, 2))
    with pytest.raises(E.UnsupportedOperationError):
        m - qb.ones((5, 4))
    with pytest.raises(E.UnsupportedOperationError):
        m + 1.0
    with pytest.raises(E.UnsupportedOperationError):
        m * qb.ones((3, 5, 4))
    with pytest.raises(E.ShapeError, match="bcoo_extract"):
        qs.bcoo_extract(m, qb.ones((2, 2)))
    with pytest.raises(E.ArgumentTypeError, match="sparsify"):
        qs.sparsify(3)
    with pytest.raises(E.ShapeError, match="bcsr_fromdense"):
        qs.bcsr_fromdense(qb.ones(3))
    with pytest.raises(E.ConcretizationTypeError):
        qb.jit(lambda M: qs.bcoo_sum_duplicates(M).data)(m)
    with pytest.raises(E.UnsupportedOperationError):
        qs.eye(3, sparse_format="csr")
    with pytest.raises(E.InvalidArgumentError):
        qs.random_bcoo(qb.random.PRNGKey(0), (2, 2), nse=10)


def test_dense_tensor_left_operand():
    # Tensor operators return NotImplemented for operands with __array_ufunc__ = None.
    m, j = _pair(A)
    w = RNG.normal(size=5)
    assert_close(qb.array(w) @ m, np.asarray(jnp.asarray(w) @ j))
    assert_close((qb.array(A) * m).todense(), A * A)


def test_vmap_inner_batch_axis():
    x = _sparse_array((2, 3, 4, 5), seed=12)
    m, j = _pair(x, n_batch=2)
    y = RNG.normal(size=(5,))
    got = qb.vmap(lambda M: M @ qb.array(y), in_axes=1)(m)
    want = jax.vmap(lambda M: M @ y, in_axes=1)(j)
    assert_close(got, np.asarray(want))
