"""qb.scipy.linalg against jax.scipy.linalg (JAX 0.10.2, x64): decompositions and solves,
expm and its Frechet derivative, polar, Hessenberg, Sylvester, and the special matrices:
values and dtypes eagerly and under jit, gradients, vmap against loops, float32 staying
float32, and typed errors for bad input.

JAX compiles every function per shape (seconds each on a loaded 2-core machine), so JAX is
called where its semantics are its own (batching rules, dtypes, expm's algorithm and its
derivative, 'pos' solves' derivative); elsewhere SciPy, whose results JAX's reproduce for these
functions (checked when this file was written), is the oracle, with the dtypes JAX gives."""

import builtins
import doctest

import numpy as np
import pytest
import scipy.linalg as sl

import quabla as qb
import quabla.scipy.linalg as Q
from breadth_util import assert_close, to_np

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.scipy.linalg as J  # noqa: E402

RNG = np.random.default_rng(7)
A4 = RNG.standard_normal((4, 4))
B42 = RNG.standard_normal((4, 2))
SPD = A4 @ A4.T + 4 * np.eye(4)


def close(got, want, rtol=1e-10, atol=1e-10, what="", dtype=None):
    """assert_close, also checking the dtype (``dtype``, else the oracle's) element by element."""
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), what
        for g, w in zip(got, want):
            close(g, w, rtol, atol, what, dtype)
        return
    want_dt = np.dtype(dtype) if dtype is not None else np.asarray(want).dtype
    assert to_np(got).dtype == want_dt, f"{what}: dtype {to_np(got).dtype} vs {want_dt}"
    assert_close(got, np.asarray(want).astype(want_dt), rtol, atol, what)


def qa(x):
    return qb.array(x) if isinstance(x, np.ndarray) else x


# ---------------------------------------------------------------------------------------------
# Special matrices


def test_special_matrices():
    c, r, ci = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0, 7.0]), np.array([1, 4, 2])
    # (name, args, the dtype JAX with x64 gives)
    cases = [
        ("toeplitz", (c,), "f8"), ("toeplitz", (c, r), "f8"), ("toeplitz", (ci,), "i8"), ("toeplitz", (c, r[:1]), "f8"),
        ("hankel", (c,), "f8"), ("hankel", (c, r), "f8"), ("hankel", (ci, ci), "i8"),
        ("circulant", (c,), "f8"), ("circulant", (ci,), "i8"), ("fiedler", (ci,), "i8"), ("fiedler", (c,), "f8"),
        ("companion", (r,), "f8"), ("companion", (np.array([2, -3]),), "f8"),
        ("fiedler_companion", (np.array([2.0, 3.0, 4.0, 5.0, 6.0, 7.0]),), "f8"), ("fiedler_companion", (np.array([2.0, 3.0, 4.0, 5.0, 6.0]),), "f8"),
        ("fiedler_companion", (np.array([2.0, 3.0]),), "f8"), ("fiedler_companion", (np.array([1, 2, 3]),), "f8"),
        ("leslie", (c, np.array([0.5, 0.6])), "f8"), ("leslie", (np.array([1, 2]), np.array([3])), "i8"),
        ("hilbert", (5,), "f8"), ("hilbert", (1,), "f8"), ("invhilbert", (6,), "f8"), ("invhilbert", (1,), "f8"),
        ("invpascal", (6,), "f8"), ("invpascal", (5, "lower"), "f8"), ("invpascal", (5, "upper"), "f8"),
        ("pascal", (6,), "f4"), ("pascal", (5, "lower"), "f4"), ("pascal", (5, "upper"), "f4"), ("pascal", (14,), "f4"),
        ("helmert", (5,), "f8"), ("helmert", (5, True), "f8"), ("helmert", (1, True), "f8"),
        ("hadamard", (8,), "i8"), ("hadamard", (1,), "i8"), ("hadamard", (4, float), "f8"), ("hadamard", (4, np.int32), "i4"),
    ]
    for mode in ("full", "same", "valid"):
        cases += [("convolution_matrix", (c, 5, mode), "f8"), ("convolution_matrix", (r, 2, mode), "f8"), ("convolution_matrix", (np.arange(1, 6), 3, mode), "i8")]
    for name, args, dt in cases:
        close(getattr(Q, name)(*[qa(a) for a in args]), getattr(sl, name)(*args), 1e-14, 1e-14, f"{name}{args}", dt)
    # Exact integers where JAX's float formulas round (JAX's pascal is float32 from lgamma).
    assert_close(Q.invhilbert(12), sl.invhilbert(12, exact=True).astype(np.float64), 0, 0)
    assert_close(Q.invhilbert(120), sl.invhilbert(120), 1e-10, 0)
    close(Q.block_diag(qb.array([[1, 2]]), 3.0, qb.array([1.0, 2.0, 3.0])), sl.block_diag([[1, 2]], 3.0, [1.0, 2.0, 3.0]), 0, 0)
    close(Q.block_diag(qb.array([[1, 2], [3, 4]]), qb.array([5])), sl.block_diag([[1, 2], [3, 4]], [5]), 0, 0)
    close(Q.block_diag(qb.array(np.ones((2, 2), np.float32)), 2.0), sl.block_diag(np.ones((2, 2)), 2.0), 0, 0, "weak scalar", "f4")


