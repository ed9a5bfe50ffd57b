"""qb.linalg and qb.scipy.linalg against NumPy/SciPy and JAX 0.10.2 (x64): values on well-
and ill-conditioned inputs, derivatives by finite differences and against JAX, vmap and jit,
typed errors."""

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import pytest
import scipy.linalg as sl

import quabla as qb
from quabla.test_util import check_grads

jax.config.update("jax_enable_x64", True)

RNG = np.random.RandomState(0)


def spd(n, batch=(), cond=None, seed=0):
    r = np.random.RandomState(seed)
    a = r.randn(*batch, n, n)
    if cond is None:
        return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    q, _ = np.linalg.qr(r.randn(n, n))
    w = np.logspace(0, -np.log10(cond), n)
    return (q * w) @ q.T


def hilbert(n):
    i = np.arange(n)
    return 1.0 / (i[:, None] + i[None, :] + 1.0)


def close(got, want, rtol=1e-10, atol=1e-10):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------------------------
# Values


@pytest.mark.parametrize("batch", [(), (3,), (2, 2)])
def test_cholesky_matches_numpy(batch):
    a = spd(5, batch)
    close(qb.linalg.cholesky(a), np.linalg.cholesky(a), 1e-12, 1e-12)
    close(qb.linalg.cholesky(a, upper=True), np.swapaxes(np.linalg.cholesky(a), -1, -2), 1e-12, 1e-12)
    close(qb.jit(qb.linalg.cholesky)(a), np.linalg.cholesky(a), 1e-12, 1e-12)


def test_cholesky_ill_conditioned_and_not_pd():
    a = spd(8, cond=1e12)
    l = np.asarray(qb.linalg.cholesky(a))
    close(l @ l.T, a, 1e-9, 1e-12)
    close(l, np.asarray(jnp.linalg.cholesky(a)), 1e-5, 1e-8)
    bad = np.array([[1.0, 2.0], [2.0, 1.0]])
    got, want = np.asarray(qb.linalg.cholesky(bad)), np.asarray(jnp.linalg.cholesky(bad))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.nan_to_num(got), np.nan_to_num(want))


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("trans", [0, 1, "T"])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular_matches_scipy(lower, trans, unit):
    a = RNG.randn(6, 6) + 6 * np.eye(6)
    b = RNG.randn(6, 3)
    want = sl.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit)
    close(qb.scipy.linalg.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit), want, 1e-12, 1e-12)
    close(qb.linalg.solve_triangular(a, b[:, 0], trans=trans, lower=lower, unit_diagonal=unit), want[:, 0] if b.shape[1] else want, 1e-12, 1e-12)


def test_solve_triangular_batched_broadcast():
    a = np.tril(RNG.randn(4, 5, 5)) + 5 * np.eye(5)
    b = RNG.randn(1, 5, 2)
    want = jsl.solve_triangular(a, np.broadcast_to(b, (4, 5, 2)), lower=True)
    close(qb.scipy.linalg.solve_triangular(a, b, lower=True), want, 1e-12, 1e-12)
    # b with one dim fewer than a is a batch of vectors (as JAX).
    v = RNG.randn(4, 5)
    close(qb.scipy.linalg.solve_triangular(a, v, lower=True), jsl.solve_triangular(a, v, lower=True), 1e-12, 1e-12)


@pytest.mark.parametrize("batch", [(), (3,)])
def test_solve_inv_det_slogdet(batch):
    a = RNG.randn(*batch, 5, 5)
    b = RNG.randn(*batch, 5, 2)
    close(qb.linalg.solve(a, b), np.linalg.solve(a, b))
    close(qb.linalg.inv(a), np.linalg.inv(a))
    close(qb.linalg.det(a), np.linalg.det(a))
    s, l = qb.linalg.slogdet(a)
    ws, wl = np.linalg.slogdet(a)
    close(s, ws)
    close(l, wl)
    v = RNG.randn(5)
    close(qb.linalg.solve(a, v), np.asarray(jnp.linalg.solve(a, v)))


