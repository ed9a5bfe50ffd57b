"""Leafwise comparison of a Quabla result against a reference pytree (JAX, NumPy).

``close(got, want, tol)`` holds when every leaf has the reference's shape (and dtype with
``check_dtype``) and ``max|got - want| <= tol * (1 + max|want|)``; ``None`` leaves of the
reference must be ``None`` in the result too."""

import jax
import numpy as np

import quabla as qb


def close(got, want, tol=1e-12, what="", check_dtype=False):
    gl = jax.tree_util.tree_leaves(got, is_leaf=lambda x: x is None or isinstance(x, qb.Tensor))
    wl = jax.tree_util.tree_leaves(want, is_leaf=lambda x: x is None)
    assert len(gl) == len(wl), (what, len(gl), len(wl))
    for g, w in zip(gl, wl):
        if w is None:
            assert g is None, what
            continue
        g = np.asarray(g.numpy() if isinstance(g, qb.Tensor) else g)
        w = np.asarray(w)
        assert g.shape == w.shape, (what, g.shape, w.shape)
        if check_dtype:
            assert g.dtype == w.dtype, (what, g.dtype, w.dtype)
        scale = 1.0 + (float(np.max(np.abs(w))) if w.size else 0.0)
        err = float(np.max(np.abs(g - w))) if w.size else 0.0
        assert err <= tol * scale, f"{what}: max error {err:.3e} (scale {scale:.3e})"