def test_special_matrices_batch_jit_grad_f32():
    # JAX's batching: toeplitz / hankel / leslie broadcast c and r's leading dims; the others map.
    cb, rb, hb = RNG.standard_normal((2, 3)), RNG.standard_normal(4), RNG.standard_normal((3, 1, 2))
    close(Q.toeplitz(qb.array(cb), qb.array(rb)), J.toeplitz(cb, rb), 0, 0, "toeplitz batch")
    close(Q.hankel(qb.array(cb), qb.array(hb)), np.stack([[sl.hankel(cb[j], hb[i, 0]) for j in range(2)] for i in range(3)]), 0, 0, "hankel batch")
    sb = RNG.standard_normal((4, 1, 2))
    close(Q.leslie(qb.array(cb), qb.array(sb)), np.stack([[sl.leslie(cb[j], sb[i, 0]) for j in range(2)] for i in range(4)]), 0, 0, "leslie batch")
    x = RNG.standard_normal((2, 5))
    for name in ("circulant", "companion", "fiedler", "fiedler_companion"):
        close(getattr(Q, name)(qb.array(x)), np.stack([getattr(sl, name)(v) for v in x]), 1e-14, 1e-14, f"{name} batch")
    close(Q.convolution_matrix(qb.array(cb), 4, "same"), np.stack([sl.convolution_matrix(v, 4, "same") for v in cb]), 0, 0, "convolution batch")
    c, r = RNG.standard_normal(3), RNG.standard_normal(4)
    f = qb.jit(lambda c, r: (Q.toeplitz(c, r), Q.hankel(c, r), Q.circulant(c), Q.companion(r), Q.fiedler_companion(r), Q.leslie(r, c), Q.convolution_matrix(c, 4), Q.hilbert(3)))
    want = (sl.toeplitz(c, r), sl.hankel(c, r), sl.circulant(c), sl.companion(r), sl.fiedler_companion(r), sl.leslie(r, c), sl.convolution_matrix(c, 4), sl.hilbert(3))
    close(f(qb.array(c), qb.array(r)), want, 1e-14, 1e-14, "jit")
    qb.test_util.check_grads(lambda c, r: (Q.toeplitz(c, r), Q.hankel(c, r), Q.companion(r), Q.fiedler_companion(r), Q.leslie(r, c)), (qb.array(c), qb.array(r)), order=1)
    got = qb.vmap(Q.toeplitz)(qb.array(np.stack([c, 2 * c])), qb.array(np.stack([r, -r])))
    close(got, np.stack([sl.toeplitz(c, r), sl.toeplitz(2 * c, -r)]), 0, 0, "vmap")
    c32 = c.astype(np.float32)
    for name in ("toeplitz", "hankel", "circulant", "companion", "fiedler", "fiedler_companion"):
        assert getattr(Q, name)(qb.array(c32)).dtype == qb.float32, name


# ---------------------------------------------------------------------------------------------
# Decompositions and solves