def test_solve_ill_conditioned_hilbert():
    a = hilbert(8)  # condition number ~1.5e10
    x = np.arange(1.0, 9.0)
    b = a @ x
    got = np.asarray(qb.linalg.solve(a, b))
    close(got, np.linalg.solve(a, b), 1e-5, 1e-6)
    close(got, x, 1e-4, 1e-4)
    close(qb.linalg.det(a), np.linalg.det(a), 1e-6, 0)


def test_lu_factor_matches_scipy():
    a = RNG.randn(6, 6)
    lu, piv = qb.scipy.linalg.lu_factor(a)
    wlu, wpiv = sl.lu_factor(a)
    close(lu, wlu, 1e-12, 1e-12)
    assert np.asarray(piv).tolist() == wpiv.tolist()


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 6, 4)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_matches_numpy(shape, mode):
    a = RNG.randn(*shape)
    q, r = qb.linalg.qr(a, mode=mode)
    wq, wr = np.linalg.qr(a, mode=mode)
    close(q, wq, 1e-10, 1e-10)
    close(r, wr, 1e-10, 1e-10)
    close(qb.linalg.qr(a, mode="r"), np.linalg.qr(a, mode="r"), 1e-10, 1e-10)


@pytest.mark.parametrize("batch", [(), (3,)])
def test_eigh_matches_numpy(batch):
    a = RNG.randn(*batch, 6, 6)
    a = a + np.swapaxes(a, -1, -2)
    w, v = qb.linalg.eigh(a)
    ww, wv = np.linalg.eigh(a)
    close(w, ww, 1e-10, 1e-10)
    # Eigenvectors agree up to sign.
    d = np.sum(np.asarray(v) * wv, axis=-2)
    close(np.abs(d), np.ones_like(d), 1e-9, 1e-9)
    v = np.asarray(v)
    close(v @ (np.asarray(w)[..., :, None] * np.swapaxes(v, -1, -2)), a, 1e-10, 1e-10)
    close(qb.linalg.eigvalsh(a), ww, 1e-10, 1e-10)


def test_eigh_ill_conditioned_and_upper():
    a = spd(7, cond=1e13)
    close(qb.linalg.eigh(a).eigenvalues, np.linalg.eigvalsh(a), 1e-12, 1e-15)
    b = RNG.randn(5, 5)
    close(qb.linalg.eigh(b, UPLO="U", symmetrize_input=False).eigenvalues, np.linalg.eigvalsh(b, UPLO="U"), 1e-10, 1e-10)
    close(qb.linalg.eigh(b, UPLO="L", symmetrize_input=False).eigenvalues, np.linalg.eigvalsh(b, UPLO="L"), 1e-10, 1e-10)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 3, 6)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_matches_numpy(shape, full):
    a = RNG.randn(*shape)
    u, s, vt = qb.linalg.svd(a, full_matrices=full)
    wu, ws, wvt = np.linalg.svd(a, full_matrices=full)
    close(s, ws, 1e-10, 1e-10)
    u, s, vt = np.asarray(u), np.asarray(s), np.asarray(vt)
    assert u.shape == wu.shape and vt.shape == wvt.shape
    k = s.shape[-1]
    close((u[..., :, :k] * s[..., None, :]) @ vt[..., :k, :], a, 1e-10, 1e-10)
    close(np.swapaxes(u, -1, -2) @ u, np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] + (u.shape[-1],) * 2), 1e-10, 1e-10)
    close(vt @ np.swapaxes(vt, -1, -2), np.broadcast_to(np.eye(vt.shape[-2]), vt.shape[:-2] + (vt.shape[-2],) * 2), 1e-10, 1e-10)


