"""quabla._lax_linalg (qb.lax.linalg) against jax.lax.linalg (x64): values, batches, jit, vmap,
gradients where JAX defines them, float32 staying float32, typed errors, docstring examples."""

import builtins
import doctest
import types

import numpy as np
import pytest

import quabla as qb
import quabla._lax_linalg as ll
from breadth_util import assert_close, to_np
from quabla import errors as E

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402
from jax.lax import linalg as L  # noqa: E402

RNG = np.random.default_rng(1234)
A44 = RNG.standard_normal((4, 4))
A53 = RNG.standard_normal((5, 3))
A35 = RNG.standard_normal((3, 5))
B244 = RNG.standard_normal((2, 4, 4))
SPD = B244 @ np.swapaxes(B244, -1, -2) + 4 * np.eye(4)
SYM = B244 + np.swapaxes(B244, -1, -2)


def qa(x):
    return qb.array(np.asarray(x))


def test_cholesky():
    assert_close(ll.cholesky(qa(SPD)), L.cholesky(SPD), 1e-12, 1e-12)
    lower_only = np.tril(SPD) + np.triu(np.full_like(SPD, 7.0), 1)
    assert_close(ll.cholesky(qa(lower_only), symmetrize_input=False), L.cholesky(lower_only, symmetrize_input=False), 1e-12, 1e-12)
    # Not positive definite: NaN in the lower triangle, zeros above (as JAX).
    assert_close(ll.cholesky(qa(-SPD[0])), L.cholesky(-SPD[0]))
    assert_close(qb.jit(ll.cholesky)(qa(SPD)), L.cholesky(SPD), 1e-12, 1e-12)
    w = RNG.standard_normal((4, 4))
    g = qb.grad(lambda x: (ll.cholesky(x) * w).sum())(qa(SPD[0]))
    assert_close(g, jax.grad(lambda x: (L.cholesky(x) * w).sum())(SPD[0]), 1e-9, 1e-10)
    assert ll.cholesky(qa(SPD.astype(np.float32))).dtype == qb.float32


def test_cholesky_update():
    r = np.linalg.cholesky(SPD).swapaxes(-1, -2)
    w = RNG.standard_normal((2, 4))
    got = ll.cholesky_update(qa(r), qa(w))
    assert_close(got, np.stack([L.cholesky_update(r[i], w[i]) for i in range(2)]), 1e-12, 1e-12)
    # The invariant: R'^T R' = R^T R + w w^T.
    g = to_np(got)
    assert_close(np.swapaxes(g, -1, -2) @ g, SPD + w[:, :, None] * w[:, None, :], 1e-10, 1e-10)
    assert_close(qb.jit(ll.cholesky_update)(qa(r[0]), qa(w[0])), L.cholesky_update(r[0], w[0]), 1e-12, 1e-12)
    assert ll.cholesky_update(qa(r[0].astype(np.float32)), qa(w[0].astype(np.float32))).dtype == qb.float32
    assert_close(ll.cholesky_update(qa(r[0]), qa(np.zeros(4))), r[0], 0, 0)


def test_eigh():
    v, w = ll.eigh(qa(SYM))
    vj, wj = L.eigh(SYM)
    assert_close(w, wj, 1e-12, 1e-12)
    v = to_np(v)
    assert_close(v @ (to_np(w)[..., None] * np.swapaxes(v, -1, -2)), SYM, 1e-11, 1e-11)
    assert_close(np.abs(np.sum(v * np.asarray(vj), axis=-2)), np.ones((2, 4)), 1e-10, 1e-10)  # same vectors up to sign
    for lower in (True, False):
        tri = np.tril(SYM[0]) if lower else np.triu(SYM[0])
        _, w1 = ll.eigh(qa(tri), lower=lower, symmetrize_input=False)
        assert_close(w1, L.eigh(tri, lower=lower, symmetrize_input=False)[1], 1e-12, 1e-12)
    v2, w2 = ll.eigh(qa(SYM), subset_by_index=(1, 3), implementation=ll.EighImplementation.QR, sort_eigenvalues=False)
    assert_close(w2, np.asarray(wj)[..., 1:3], 1e-12, 1e-12)
    assert v2.shape == (2, 4, 2)
    vjit, wjit = qb.jit(ll.eigh)(qa(SYM))
    assert_close(wjit, wj, 1e-12, 1e-12)
    c = np.arange(1.0, 5.0)
    g = qb.grad(lambda x: (ll.eigh(x)[1] * c).sum())(qa(SYM[0]))
    assert_close(g, jax.grad(lambda x: (L.eigh(x)[1] * c).sum())(SYM[0]), 1e-9, 1e-10)
    v32, w32 = ll.eigh(qa(SYM.astype(np.float32)))
    assert v32.dtype == w32.dtype == qb.float32