def test_det_inv_solve():
    a, b = qb.array(A4), qb.array(B42)
    close(Q.det(a), np.linalg.det(A4), 1e-12, 1e-12)
    close(Q.inv(a), np.linalg.inv(A4), 1e-11, 1e-11)
    for assume_a in ("gen", "sym", "her", "pos"):
        m = SPD if assume_a != "gen" else A4
        for lower in (False, True):
            close(Q.solve(qb.array(m), b, lower=lower, assume_a=assume_a), np.linalg.solve(m, B42), 1e-11, 1e-11, assume_a)
        close(Q.solve(qb.array(m), b[:, 0], assume_a=assume_a), np.linalg.solve(m, B42[:, 0]), 1e-11, 1e-11, assume_a)
    # Gradients: det -> det a^-T, inv -> -a^-T w a^-T, solve -> (-lam x^T, lam), lam = a^-T dL/dx.
    w = RNG.standard_normal((4, 4))
    ai = np.linalg.inv(A4)
    close(qb.grad(Q.det)(a), np.linalg.det(A4) * ai.T, 1e-10, 1e-10, "grad det")
    close(qb.grad(lambda x: (Q.inv(x) * w).sum())(a), -ai.T @ w @ ai.T, 1e-10, 1e-10, "grad inv")
    x = np.linalg.solve(A4, B42)
    lam = np.linalg.solve(A4.T, 2 * x)
    close(qb.grad(lambda m, y: (Q.solve(m, y) ** 2).sum(), argnums=(0, 1))(a, b), (-lam @ x.T, lam), 1e-10, 1e-10, "grad solve")
    # 'pos' reads one triangle for the value but differentiates the solve with all of a, as
    # JAX's custom_linear_solve: against JAX on a matrix whose triangles differ.
    ns = SPD + 0.1 * np.triu(RNG.standard_normal((4, 4)), 1)
    for lower in (False, True):
        g = qb.grad(lambda m, y: (Q.solve(m, y, lower=lower, assume_a="pos") ** 2).sum(), argnums=(0, 1))(qb.array(ns), b)
        gj = jax.grad(lambda m, y: (J.solve(m, y, lower=lower, assume_a="pos") ** 2).sum(), argnums=(0, 1))(ns, B42)
        close(g, gj, 1e-10, 1e-10, f"grad pos lower={lower}")
    # Batches broadcast; pos under vmap and jit.
    ab = np.stack([SPD, 2 * SPD, SPD + np.eye(4)])
    bb = RNG.standard_normal((3, 4, 2))
    close(Q.solve(qb.array(ab), qb.array(bb), assume_a="pos"), np.linalg.solve(ab, bb), 1e-11, 1e-11, "batch")
    close(Q.solve(qb.array(ab), qb.array(bb[:, :, 0]), assume_a="pos"), np.linalg.solve(ab, bb[..., :1])[..., 0], 1e-11, 1e-11, "batched vectors")
    close(Q.solve(qb.array(ab), b), np.linalg.solve(ab, B42), 1e-11, 1e-11, "broadcast")
    cf = Q.cho_factor(qb.array(ab), lower=True)
    close(Q.cho_solve(cf, qb.array(bb[:, :, 0])), np.linalg.solve(ab, bb[..., :1])[..., 0], 1e-11, 1e-11, "cho_solve batched vectors")
    close(qb.vmap(lambda m: Q.solve(m, b[:, 0], assume_a="pos"))(qb.array(ab)), np.stack([np.linalg.solve(m, B42[:, 0]) for m in ab]), 1e-11, 1e-11, "vmap")
    got = qb.jit(lambda m, y: (Q.det(m), Q.inv(m), Q.solve(m, y, assume_a="pos")))(qb.array(SPD), b)
    close(got, (np.linalg.det(SPD), np.linalg.inv(SPD), np.linalg.solve(SPD, B42)), 1e-10, 1e-10, "jit")
    assert Q.solve(qb.array(np.float32(SPD)), qb.array(np.float32(B42)), assume_a="pos").dtype == qb.float32
    assert Q.det(qb.array(np.float32(A4))).dtype == qb.float32