def test_svd_rank_deficient_and_ill_conditioned():
    a = RNG.randn(6, 2) @ RNG.randn(2, 4)  # rank 2
    u, s, vt = qb.linalg.svd(a)
    close(s, np.linalg.svd(a, compute_uv=False), 1e-10, 1e-10)
    u = np.asarray(u)
    close(u.T @ u, np.eye(6), 1e-10, 1e-10)
    h = hilbert(7)
    close(qb.linalg.svdvals(h), np.linalg.svd(h, compute_uv=False), 1e-9, 1e-16)


@pytest.mark.parametrize("ord", [None, 1, -1, 2, -2, np.inf, -np.inf, "fro", "nuc"])
def test_matrix_norms(ord):
    a = RNG.randn(4, 3)
    close(qb.linalg.norm(a, ord=ord), np.linalg.norm(a, ord=ord))
    b = RNG.randn(2, 4, 3)
    close(qb.linalg.norm(b, ord=ord, axis=(1, 2)), np.linalg.norm(b, ord=ord, axis=(1, 2)))
    close(qb.linalg.norm(b, ord=ord, axis=(2, 1), keepdims=True), np.linalg.norm(b, ord=ord, axis=(2, 1), keepdims=True))


@pytest.mark.parametrize("ord", [None, 1, 2, 3, 0.5, 0, np.inf, -np.inf])
def test_vector_norms(ord):
    x = RNG.randn(3, 5)
    close(qb.linalg.norm(x[0], ord=ord), np.linalg.norm(x[0], ord=ord))
    close(qb.linalg.norm(x, ord=ord, axis=1), np.linalg.norm(x, ord=ord, axis=1))
    close(qb.linalg.norm(x, ord=ord, axis=0, keepdims=True), np.linalg.norm(x, ord=ord, axis=0, keepdims=True))


def test_norm_default_flattens():
    x = RNG.randn(2, 3, 4)
    close(qb.linalg.norm(x), np.linalg.norm(x))
    close(qb.linalg.norm(x, keepdims=True), np.linalg.norm(x.reshape(-1)).reshape(1, 1, 1))


def test_pinv_lstsq_matrix_power():
    a = RNG.randn(6, 4)
    close(qb.linalg.pinv(a), np.linalg.pinv(a), 1e-10, 1e-10)
    r = RNG.randn(5, 2) @ RNG.randn(2, 5)
    close(qb.linalg.pinv(r), np.asarray(jnp.linalg.pinv(r)), 1e-8, 1e-10)
    b = RNG.randn(6, 2)
    x, resid, rank, s = qb.linalg.lstsq(a, b)
    wx, wres, wrank, ws = np.linalg.lstsq(a, b, rcond=None)
    close(x, wx)
    close(resid, wres)
    assert int(rank) == wrank
    close(s, ws)
    m = RNG.randn(2, 4, 4) / 2
    for n in [0, 1, 2, 5, -1, -3]:
        close(qb.linalg.matrix_power(m, n), np.linalg.matrix_power(m, n), 1e-9, 1e-9)


def test_cho_factor_cho_solve():
    a = spd(6)
    b = RNG.randn(6, 3)
    for lower in [False, True]:
        c = qb.scipy.linalg.cho_factor(a, lower=lower)
        assert c[1] is lower
        wc = jsl.cho_factor(a, lower=lower)
        close(c[0], np.asarray(wc[0]), 1e-12, 1e-12)
        close(qb.scipy.linalg.cho_solve(c, b), sl.cho_solve(sl.cho_factor(a, lower=lower), b), 1e-10, 1e-10)
        close(qb.scipy.linalg.cho_solve(c, b[:, 0]), np.linalg.solve(a, b[:, 0]), 1e-10, 1e-10)
    close(qb.scipy.linalg.cholesky(a), sl.cholesky(a), 1e-12, 1e-12)