def test_lu():
    for x in (A44, A53, A35, B244):
        got = ll.lu(qa(x))
        want = L.lu(x)
        assert isinstance(got, list) and len(got) == 3
        assert got[1].dtype == got[2].dtype == qb.int32
        assert_close(got, [np.asarray(t) for t in want], 1e-12, 1e-12, what=str(x.shape))
    assert_close(qb.jit(ll.lu)(qa(A44)), [np.asarray(t) for t in L.lu(A44)], 1e-12, 1e-12)
    for x in (A53, A35):
        g = qb.grad(lambda x: (ll.lu(x)[0] ** 3).sum())(qa(x))
        assert_close(g, jax.grad(lambda x: (L.lu(x)[0] ** 3).sum())(x), 1e-9, 1e-10, what=f"grad {x.shape}")
    assert ll.lu(qa(A44.astype(np.float32)))[0].dtype == qb.float32


def test_lu_pivots_to_permutation():
    piv = np.array([[2, 2, 3], [0, 4, 2]], np.int32)
    assert_close(ll.lu_pivots_to_permutation(qa(piv), 5), L.lu_pivots_to_permutation(piv, 5))
    assert ll.lu_pivots_to_permutation(qa(piv), 5).dtype == qb.int32
    _, p, perm = ll.lu(qa(A53))
    assert_close(ll.lu_pivots_to_permutation(p, 5), perm)


W66 = RNG.standard_normal((6, 6))


def _qr_loss(mod, full, piv):
    def f(x):
        out = mod.qr(x, full_matrices=full, pivoting=piv)
        q, r = out[0], out[1]
        return (q * W66[: q.shape[0], : q.shape[1]]).sum() + (r ** 3).sum()
    return f


@pytest.mark.parametrize("x", [A53, A35], ids=["tall", "wide"])
def test_qr(x):
    for full in (True, False):
        for piv in (False, True):
            got, want = ll.qr(qa(x), full_matrices=full, pivoting=piv), L.qr(x, full_matrices=full, pivoting=piv)
            assert len(got) == len(want)
            # LAPACK's Householder signs: the factors agree entrywise.
            assert_close(got, [np.asarray(t) for t in want], 1e-12, 1e-12, what=f"full={full} piv={piv}")
            g = qb.grad(_qr_loss(ll, full, piv))(qa(x))
            if piv and x.shape[0] < x.shape[1] and full:
                g_full = g  # wide: full_matrices does not change the factors
            elif piv and x.shape[0] < x.shape[1]:
                assert_close(g, g_full, 1e-12, 1e-12)
                # JAX 0.10.2's wide pivoted JVP uses the unpermuted x for R's trailing block (wrong);
                # compare with central differences instead.
                f = _qr_loss(L, full, piv)
                fd = np.zeros_like(x)
                for i, j in np.ndindex(*x.shape):
                    e = np.zeros_like(x)
                    e[i, j] = 1e-6
                    fd[i, j] = (float(f(x + e)) - float(f(x - e))) / 2e-6
                assert_close(g, fd, 1e-6, 1e-6)
            else:
                assert_close(g, jax.grad(_qr_loss(L, full, piv))(x), 1e-9, 1e-10, what=f"grad full={full} piv={piv}")
    q, r, p = qb.jit(lambda x: ll.qr(x, pivoting=True))(qa(x))
    assert_close((q, r, p), [np.asarray(t) for t in L.qr(x, pivoting=True)], 1e-12, 1e-12)
    assert all(t.dtype == qb.float32 for t in ll.qr(qa(x.astype(np.float32)), pivoting=True)[:2])


def test_qr_batched_and_vmap():
    x = RNG.standard_normal((3, 5, 4))
    got = ll.qr(qa(x), pivoting=True)
    assert_close(got, [np.asarray(t) for t in L.qr(x, pivoting=True)], 1e-12, 1e-12)
    assert_close(qb.vmap(lambda y: ll.qr(y, pivoting=True)[2])(qa(x)), got[2])