def test_lu_family():
    for shape in ((4, 4), (3, 5), (5, 3)):
        x = RNG.standard_normal(shape)
        close(Q.lu(qb.array(x)), sl.lu(x), 1e-12, 1e-12, f"lu {shape}")
        close(Q.lu(qb.array(x), permute_l=True), sl.lu(x, permute_l=True), 1e-12, 1e-12, f"lu permute_l {shape}")
        lu_s, piv_s = sl.lu_factor(x)
        close(Q.lu_factor(qb.array(x)), (lu_s, piv_s.astype(np.int32)), 1e-12, 1e-12, f"lu_factor {shape}")
    fq, fs = Q.lu_factor(qb.array(A4)), sl.lu_factor(A4)
    for trans in (0, 1, 2):
        close(Q.lu_solve(fq, qb.array(B42), trans=trans), sl.lu_solve(fs, B42, trans=trans), 1e-11, 1e-11, f"lu_solve {trans}")
        close(Q.lu_solve(fq, qb.array(B42[:, 1]), trans=trans), sl.lu_solve(fs, B42[:, 1], trans=trans), 1e-11, 1e-11, f"lu_solve vec {trans}")
    # JAX's batching: lu.ndim == b.ndim + 1 means a batch of vectors; b's batch dims broadcast.
    ab = np.stack([A4, A4.T, A4 + 3 * np.eye(4)])
    bb = RNG.standard_normal((3, 4))
    fb = Q.lu_factor(qb.array(ab))
    close(Q.lu_solve(fb, qb.array(bb), trans=1), np.stack([np.linalg.solve(m.T, v) for m, v in zip(ab, bb)]), 1e-11, 1e-11, "batched vectors")
    close(Q.lu_solve(fb, qb.array(B42)), np.linalg.solve(ab, B42), 1e-11, 1e-11, "broadcast b")
    for trans in (0, 1):
        m = A4.T if trans else A4
        x = np.linalg.solve(m, B42)
        lam = np.linalg.solve(m.T, 2 * x)
        da = -lam @ x.T
        g = qb.grad(lambda m, y: (Q.lu_solve(Q.lu_factor(m), y, trans=trans) ** 2).sum(), argnums=(0, 1))(qb.array(A4), qb.array(B42))
        close(g, (da.T if trans else da, lam), 1e-9, 1e-9, f"grad lu_solve {trans}")
    got = qb.jit(lambda m, y: Q.lu_solve(Q.lu_factor(m), y, trans=1))(qb.array(A4), qb.array(B42))
    close(got, np.linalg.solve(A4.T, B42), 1e-11, 1e-11, "jit")
    got = qb.vmap(lambda m: Q.lu_solve(Q.lu_factor(m), qb.array(B42[:, 0])))(qb.array(ab))
    close(got, np.stack([np.linalg.solve(m, B42[:, 0]) for m in ab]), 1e-11, 1e-11, "vmap")
    p, l, u = Q.lu(qb.array(np.float32(A4)))
    assert p.dtype == l.dtype == u.dtype == qb.float32