def test_float32():
    a = spd(5).astype(np.float32)
    l = qb.linalg.cholesky(a)
    assert l.dtype == qb.float32
    close(l, np.linalg.cholesky(a.astype(np.float64)), 1e-5, 1e-5)
    w, _ = qb.linalg.eigh(a)
    assert w.dtype == qb.float32
    close(w, np.linalg.eigvalsh(a.astype(np.float64)), 1e-4, 1e-4)


def test_interpreter_agrees_with_the_jit():
    a = RNG.randn(5, 5)
    s = a @ a.T + np.eye(5)

    def f(x):
        u, sv, vt = qb.linalg.svd(x[:, :3])
        return (qb.linalg.cholesky(x), sv, qb.linalg.qr(x)[1], qb.linalg.eigh(x)[0], qb.linalg.det(x), qb.linalg.solve(x, x[0]))

    program = qb.jit(f).lower(s).program
    xs = [qb.asarray(s)]
    got, want = program.compile(False, None)(xs), program.compile(True, None)(xs)
    assert len(got) == len(want) == 6
    for g, w in zip(got, want):
        close(g, w, 1e-13, 1e-13)


# ---------------------------------------------------------------------------------------------
# The blocked kernels (interp/src/linalg/: recursive halves down to 16-row blocks, GEMM updates,
# LU panels of 64): sizes on and across the block boundaries, many right-hand sides, every
# triangular_solve variant, against SciPy / NumPy (not against the kernels).

BLOCK_SIZES = [1, 31, 32, 33, 65, 130, 257]


def _chol_op(a, lower):
    from quabla.linalg import _o, bind

    return bind(_o._op("cholesky", lower=lower), qb.asarray(a))


@pytest.mark.parametrize("n", BLOCK_SIZES)
def test_blocked_cholesky_across_block_sizes(n):
    a = spd(n, seed=n)
    want = np.linalg.cholesky(a)
    close(qb.jit(qb.linalg.cholesky)(a), want, 1e-11, 1e-11)
    # The kernel's own upper variant reads only the upper triangle: garbage below it.
    junk = np.triu(a) + np.tril(np.full((n, n), 7.0), -1)
    close(qb.jit(lambda x: _chol_op(x, False))(junk), want.T, 1e-11, 1e-11)
    close(qb.jit(lambda x: _chol_op(x, True))(np.tril(a) + np.triu(np.full((n, n), np.nan), 1)), want, 1e-11, 1e-11)


@pytest.mark.parametrize("n", [65, 130])
def test_blocked_cholesky_ill_conditioned_and_late_failure(n):
    a = spd(n, cond=1e10, seed=1)
    l = np.asarray(qb.jit(qb.linalg.cholesky)(a))
    close(l @ l.T, a, 1e-8, 1e-12)
    close(l, np.linalg.cholesky(a), 1e-4, 1e-7)
    # Positive definite except in the last direction: the failure shows only at the last
    # pivot (past every block), and the whole triangle is NaN, as JAX.
    q, _ = np.linalg.qr(np.random.RandomState(2).randn(n, n))
    bad = (q * np.r_[np.ones(n - 1), -1.0]) @ q.T
    got, want = np.asarray(qb.jit(qb.linalg.cholesky)(bad)), np.asarray(jnp.linalg.cholesky(bad))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.isnan(got[np.tril_indices(n)]).all() and (got[np.triu_indices(n, 1)] == 0).all()


@pytest.mark.parametrize("m,k", [(1, 1), (33, 3), (65, 67), (130, 5), (257, 40)])
@pytest.mark.parametrize("left_side", [True, False])
def test_blocked_triangular_solve_every_variant(m, k, left_side):
    from quabla.linalg import _trsm

    r = np.random.RandomState(m * 7 + k)
    a = r.randn(m, m) / np.sqrt(m) + 3 * np.eye(m)
    b = r.randn(m, k) if left_side else r.randn(k, m)
    f = qb.jit(_trsm, static_argnums=(2, 3, 4, 5))
    for lower in (True, False):
        for trans in (False, True):
            for unit in (False, True):
                t = np.tril(a) if lower else np.triu(a)
                if unit:
                    np.fill_diagonal(t, 1.0)
                op = t.T if trans else t
                # The other triangle of a is garbage the kernel must not read.
                junk = t + (np.triu if lower else np.tril)(np.full((m, m), np.nan), 1 if lower else -1)
                if unit:
                    np.fill_diagonal(junk, np.nan)
                want = np.linalg.solve(op, b) if left_side else np.linalg.solve(op.T, b.T).T
                got = f(junk, b, left_side, lower, trans, unit)
                close(got, want, 1e-10, 1e-10)