def test_svd():
    for x in (A53, A35, B244):
        u, s, vh = ll.svd(qa(x), full_matrices=False)
        assert_close(s, L.svd(x, compute_uv=False), 1e-12, 1e-12)
        assert_close(to_np(u) @ (to_np(s)[..., :, None] * to_np(vh)), x, 1e-11, 1e-11)
        uf, _, vhf = ll.svd(qa(x))
        m, n = x.shape[-2:]
        assert uf.shape[-2:] == (m, m) and vhf.shape[-2:] == (n, n)
        assert_close(np.swapaxes(to_np(uf), -1, -2) @ to_np(uf), np.broadcast_to(np.eye(m), uf.shape), 1e-12, 1e-12)
    assert_close(ll.svd(qa(A53), compute_uv=False, algorithm=ll.SvdAlgorithm.QR), L.svd(A53, compute_uv=False), 1e-12, 1e-12)
    u, s, vh = ll.svd(qa(A53), full_matrices=False, subset_by_index=(1, 3))
    assert u.shape == (5, 2) and s.shape == (2,) and vh.shape == (2, 3)
    assert_close(s, np.linalg.svd(A53, compute_uv=False)[1:3], 1e-12, 1e-12)
    assert_close(qb.jit(lambda x: ll.svd(x, compute_uv=False))(qa(A44)), L.svd(A44, compute_uv=False), 1e-12, 1e-12)
    c = np.array([1.0, -2.0, 0.5])
    g = qb.grad(lambda x: (ll.svd(x, compute_uv=False) * c).sum())(qa(A53))
    assert_close(g, jax.grad(lambda x: (L.svd(x, compute_uv=False) * c).sum())(A53), 1e-9, 1e-10)
    assert ll.svd(qa(A53.astype(np.float32)))[1].dtype == qb.float32


def test_triangular_solve():
    a = np.tril(A44) + 3 * np.eye(4) + np.triu(np.full((4, 4), 9.0), 1)
    a = np.where(np.eye(4, dtype=bool), a, a * 0.3)
    au = a.T.copy()
    bl, br = RNG.standard_normal((4, 3)), RNG.standard_normal((3, 4))
    for left in (True, False):
        for lower in (True, False):
            for tr in (True, False):
                for unit in (True, False):
                    kw = dict(left_side=left, lower=lower, transpose_a=tr, unit_diagonal=unit)
                    aa, b = (a if lower else au), (bl if left else br)
                    assert_close(ll.triangular_solve(qa(aa), qa(b), **kw), L.triangular_solve(aa, b, **kw), 1e-11, 1e-12, what=str(kw))
    v = RNG.standard_normal((2, 4))
    a2 = np.stack([a, a + np.eye(4)])
    for left in (True, False):
        assert_close(ll.triangular_solve(qa(a2), qa(v), left_side=left, lower=True), L.triangular_solve(a2, v, left_side=left, lower=True), 1e-12, 1e-12)
    # Batch dims broadcast (JAX wants them equal).
    assert_close(ll.triangular_solve(qa(a), qa(np.stack([br, 2 * br])), lower=True), np.stack([L.triangular_solve(a, br * k, lower=True) for k in (1, 2)]), 1e-12, 1e-12)
    f = qb.jit(lambda a, b: ll.triangular_solve(a, b, left_side=True, lower=True, transpose_a=True))
    assert_close(f(qa(a), qa(bl)), L.triangular_solve(a, bl, left_side=True, lower=True, transpose_a=True), 1e-12, 1e-12)
    gq = qb.grad(lambda a, b: (ll.triangular_solve(a, b, lower=True) ** 2).sum(), argnums=(0, 1))(qa(a), qa(br))
    gj = jax.grad(lambda a, b: (L.triangular_solve(a, b, lower=True) ** 2).sum(), argnums=(0, 1))(a, br)
    assert_close(gq, gj, 1e-9, 1e-10)
    assert ll.triangular_solve(qa(a.astype(np.float32)), qa(br.astype(np.float32)), lower=True).dtype == qb.float32