def test_qr_svd_eigh():
    for shape in ((4, 3), (3, 4)):
        x = RNG.standard_normal(shape)
        for mode in ("full", "r", "economic"):
            close(Q.qr(qb.array(x), mode=mode), sl.qr(x, mode=mode), 1e-12, 1e-12, f"qr {mode} {shape}")
        k = min(shape)
        for mode, c in (("right", RNG.standard_normal((2, shape[0]))), ("left", RNG.standard_normal((k, 2))), ("right", RNG.standard_normal(shape[0])), ("left", RNG.standard_normal(k))):
            close(Q.qr_multiply(qb.array(x), qb.array(c), mode=mode), sl.qr_multiply(x, c, mode=mode), 1e-12, 1e-12, f"qr_multiply {mode} {shape}")
        for full in (True, False):
            u, s, vh = Q.svd(qb.array(x), full_matrices=full)
            uj, sj, vhj = sl.svd(x, full_matrices=full)
            assert u.shape == uj.shape and vh.shape == vhj.shape
            close(s, sj, 1e-12, 1e-12, "svd s")
            assert_close(qb.matmul(u[:, :k] * s, vh[:k]), x, 1e-12, 1e-12)
        close(Q.svd(qb.array(x), compute_uv=False), sl.svdvals(x), 1e-12, 1e-12)
    xb = RNG.standard_normal((2, 3, 3))
    close(Q.qr(qb.array(xb), mode="r")[0], np.stack([sl.qr(v, mode="r")[0] for v in xb]), 1e-12, 1e-12, "qr batch")
    w, v = Q.eigh(qb.array(SPD))
    close(w, sl.eigh(SPD)[0], 1e-12, 1e-12, "eigh")
    assert_close(qb.matmul(v * w, v.T), SPD, 1e-11, 1e-11)
    # JAX symmetrizes: lower=False of a non-symmetric input is still eigh((a + a.T) / 2).
    close(Q.eigh(qb.array(A4), lower=False, eigvals_only=True), sl.eigh((A4 + A4.T) / 2, eigvals_only=True), 1e-12, 1e-12)
    d, e = RNG.standard_normal(6), RNG.standard_normal(5)
    close(Q.eigh_tridiagonal(qb.array(d), qb.array(e), eigvals_only=True), sl.eigh_tridiagonal(d, e, eigvals_only=True), 1e-12, 1e-12, "tridiagonal")
    close(Q.eigh_tridiagonal(qb.array(d), qb.array(e), eigvals_only=True, select="i", select_range=(1, 3)),
          sl.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(1, 3)), 1e-12, 1e-12, "tridiagonal i")
    w, v = Q.eigh_tridiagonal(qb.array(d), qb.array(e), select="i", select_range=(2, 4))
    ws, vs = sl.eigh_tridiagonal(d, e, select="i", select_range=(2, 4))
    close(w, ws, 1e-12, 1e-12)
    assert_close(np.abs(to_np(v).T @ vs), np.eye(3), 1e-8, 1e-8)
    close(Q.eigh_tridiagonal(qb.array(d[:1]), qb.array(e[:1]), eigvals_only=True), d[:1], 0, 0)
    assert Q.eigh_tridiagonal(qb.array(np.float32(d)), qb.array(np.float32(e)), eigvals_only=True).dtype == qb.float32
    got = qb.jit(lambda x: (Q.qr(x)[1], Q.svd(x, compute_uv=False), Q.eigh(x @ x.T, eigvals_only=True)))(qb.array(A4))
    close(got, (sl.qr(A4)[1], sl.svdvals(A4), sl.eigh(A4 @ A4.T, eigvals_only=True)), 1e-10, 1e-10, "jit")
    got = qb.vmap(lambda d: Q.eigh_tridiagonal(d, qb.array(e), eigvals_only=True))(qb.array(np.stack([d, -d])))
    close(got, np.stack([sl.eigh_tridiagonal(d, e, eigvals_only=True), sl.eigh_tridiagonal(-d, e, eigvals_only=True)]), 1e-12, 1e-12, "vmap")


def test_polar_hessenberg_sylvester():
    for side in ("right", "left"):
        for shape in ((4, 3), (3, 4)):
            x = RNG.standard_normal(shape)
            close(Q.polar(qb.array(x), side, method="svd"), sl.polar(x, side), 1e-11, 1e-11, f"polar svd {side} {shape}")
            if (shape[0] >= shape[1]) == (side == "right"):
                close(Q.polar(qb.array(x), side), sl.polar(x, side), 1e-11, 1e-11, f"polar qdwh {side} {shape}")
    xb = RNG.standard_normal((2, 4, 3))
    close(Q.polar(qb.array(xb)), [np.stack(t) for t in zip(*[sl.polar(v) for v in xb])], 1e-11, 1e-11, "polar batch")
    qb.test_util.check_grads(lambda x: Q.polar(x, method="svd"), (qb.array(A4[:, :3]),), order=1)
    h = RNG.standard_normal((5, 5))
    close(Q.hessenberg(qb.array(h), calc_q=True), sl.hessenberg(h, calc_q=True), 1e-12, 1e-12, "hessenberg")
    hb = RNG.standard_normal((2, 4, 4))
    close(qb.jit(lambda x: Q.hessenberg(x, calc_q=True))(qb.array(hb)), [np.stack(t) for t in zip(*[sl.hessenberg(v, calc_q=True) for v in hb])], 1e-12, 1e-12, "batch jit")
    close(Q.hessenberg(qb.array(h[:2, :2])), h[:2, :2], 0, 0, "2x2")
    hz = np.triu(h, -1)  # already Hessenberg: zero-norm columns take tau = 0, as LAPACK
    close(Q.hessenberg(qb.array(hz)), sl.hessenberg(hz), 1e-12, 1e-12, "hessenberg of Hessenberg")
    assert Q.hessenberg(qb.array(np.float32(h))).dtype == qb.float32
    a, b, c = RNG.standard_normal((3, 3)) + 3 * np.eye(3), RNG.standard_normal((2, 2)) + 3 * np.eye(2), RNG.standard_normal((3, 2))
    close(Q.solve_sylvester(qb.array(a), qb.array(b), qb.array(c)), sl.solve_sylvester(a, b, c), 1e-11, 1e-11, "sylvester")
    ab = np.stack([a, a.T])
    close(Q.solve_sylvester(qb.array(ab), qb.array(b), qb.array(c)), np.stack([sl.solve_sylvester(m, b, c) for m in ab]), 1e-11, 1e-11, "batch")
    qb.test_util.check_grads(lambda a, b, c: Q.solve_sylvester(a, b, c), (qb.array(a), qb.array(b), qb.array(c)), order=1)