@pytest.mark.parametrize("n", [33, 130, 257])
def test_blocked_cho_solve_many_rhs_and_batches(n):
    a = spd(n, batch=(2,), seed=n)
    b = np.random.RandomState(n).randn(2, n, 70)
    got = qb.jit(lambda a, b: qb.scipy.linalg.cho_solve(qb.scipy.linalg.cho_factor(a, lower=True), b))(a, b)
    close(got, np.linalg.solve(a, b), 1e-9, 1e-9)


@pytest.mark.parametrize("shape", [(1, 1), (65, 65), (130, 130), (257, 257), (130, 70), (70, 130), (3, 200)])
def test_blocked_lu_matches_scipy(shape):
    a = np.random.RandomState(sum(shape)).randn(*shape)
    lu, piv = qb.jit(qb.scipy.linalg.lu_factor)(a) if shape[0] == shape[1] else (None, None)
    if lu is not None:
        wlu, wpiv = sl.lu_factor(a)
        close(lu, wlu, 1e-9, 1e-9)
        assert np.asarray(piv).tolist() == wpiv.tolist()
    from quabla.linalg import _o, bind

    lu, piv, perm = qb.jit(lambda x: bind(_o._op("lu"), x))(a)
    lu, perm = np.asarray(lu), np.asarray(perm)
    m, n = shape
    k = min(m, n)
    lo = np.tril(lu[:, :k], -1) + np.eye(m, k)
    up = np.triu(lu[:k, :])
    close(lo @ up, a[perm], 1e-10, 1e-10)
    p, wl, wu = sl.lu(a)
    close(lo, wl, 1e-9, 1e-9)
    close(up, wu, 1e-9, 1e-9)


def test_blocked_solve_inv_det_large():
    a = np.random.RandomState(5).randn(130, 130)
    b = np.random.RandomState(6).randn(130, 9)
    close(qb.jit(qb.linalg.solve)(a, b), np.linalg.solve(a, b), 1e-9, 1e-9)
    close(qb.jit(qb.linalg.inv)(a), np.linalg.inv(a), 1e-9, 1e-9)
    close(qb.jit(qb.linalg.slogdet)(a)[1], np.linalg.slogdet(a)[1], 1e-10, 1e-10)


def test_blocked_float32():
    a = spd(130, seed=3).astype(np.float32)
    l = qb.jit(qb.linalg.cholesky)(a)
    assert l.dtype == qb.float32
    close(l, np.linalg.cholesky(a.astype(np.float64)), 2e-4, 2e-4)
    b = np.random.RandomState(4).randn(130, 40).astype(np.float32)
    x = qb.jit(lambda a, b: qb.scipy.linalg.cho_solve(qb.scipy.linalg.cho_factor(a, lower=True), b))(a, b)
    close(x, np.linalg.solve(a.astype(np.float64), b.astype(np.float64)), 1e-4, 1e-4)


