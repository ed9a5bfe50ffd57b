"""Shared checks of the breadth suites (test_numpy_breadth.py, test_nn.py, test_scipy.py):
a function against its JAX (x64) or NumPy/SciPy oracle eagerly and under jit, its derivatives
against finite differences to second order (qb.test_util.check_grads), and vmap against a
Python loop."""

import numpy as np

import quabla as qb


def to_np(x):
    if isinstance(x, (tuple, list)):
        return type(x)(to_np(v) for v in x)
    return np.asarray(x.numpy() if isinstance(x, qb.Tensor) else x)


def assert_close(got, want, rtol=1e-12, atol=1e-12, what=""):
    got, want = to_np(got), to_np(want)
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want), what
        for g, w in zip(got, want):
            assert_close(g, w, rtol, atol, what)
        return
    want = np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} vs {want.shape}"
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def check_all(f, oracle, args, rtol=1e-12, atol=1e-12, grads=True, vmap=True, grad_eps=None, grad_tol=None):
    """f(*args) == oracle(*args) eagerly and under jit; check_grads of order 2 (float
    arguments); vmap over a leading axis of 3 stacked perturbed copies == a loop."""
    qargs = [qb.array(a) for a in args]
    want = oracle(*args)
    assert_close(f(*qargs), want, rtol, atol, "eager")
    assert_close(qb.jit(f)(*qargs), want, rtol, atol, "jit")
    if grads and all(np.asarray(a).dtype.kind == "f" for a in args):
        kw = {}
        if grad_eps is not None:
            kw["eps"] = grad_eps
        if grad_tol is not None:
            kw["atol"] = kw["rtol"] = grad_tol
        qb.test_util.check_grads(lambda *xs: _first(f(*xs)), tuple(qargs), order=2, **kw)
    if vmap:
        batch = [np.stack([np.asarray(a) * (1.0 + 0.01 * k) if np.asarray(a).dtype.kind == "f" else np.asarray(a) for k in range(3)]) for a in args]
        got = qb.vmap(f)(*[qb.array(b) for b in batch])
        loop = [f(*[qb.array(b[k]) for b in batch]) for k in range(3)]
        if isinstance(got, (tuple, list)):
            for j, g in enumerate(got):
                assert_close(g, np.stack([to_np(lp[j]) for lp in loop]), 1e-12, 1e-12, "vmap")
        else:
            assert_close(got, np.stack([to_np(lp) for lp in loop]), 1e-12, 1e-12, "vmap")


def _first(r):
    return r[0] if isinstance(r, (tuple, list)) else r