# ---------------------------------------------------------------------------------------------
# expm


def test_expm():
    w = RNG.standard_normal((4, 4))
    xs = [RNG.standard_normal((4, 4)) * s for s in (0.003, 0.05, 0.2, 0.5, 1.0, 5.0, 30.0)]
    stack = np.stack(xs)
    # JAX's algorithm (Pade degree by 1-norm, squarings), every branch, f64 and f32 (JAX's
    # expm is jitted: one compile per shape and dtype, so one matrix at a time).
    want = np.stack([J.expm(x) for x in xs])
    got = Q.expm(qb.array(stack))
    for i in range(len(xs)):
        close(got[i], want[i], 1e-12, 1e-12 * np.abs(want[i]).max(), f"expm {i}")
    want32 = [J.expm(np.float32(x)) for x in xs]
    got32 = Q.expm(qb.array(np.float32(stack)))
    for i in range(len(xs)):
        close(got32[i], want32[i], 2e-5, 2e-5 * np.abs(want32[i]).max(), f"expm f32 {i}")
    # The derivative through the algorithm, as JAX's.
    gj_fn = jax.jit(jax.grad(lambda m: (J.expm(m) * w).sum()))
    g = qb.grad(lambda m: (Q.expm(m) * w).sum())(qb.array(stack[[1, 3, 5]]))
    for i, k in enumerate((1, 3, 5)):
        gj = gj_fn(xs[k])
        close(g[i], gj, 1e-10, 1e-10 * np.abs(gj).max(), f"grad {k}")
    close(qb.vmap(Q.expm)(qb.array(stack[:3])), want[:3], 1e-12, 1e-11, "vmap")
    close(qb.jit(Q.expm)(qb.array(xs[5])), want[5], 1e-12, 1e-11, "jit")
    ut = np.triu(xs[4])
    close(Q.expm(qb.array(ut), upper_triangular=True), sl.expm(ut), 1e-12, 1e-12, "upper")
    close(Q.expm(qb.array(1e6 * np.eye(2)), max_squarings=4), np.full((2, 2), np.nan), 0, 0, "too many squarings: NaN")
    close(Q.expm(qb.array(np.zeros((3, 3)))), np.eye(3), 0, 0)
    assert np.isfinite(to_np(qb.grad(lambda m: Q.expm(m).sum())(qb.array(np.zeros((2, 2)))))).all()
    e = RNG.standard_normal((4, 4))
    close(Q.expm_frechet(qb.array(xs[3]), qb.array(e)), sl.expm_frechet(xs[3], e), 1e-11, 1e-11, "frechet")
    close(Q.expm_frechet(qb.array([[0.5]]), qb.array([[2.0]]), compute_expm=False), np.array([[2.0 * np.exp(0.5)]]), 1e-14, 1e-14)


# ---------------------------------------------------------------------------------------------
# Errors and the unsupported functions