def test_hessenberg_tridiagonal():
    for x in (A44, B244):
        assert_close(ll.hessenberg(qa(x)), [np.asarray(t) for t in L.hessenberg(x)], 1e-12, 1e-12)
    odd = SYM.copy()
    odd[..., np.triu_indices(4, 1)[0], np.triu_indices(4, 1)[1]] = 50.0  # ignored by lower=True
    assert_close(ll.tridiagonal(qa(odd)), [np.asarray(t) for t in L.tridiagonal(odd)], 1e-12, 1e-12)
    up = np.swapaxes(odd, -1, -2)
    assert_close(ll.tridiagonal(qa(up), lower=False), [np.asarray(t) for t in L.tridiagonal(up, lower=False)], 1e-12, 1e-12)
    got = qb.jit(ll.tridiagonal)(qa(SYM[0]))
    assert isinstance(got, list) and len(got) == 4
    assert_close(got, [np.asarray(t) for t in L.tridiagonal(SYM[0])], 1e-12, 1e-12)
    # Reconstruction: q^T a q is the tridiagonal matrix (q from the packed reflectors).
    h, taus = ll.hessenberg(qa(A44))
    q = np.eye(4)
    q[1:, 1:] = to_np(ll.householder_product(h[1:, :-1], taus))
    hh = np.triu(to_np(h), -1)
    assert_close(q @ hh @ q.T, A44, 1e-12, 1e-12)
    assert ll.tridiagonal(qa(SYM[0].astype(np.float32)))[2].dtype == qb.float32
    assert ll.hessenberg(qa(A44.astype(np.float32)))[1].dtype == qb.float32


def test_householder_ormqr():
    x = RNG.standard_normal((2, 6, 4))
    h, t = jnp.linalg.qr(x, mode="raw")
    h, t = np.asarray(h).swapaxes(-1, -2), np.asarray(t)
    assert_close(ll.householder_product(qa(h), qa(t)), L.householder_product(h, t), 1e-12, 1e-12)
    assert_close(ll.householder_product(qa(h[0]), qa(t[0, :2])), L.householder_product(h[0], t[0, :2]), 1e-12, 1e-12)
    cl, cr = RNG.standard_normal((2, 6, 3)), RNG.standard_normal((2, 3, 6))
    for left in (True, False):
        for tr in (True, False):
            c = cl if left else cr
            assert_close(ll.ormqr(qa(h), qa(t), qa(c), left=left, transpose=tr), L.ormqr(h, t, c, left=left, transpose=tr), 1e-12, 1e-12)
    f = qb.jit(lambda h, t, c: ll.ormqr(h, t, c, transpose=True))
    assert_close(f(qa(h), qa(t), qa(cl)), L.ormqr(h, t, cl, transpose=True), 1e-12, 1e-12)
    assert ll.householder_product(qa(h.astype(np.float32)), qa(t.astype(np.float32))).dtype == qb.float32


def test_tridiagonal_solve():
    dl, d, du = (RNG.standard_normal((3, 6)) for _ in range(3))
    b = RNG.standard_normal((3, 6, 2))
    args = (dl, d, du, b)
    want = L.tridiagonal_solve(*args)
    assert_close(ll.tridiagonal_solve(*map(qa, args)), want, 1e-10, 1e-11)
    assert_close(qb.jit(ll.tridiagonal_solve)(*map(qa, args)), want, 1e-10, 1e-11)
    assert_close(qb.vmap(ll.tridiagonal_solve)(*map(qa, args)), want, 1e-10, 1e-11)
    # A zero leading diagonal needs the row interchange; dl[0] and du[-1] are ignored.
    d0 = d.copy()
    d0[:, 0] = 0.0
    dl9, du9 = dl.copy(), du.copy()
    dl9[:, 0], du9[:, -1] = 99.0, -77.0
    assert_close(ll.tridiagonal_solve(qa(dl9), qa(d0), qa(du9), qa(b)), L.tridiagonal_solve(dl, d0, du, b), 1e-10, 1e-11)
    # Singular: NaN (as JAX); perturbed: finite.
    z = np.zeros(4)
    assert_close(ll.tridiagonal_solve(qa(z), qa(z), qa(z), qa(np.ones((4, 1)))), L.tridiagonal_solve(z, z, z, np.ones((4, 1))))
    sdl, sd, sdu = np.array([0.0, 1.0, 0.0]), np.ones(3), np.array([1.0, 0.0, 0.0])
    assert_close(ll.tridiagonal_solve(qa(sdl), qa(sd), qa(sdu), qa(np.ones((3, 1))), perturb_singular=True), [[1.0], [0.0], [1.0]])
    assert_close(ll.tridiagonal_solve(*map(qa, args), perturb_singular=True), want, 1e-10, 1e-11)
    assert_close(ll.tridiagonal_solve(qa([0.0]), qa([2.0]), qa([0.0]), qa([[3.0, 4.0]])), [[1.5, 2.0]])
    gq = qb.grad(lambda *a: (ll.tridiagonal_solve(*a) ** 2).sum(), argnums=(0, 1, 2, 3))(*map(qa, args))
    gj = jax.grad(lambda *a: (L.tridiagonal_solve(*a) ** 2).sum(), argnums=(0, 1, 2, 3))(*args)
    assert_close(gq, gj, 1e-8, 1e-9)
    assert ll.tridiagonal_solve(*[qa(t.astype(np.float32)) for t in args]).dtype == qb.float32