@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-11), (np.float32, 2e-4)])
def test_blocked_decompositions_large(dtype, tol):
    # Sizes past the kernels' blocks (panels and reflector blocks of 32, blocked Qᵀ from 48
    # reflectors): eigh, svd and qr jitted, their vectors used or not (the kernels then
    # compute the values alone), against NumPy in f64.
    r = np.random.RandomState(7)
    a = r.randn(100, 100)
    sym = (a + a.T).astype(dtype)
    w, v = qb.jit(qb.linalg.eigh)(sym)
    w, v = np.asarray(w, np.float64), np.asarray(v, np.float64)
    s64 = sym.astype(np.float64)
    close(w, np.linalg.eigvalsh(s64), tol, tol * 10)
    close(s64 @ v, v * w, tol * 100, tol * 100)
    close(v.T @ v, np.eye(100), tol * 10, tol * 10)
    close(qb.jit(qb.linalg.eigvalsh)(sym), w, 0, 0)
    for m, n in [(130, 90), (90, 130), (70, 70)]:
        x = r.randn(m, n).astype(dtype)
        x64 = x.astype(np.float64)
        for full in (False, True):
            u, sv, vt = (np.asarray(t, np.float64) for t in qb.jit(lambda x: qb.linalg.svd(x, full_matrices=full))(x))
            k = min(m, n)
            close(sv, np.linalg.svd(x64, compute_uv=False), tol, tol * 10)
            close((u[:, :k] * sv) @ vt[:k], x64, tol * 100, tol * 100)
            close(u.T @ u, np.eye(u.shape[1]), tol * 10, tol * 10)
            close(vt @ vt.T, np.eye(vt.shape[0]), tol * 10, tol * 10)
        close(qb.jit(lambda x: qb.linalg.svd(x, compute_uv=False))(x), sv, 0, 0)
        q, rr = (np.asarray(t, np.float64) for t in qb.jit(qb.linalg.qr)(x))
        wq, wr = np.linalg.qr(x64)
        close(np.abs(rr), np.abs(wr), tol * 100, tol * 100)
        close(q @ rr, x64, tol * 100, tol * 100)
        close(qb.jit(lambda x: qb.linalg.qr(x, mode="r"))(x), rr, 0, 0)


# ---------------------------------------------------------------------------------------------
# Derivatives


def _sym(x):
    return (x + np.swapaxes(x, -1, -2)) / 2


GRAD_CASES = {
    "cholesky": (lambda m: qb.linalg.cholesky(m @ m.T + 3 * qb.eye(4)), lambda m: jnp.linalg.cholesky(m @ m.T + 3 * jnp.eye(4))),
    "cholesky_upper": (lambda m: qb.linalg.cholesky(m @ m.T + 3 * qb.eye(4), upper=True), lambda m: jnp.linalg.cholesky(m @ m.T + 3 * jnp.eye(4), upper=True)),
    "solve": (lambda m: qb.linalg.solve(m + 4 * qb.eye(4), m[:, :2]), lambda m: jnp.linalg.solve(m + 4 * jnp.eye(4), m[:, :2])),
    "inv": (lambda m: qb.linalg.inv(m + 4 * qb.eye(4)), lambda m: jnp.linalg.inv(m + 4 * jnp.eye(4))),
    "det": (lambda m: qb.linalg.det(m), lambda m: jnp.linalg.det(m)),
    "slogdet": (lambda m: qb.linalg.slogdet(m + 4 * qb.eye(4))[1], lambda m: jnp.linalg.slogdet(m + 4 * jnp.eye(4))[1]),
    "qr": (lambda m: qb.linalg.qr(m[:, :3]), lambda m: jnp.linalg.qr(m[:, :3])),
    "qr_square": (lambda m: qb.linalg.qr(m), lambda m: jnp.linalg.qr(m)),
    "eigh_w": (lambda m: qb.linalg.eigh(m + m.T)[0], lambda m: jnp.linalg.eigh(m + m.T)[0]),
    "eigh_vv": (lambda m: qb.linalg.eigh(m + m.T)[1] ** 2, lambda m: jnp.linalg.eigh(m + m.T)[1] ** 2),
    "svd_s": (lambda m: qb.linalg.svd(m[:, :3], compute_uv=False), lambda m: jnp.linalg.svd(m[:, :3], compute_uv=False)),
    "svd_uv_tall": (lambda m: _svd_inv(qb, m[:, :3]), lambda m: _svd_inv(jnp, m[:, :3])),
    "svd_uv_wide": (lambda m: _svd_inv(qb, m[:3, :]), lambda m: _svd_inv(jnp, m[:3, :])),
    "triangular": (lambda m: qb.scipy.linalg.solve_triangular(m + 4 * qb.eye(4), m[:, :2], lower=True, trans=1), lambda m: jsl.solve_triangular(m + 4 * jnp.eye(4), m[:, :2], lower=True, trans=1)),
    "triangular_unit_upper": (lambda m: qb.scipy.linalg.solve_triangular(m, m[:, 1:3], lower=False, unit_diagonal=True), lambda m: jsl.solve_triangular(m, m[:, 1:3], lower=False, unit_diagonal=True)),
    "cho_solve": (lambda m: qb.scipy.linalg.cho_solve(qb.scipy.linalg.cho_factor(m @ m.T + qb.eye(4)), m[:, 0]), lambda m: jsl.cho_solve(jsl.cho_factor(m @ m.T + jnp.eye(4)), m[:, 0])),
    "pinv": (lambda m: qb.linalg.pinv(m[:, :3]), lambda m: jnp.linalg.pinv(m[:, :3])),
    "norm2": (lambda m: qb.linalg.norm(m, ord=2), lambda m: jnp.linalg.norm(m, ord=2)),
}