def test_errors():
    E = qb.errors
    bad = [
        (E.ShapeError, "det", lambda: Q.det(qb.ones((2, 3)))),
        (E.ShapeError, "inv", lambda: Q.inv(qb.ones(3))),
        (E.ArgumentTypeError, "solve", lambda: Q.solve(None, qb.ones(2))),
        (E.InvalidArgumentError, "assume_a", lambda: Q.solve(qb.eye(2), qb.ones(2), assume_a="diag")),
        (E.ShapeError, "solve", lambda: Q.solve(qb.eye(2), qb.ones(3), assume_a="pos")),
        (E.DTypeError, "solve", lambda: Q.solve(qb.eye(2), qb.ones(2, dtype=qb.float32))),
        (E.InvalidArgumentError, "trans", lambda: Q.lu_solve(Q.lu_factor(qb.eye(2)), qb.ones(2), trans=3)),
        (E.ArgumentTypeError, "lu_and_piv", lambda: Q.lu_solve(qb.eye(2), qb.ones(2))),
        (E.InvalidArgumentError, "mode", lambda: Q.qr(qb.eye(2), mode="raw")),
        (E.UnsupportedOperationError, "pivoting", lambda: Q.qr(qb.eye(2), pivoting=True)),
        (E.ShapeError, "qr_multiply", lambda: Q.qr_multiply(qb.eye(3), qb.ones((2, 2)))),
        (E.UnsupportedOperationError, "b=None", lambda: Q.eigh(qb.eye(2), qb.eye(2))),
        (E.ArgumentTypeError, "eigvals_only", lambda: Q.eigh(qb.eye(2), eigvals_only="yes")),
        (E.DTypeError, "eigh_tridiagonal", lambda: Q.eigh_tridiagonal(qb.ones(3), qb.ones(2, dtype=qb.float32))),
        (E.UnsupportedOperationError, "select='v'", lambda: Q.eigh_tridiagonal(qb.ones(3), qb.ones(2), select="v")),
        (E.InvalidArgumentError, "select_range", lambda: Q.eigh_tridiagonal(qb.ones(3), qb.ones(2), select="i", select_range=(2, 1))),
        (E.UnsupportedOperationError, "qdwh", lambda: Q.polar(qb.ones((2, 3)))),
        (E.InvalidArgumentError, "side", lambda: Q.polar(qb.eye(2), side="up")),
        (E.ShapeError, "expm", lambda: Q.expm(qb.ones((2, 3)))),
        (E.ArgumentTypeError, "max_squarings", lambda: Q.expm(qb.eye(2), max_squarings=2.5)),
        (E.ShapeError, "expm_frechet", lambda: Q.expm_frechet(qb.eye(2), qb.eye(3))),
        (E.ShapeError, "solve_sylvester", lambda: Q.solve_sylvester(qb.eye(2), qb.eye(2), qb.ones((3, 2)))),
        (E.ShapeError, "block_diag", lambda: Q.block_diag(qb.ones((2, 2, 2)))),
        (E.ShapeError, "block_diag", lambda: Q.block_diag()),
        (E.ShapeError, "hankel", lambda: Q.hankel(1.0)),
        (E.ShapeError, "leslie", lambda: Q.leslie(qb.ones(3), qb.ones(3))),
        (E.ShapeError, "companion", lambda: Q.companion(qb.ones(1))),
        (E.InvalidArgumentError, "mode", lambda: Q.convolution_matrix(qb.ones(3), 2, mode="wide")),
        (E.InvalidArgumentError, "n must be", lambda: Q.convolution_matrix(qb.ones(3), 0)),
        (E.ArgumentTypeError, "hilbert", lambda: Q.hilbert("3")),
        (E.InvalidArgumentError, "hilbert", lambda: Q.hilbert(0)),
        (E.ArraySizeError, "invhilbert", lambda: Q.invhilbert(10**10)),
        (E.InvalidArgumentError, "power of 2", lambda: Q.hadamard(6)),
        (E.InvalidArgumentError, "kind", lambda: Q.pascal(3, kind="diag")),
        (E.ShapeError, "helmert", lambda: Q.helmert(1)),
        (E.InvalidArgumentError, "trans", lambda: Q.solve_triangular(qb.eye(2), qb.ones(2), trans=[1])),
        (E.ArgumentTypeError, "cho_solve", lambda: Q.cho_solve(qb.eye(2), qb.ones(2))),
    ]
    for cls, text, call in bad:
        with pytest.raises(cls, match=text):
            call()
    for name, call in (("schur", lambda: Q.schur(qb.eye(2))), ("rsf2csf", lambda: Q.rsf2csf(qb.eye(2), qb.eye(2))), ("sqrtm", lambda: Q.sqrtm(qb.eye(2))),
                       ("funm", lambda: Q.funm(qb.eye(2), qb.exp)), ("dft", lambda: Q.dft(4))):
        with pytest.raises(E.UnsupportedOperationError, match=name):
            call()


def test_docstring_examples():
    tests = [t for t in doctest.DocTestFinder().find(Q) if t.examples]
    assert len(tests) >= len(Q.__all__)
    for t in tests:
        t.globs = {"qb": qb, "round": builtins.round}
        out = []
        r = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        r.run(t, out=out.append)
        assert r.failures == 0, "".join(out)