def test_symmetric_product():
    a, c = RNG.standard_normal((2, 4, 3)), SYM
    for sym in (False, True):
        got = ll.symmetric_product(qa(a), qa(c), alpha=0.5, beta=-2.0, symmetrize_output=sym)
        assert_close(got, L.symmetric_product(a, c, alpha=0.5, beta=-2.0, symmetrize_output=sym), 1e-12, 1e-12)
    assert_close(qb.jit(ll.symmetric_product)(qa(a), qa(c)), L.symmetric_product(a, c), 1e-12, 1e-12)
    f = qb.jit(lambda a, c, al: ll.symmetric_product(a, c, alpha=al, beta=2.0))
    assert_close(f(qa(a), qa(c), qa(3.0)), L.symmetric_product(a, c, alpha=3.0, beta=2.0), 1e-12, 1e-12)
    assert ll.symmetric_product(qa(a.astype(np.float32)), qa(c.astype(np.float32))).dtype == qb.float32


def test_qdwh():
    u, h, it, ok = ll.qdwh(qa(A53))
    uj, hj, _, _ = L.qdwh(A53)
    assert_close((u, h), (uj, hj), 1e-10, 1e-10)
    assert bool(ok.item()) and it.dtype == qb.int64
    pad = np.zeros((6, 5))
    pad[:4, :3] = A53[:4]
    assert_close(ll.qdwh(qa(pad), dynamic_shape=(4, 3))[:2], L.qdwh(pad, dynamic_shape=(4, 3))[:2], 1e-10, 1e-10)
    assert_close(qb.jit(lambda x: ll.qdwh(x)[0])(qa(A44)), L.qdwh(A44)[0], 1e-10, 1e-10)
    g = qb.grad(lambda x: ll.qdwh(x)[1].sum())(qa(A53))
    assert np.all(np.isfinite(to_np(g)))
    assert ll.qdwh(qa(A53.astype(np.float32)))[0].dtype == qb.float32


def test_vmap():
    f = qb.vmap(lambda x: ll.eigh(x)[1])
    assert_close(f(qa(SYM)), L.eigh(SYM)[1], 1e-12, 1e-12)
    g = qb.vmap(lambda r, w: ll.cholesky_update(r, w))
    r = np.linalg.cholesky(SPD).swapaxes(-1, -2)
    w = RNG.standard_normal((2, 4))
    assert_close(g(qa(r), qa(w)), np.stack([L.cholesky_update(r[i], w[i]) for i in range(2)]), 1e-12, 1e-12)
    assert_close(qb.vmap(lambda x: ll.hessenberg(x)[0])(qa(B244)), L.hessenberg(B244)[0], 1e-12, 1e-12)