def _svd_inv(np_, a):
    """Sign-invariant functions of the singular vectors: u diag(s) vᵀ pieces."""
    u, s, vt = np_.linalg.svd(a, full_matrices=False)
    return (u * s[None, :]) @ vt + (u[:, :1] @ vt[:1, :]) ** 2


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_derivatives_match_jax_and_finite_differences(name):
    f, jf = GRAD_CASES[name]
    m = np.random.RandomState(1).randn(4, 4)

    def loss(np_, fn):
        def g(x):
            out = fn(x)
            outs = out if isinstance(out, tuple) else (out,)
            w = [np.cos(np.arange(o.size)).reshape(o.shape) for o in outs]
            return sum(np_.sum(o * wi) for o, wi in zip(outs, w))

        return g

    ql, jl = loss(qb, f), loss(jnp, jf)
    close(ql(m), jl(m), 1e-9, 1e-9)
    close(qb.grad(ql)(m), jax.grad(jl)(m), 1e-7, 1e-8)
    t = np.random.RandomState(2).randn(4, 4)
    close(qb.jvp(ql, (m,), (t,))[1], jax.jvp(jl, (m,), (t,))[1], 1e-7, 1e-8)
    check_grads(lambda x: f(x), (m,), order=1, modes=("fwd", "rev"))


def test_second_order_cholesky_logdet():
    m = np.random.RandomState(3).randn(3, 3)
    a = m @ m.T + 3 * np.eye(3)

    def q(x):
        return 2 * qb.sum(qb.log(qb.sum(qb.linalg.cholesky(x) * qb.eye(3), axis=-1)))

    def j(x):
        return 2 * jnp.sum(jnp.log(jnp.diagonal(jnp.linalg.cholesky(x))))

    close(qb.hessian(q)(a), jax.hessian(j)(a), 1e-8, 1e-9)
    close(qb.grad(q)(a), np.linalg.inv(a), 1e-10, 1e-10)


# ---------------------------------------------------------------------------------------------
# Batching


@pytest.mark.parametrize("name", ["cholesky", "solve", "det", "qr", "eigh_w", "svd_s", "triangular"])
def test_vmap_matches_loop_and_jax(name):
    f, jf = GRAD_CASES[name]
    xs = np.random.RandomState(4).randn(3, 4, 4)
    got = qb.vmap(f)(xs)
    want = jax.vmap(jf)(xs)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        close(g, w, 1e-9, 1e-9)
    # grad of vmap and vmap of grad.
    gq = qb.grad(lambda x: qb.sum(qb.vmap(lambda y: _first(f(y)))(x)))(xs)
    gj = jax.grad(lambda x: jnp.sum(jax.vmap(lambda y: _first(jf(y)))(x)))(xs)
    close(gq, gj, 1e-7, 1e-8)
    vg = qb.vmap(qb.grad(lambda y: qb.sum(_first(f(y)))))(xs)
    close(vg, gj, 1e-7, 1e-8)


