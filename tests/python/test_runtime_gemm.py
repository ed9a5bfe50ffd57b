"""Products that call the runtime's packed GEMM (quabla_kernels::gemm on AVX2/AVX-512 hosts:
every single product with at least 32 columns, batched ones of at least 2^21 multiply-adds
per batch element, and on AVX-512 the narrow path for single products of at most 16 f32 /
8 f64 columns) and those around its thresholds, against NumPy in float64: every layout the lowering hands it, ragged and size-1
extents, batched, f32 and f64, values and gradients. On hosts without the kernels the same
products take the generated path and must give the same answers."""
import numpy as np
import pytest

import quabla as qb

SHAPES = [
    (1, 1, 1),
    (16, 16, 32),  # small single product: the kernel
    (33, 17, 65),  # ragged M, K, N
    (64, 64, 64),
    (40, 300, 33),  # narrow, A read in place by the strided micro-kernel
    (130, 70, 96),  # a mid-size single product: the kernel on one thread
    (100, 150, 200),  # >= 2^21: the kernel on one thread
    (256, 257, 256),  # >= 2^24: the kernel on the program's threads
    (256, 512, 10),  # narrow: the narrow path (f32 on AVX-512; f64 generated, N > 8)
    (33, 70, 8),  # narrow, ragged M: the narrow path for f32 and f64 on AVX-512
    (17, 300, 1),  # one column
    (1024, 512, 16),  # narrow, >= 2^22: the narrow path on the program's threads
]


def _rel(got, want):
    return np.abs(np.asarray(got, np.float64) - want).max() / (1.0 + np.abs(want).max())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m,k,n", SHAPES)
def test_products_in_every_layout_match_numpy(m, k, n, dtype):
    rng = np.random.default_rng(m * 1000 + k * 10 + n)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    want = a.astype(np.float64) @ b.astype(np.float64)
    tol = (1e-5 if dtype == np.float32 else 1e-13) * np.sqrt(k) * 4
    got = {
        "plain": qb.jit(lambda x, y: x @ y)(a, b),
        "a as [k, m]": qb.jit(lambda x, y: x.T @ y)(a.T.copy(), b),
        "b as [n, k]": qb.jit(lambda x, y: x @ y.T)(a, b.T.copy()),
        "both": qb.jit(lambda x, y: x.T @ y.T)(a.T.copy(), b.T.copy()),
        "used twice": qb.jit(lambda x, y: (x @ y) * 2.0 - x @ y)(a, b),
    }
    for name, r in got.items():
        assert np.asarray(r).dtype == dtype
        assert _rel(r, want) <= tol, name


@pytest.mark.parametrize("batch,m,k,n", [(1, 40, 30, 64), (3, 33, 65, 40), (2, 256, 256, 272)])
def test_batched_products_match_numpy(batch, m, k, n):
    rng = np.random.default_rng(batch + m + k + n)
    a = rng.standard_normal((batch, m, k)).astype(np.float32)
    b = rng.standard_normal((batch, k, n)).astype(np.float32)
    want = np.einsum("bmk,bkn->bmn", a.astype(np.float64), b.astype(np.float64))
    assert _rel(qb.jit(lambda x, y: x @ y)(a, b), want) <= 1e-5 * np.sqrt(k) * 4


@pytest.mark.parametrize("m,k,n", [(32, 48, 64), (256, 256, 257), (256, 512, 8)])  # the last: dB = A^T g on the f64 narrow path
def test_gradients_of_products_match_the_analytic_ones(m, k, n):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((m, k))
    b = rng.standard_normal((k, n))
    g = rng.standard_normal((m, n))
    ga, gb = qb.jit(qb.grad(lambda x, y: qb.sum((x @ y) * g), argnums=(0, 1)))(a, b)
    assert _rel(ga, g @ b.T) <= 1e-12 * np.sqrt(n) * 4
    assert _rel(gb, a.T @ g) <= 1e-12 * np.sqrt(m) * 4


@pytest.mark.parametrize("m,k", [(3, 4), (5, 16), (7, 48), (6, 17)])
def test_small_products_used_through_a_broadcast_match_numpy(m, k):
    # Small products on the loop path read K in groups (lowering/src/linalg/dot.rs
    # `k_group`); a product read through a broadcast by its consumer (the per-row dot times
    # the row) once came out wrong when upstream fusion merged it into that consumer.
    rng = np.random.default_rng(m * k)
    x = rng.standard_normal((m, k)).astype(np.float32)
    want = (x @ x[1])[:, None] * x
    for f in (qb.jit(qb.vmap(lambda r, c: qb.dot(r, c) * r, in_axes=(0, None))), qb.jit(lambda a, c: (a @ c)[:, None] * a)):
        got = np.asarray(f(qb.asarray(x), qb.asarray(x[1])))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