def test_unsupported_and_errors():
    with pytest.raises(E.UnsupportedOperationError, match="complex"):
        ll.eig(qa(A44))
    with pytest.raises(E.UnsupportedOperationError, match="Schur"):
        ll.schur(qa(A44))
    bad = [
        (E.ShapeError, lambda: ll.cholesky(qa(A53))),
        (E.ShapeError, lambda: ll.cholesky(qa([1.0, 2.0]))),
        (E.ArgumentTypeError, lambda: ll.cholesky(qa(A44), symmetrize_input="yes")),
        (E.ShapeError, lambda: ll.cholesky_update(qa(A44), qa([1.0, 2.0]))),
        (E.ShapeError, lambda: ll.eigh(qa(A53))),
        (E.InvalidArgumentError, lambda: ll.eigh(qa(A44), subset_by_index=(3, 2))),
        (E.ArgumentTypeError, lambda: ll.eigh(qa(A44), subset_by_index="all")),
        (E.ArgumentTypeError, lambda: ll.eigh(qa(A44), implementation="qr")),
        (E.ShapeError, lambda: ll.hessenberg(qa([[1.0]]))),
        (E.ShapeError, lambda: ll.householder_product(qa(A35), qa([1.0]))),
        (E.ShapeError, lambda: ll.householder_product(qa(A53), qa(np.ones(4)))),
        (E.ShapeError, lambda: ll.ormqr(qa(A53), qa(np.ones(3)), qa(np.ones((4, 2))))),
        (E.DTypeError, lambda: ll.lu_pivots_to_permutation(qa([0.5, 1.0]), 3)),
        (E.InvalidArgumentError, lambda: ll.lu_pivots_to_permutation(qa(np.array([0, 1], np.int32)), 1)),
        (E.ArgumentTypeError, lambda: ll.lu_pivots_to_permutation(qa(np.array([0, 1], np.int32)), 2.5)),
        (E.ArgumentTypeError, lambda: ll.qr(qa(A44), pivoting=None)),
        (E.InvalidArgumentError, lambda: ll.svd(qa(A53), subset_by_index=(0, 2))),
        (E.ArgumentTypeError, lambda: ll.svd(qa(A53), algorithm=3)),
        (E.ShapeError, lambda: ll.qdwh(qa(A35))),
        (E.InvalidArgumentError, lambda: ll.qdwh(qa(A53), dynamic_shape=(9, 1))),
        (E.ShapeError, lambda: ll.symmetric_product(qa(A53), qa(A44))),
        (E.ArgumentTypeError, lambda: ll.symmetric_product(qa(A44), qa(A44), alpha="x")),
        (E.ShapeError, lambda: ll.triangular_solve(qa(A44), qa(A53))),
        (E.ShapeError, lambda: ll.triangular_solve(qa(A53), qa(A53))),
        (E.DTypeError, lambda: ll.triangular_solve(qa(A44.astype(np.float32)), qa(A44))),
        (E.ShapeError, lambda: ll.tridiagonal_solve(qa(np.ones(3)), qa(np.ones(4)), qa(np.ones(4)), qa(np.ones((4, 1))))),
        (E.ShapeError, lambda: ll.tridiagonal_solve(qa(np.ones(4)), qa(np.ones(4)), qa(np.ones(4)), qa(np.ones(4)))),
    ]
    for err, f in bad:
        with pytest.raises(err):
            f()
    for f in (ll.cholesky, ll.eigh, ll.lu, ll.qr, ll.svd, ll.hessenberg, ll.tridiagonal, ll.qdwh):
        for junk in (None, "abc", [[1.0, 2.0], [3.0]], lambda: 0):
            with pytest.raises(E.QuablaError):
                f(junk)
    for junk in (None, "abc", [[1.0], [2.0, 3.0]]):
        for f in (lambda j: ll.triangular_solve(qa(A44), j), lambda j: ll.tridiagonal_solve(j, qa(np.ones(4)), qa(np.ones(4)), qa(np.ones((4, 1)))),
                  lambda j: ll.ormqr(qa(A53), qa(np.ones(3)), j), lambda j: ll.symmetric_product(j, qa(A44)),
                  lambda j: ll.cholesky_update(qa(A44), j), lambda j: ll.householder_product(qa(A53), j),
                  lambda j: ll.lu_pivots_to_permutation(j, 4)):
            with pytest.raises(E.QuablaError):
                f(junk)


def test_ints_become_float64():
    x = np.array([[4, 2], [2, 10]])
    assert ll.cholesky(qa(x)).dtype == qb.float64
    assert ll.lu(qa(x))[0].dtype == qb.float64


class _Qb(types.ModuleType):
    """``qb`` for the docstring examples, with ``qb.lax.linalg`` this module (not wired yet)."""

    def __getattr__(self, name):
        if name == "lax":
            return types.SimpleNamespace(linalg=ll)
        return getattr(qb, name)


DOCTESTS = [t for t in doctest.DocTestFinder().find(ll) if t.examples]


def test_docstring_examples():
    assert len(DOCTESTS) >= len(ll.__all__)
    for t in DOCTESTS:
        t.globs = {"qb": _Qb("qb"), "round": builtins.round, "np": np}
        out = []
        r = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        r.run(t, out=out.append)
        assert r.failures == 0, "".join(out)


def test_all():
    import jax.lax.linalg as jl
    public = {n for n in dir(jl) if not n.startswith("_") and not n.endswith("_p")}
    assert public <= set(ll.__all__), public - set(ll.__all__)
    assert [m.value for m in ll.SvdAlgorithm] == [m.value for m in jl.SvdAlgorithm]
    assert [m.value for m in ll.EighImplementation] == [m.value for m in jl.EighImplementation]
    assert [m.value for m in ll.EigImplementation] == [m.value for m in jl.EigImplementation]