def _first(out):
    return out[0] if isinstance(out, tuple) else out


def test_vmap_solve_triangular_unbatched_matrix():
    a = np.tril(RNG.randn(4, 4)) + 4 * np.eye(4)
    bs = RNG.randn(5, 4, 2)
    got = qb.vmap(lambda b: qb.scipy.linalg.solve_triangular(a, b, lower=True))(bs)
    close(got, np.stack([sl.solve_triangular(a, b, lower=True) for b in bs]), 1e-12, 1e-12)
    got = qb.vmap(lambda m: qb.scipy.linalg.solve_triangular(m, bs[0], lower=True), in_axes=0)(np.stack([a, 2 * a]))
    close(got[1], sl.solve_triangular(2 * a, bs[0], lower=True), 1e-12, 1e-12)


# ---------------------------------------------------------------------------------------------
# Errors


def test_typed_errors():
    with pytest.raises(qb.ShapeError, match="cholesky"):
        qb.linalg.cholesky(np.ones((3, 4)))
    with pytest.raises(qb.ShapeError, match="solve"):
        qb.linalg.solve(np.eye(3), np.ones(4))
    with pytest.raises(qb.ShapeError, match="at least two"):
        qb.linalg.det(np.ones(3))
    with pytest.raises(qb.UnsupportedOperationError, match="ord"):
        qb.linalg.norm(np.ones((2, 2)), ord="bogus")
    with pytest.raises(qb.UnsupportedOperationError, match="mode"):
        qb.linalg.qr(np.ones((2, 2)), mode="economic")
    with pytest.raises(qb.UnsupportedOperationError, match="qr"):
        qb.grad(lambda x: qb.sum(qb.linalg.qr(x)[0]))(np.ones((2, 4)))
    with pytest.raises(qb.DTypeError, match="triangular_solve"):
        from quabla import _quabla as _q
        from quabla._trace import bind

        bind(_q.Op("triangular_solve", left_side=True, lower=True, transpose_a=False, unit_diagonal=False), qb.eye(2), qb.ones((2, 2), dtype=qb.float32))


def test_gp_likelihood_and_gradient_match_jax():
    """The examples/gp.py objective (Cholesky likelihood) and its gradient in the kernel's
    hyperparameters, against the same program in JAX."""
    import importlib.util
    import os

    spec = importlib.util.spec_from_file_location("gp", os.path.join(os.path.dirname(__file__), "..", "..", "examples", "gp.py"))
    gp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gp)
    r = np.random.RandomState(5)
    x = np.sort(r.uniform(-2, 2, 30))
    y = np.sin(3 * x) + 0.1 * r.randn(30)
    p = np.array([-0.5, 0.2, -3.0])

    def jnll(params):
        ell2 = jnp.exp(2 * params[0])
        d = x[:, None] - x[None, :]
        k = jnp.exp(params[1]) * jnp.exp(-0.5 * d * d / ell2) + (jnp.exp(params[2]) + 1e-8) * jnp.eye(30)
        l = jnp.linalg.cholesky(k)
        alpha = jsl.cho_solve((l, True), y)
        return 0.5 * y @ alpha + jnp.sum(jnp.log(jnp.diagonal(l))) + 15 * np.log(2 * np.pi)

    v, g = qb.jit(qb.value_and_grad(gp.nll))(p, x, y)
    close(v, jnll(p), 1e-10, 1e-10)
    close(g, jax.grad(jnll)(p), 1e-8, 1e-8)
