"""The CPU's sort kernels (runtime/src/sort_kernels.rs, O(n log n) per lane) against NumPy's
stable sort (and jax.numpy for descending order, whose stable ties NumPy has no flag for):
every dtype, long lanes with many ties, NaNs, infinities and signed zeros, every axis of a
3-d array, both directions, sort and argsort (int32 and int64 indices), eager and jit."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import quabla as qb

jax.config.update("jax_enable_x64", True)

DTYPES = ["float32", "float64", "bool", "int32", "int64", "uint8", "uint32"]


def sample(dtype, shape, rng):
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith("float"):
        x = np.round(rng.standard_normal(shape) * 4) / 2  # many ties
        flat = x.reshape(-1)
        k = flat.size
        for frac, v in ((0.01, np.nan), (0.005, np.inf), (0.005, -np.inf), (0.02, -0.0), (0.02, 0.0)):
            flat[rng.choice(k, max(1, int(frac * k)), replace=False)] = v
        return x.astype(dtype)
    info = np.iinfo(dtype)
    lo, hi = (int(info.min), int(info.max)) if rng.random() < 0.5 else (0, 20)
    return rng.integers(lo, hi, shape, dtype=dtype, endpoint=True)


def check_same(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, want.dtype, got.shape, want.shape)
    # Bitwise (so -0.0 and 0.0 keep their positions and NaNs compare equal).
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), what


@pytest.mark.parametrize("dtype", DTYPES)
def test_long_lanes_match_numpy(dtype):
    rng = np.random.default_rng(DTYPES.index(dtype))
    x = sample(dtype, (30_000,), rng)
    check_same(qb.sort(qb.asarray(x, dtype=x.dtype.name)), np.sort(x, kind="stable"), f"sort {dtype}")
    check_same(qb.argsort(qb.asarray(x, dtype=x.dtype.name)), np.argsort(x, kind="stable").astype(np.int64), f"argsort {dtype}")
    jx = jnp.asarray(x)
    # Descending values: equal as numbers (jnp.sort(descending=True) reverses the ascending
    # sort, so its signed zeros sit in the opposite order; the op keeps ties in place, which
    # the argsort checks below see).
    np.testing.assert_array_equal(np.asarray(qb.jit(lambda v: qb.sort(v, descending=True))(qb.asarray(x, dtype=x.dtype.name))), np.sort(x, kind="stable")[::-1])
    check_same(qb.jit(lambda v: qb.argsort(v, descending=True))(qb.asarray(x, dtype=x.dtype.name)), jnp.argsort(jx, descending=True, stable=True), f"argsort desc {dtype}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_axis_of_a_3d_array(dtype):
    rng = np.random.default_rng(10 + DTYPES.index(dtype))
    x = sample(dtype, (6, 7, 40), rng)
    for axis in (0, 1, 2, -1):
        check_same(qb.sort(qb.asarray(x, dtype=x.dtype.name), axis=axis), np.sort(x, axis=axis, kind="stable"), f"sort {dtype} axis {axis}")
        check_same(qb.argsort(qb.asarray(x, dtype=x.dtype.name), axis=axis), np.argsort(x, axis=axis, kind="stable").astype(np.int64), f"argsort {dtype} axis {axis}")
        jx = jnp.asarray(x)
        check_same(qb.argsort(qb.asarray(x, dtype=x.dtype.name), axis=axis, descending=True), jnp.argsort(jx, axis=axis, descending=True, stable=True), f"argsort desc {dtype} axis {axis}")


def test_top_k_and_int32_indices():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 5000))
    v, i = qb.top_k(qb.asarray(x, dtype=x.dtype.name), 7)
    jv, ji = jax.lax.top_k(jnp.asarray(x), 7)
    check_same(v, jv, "top_k values")
    np.testing.assert_array_equal(np.asarray(i), np.asarray(ji))
    # An int32 index result (the argsort op's index attribute).
    r = qb.random.permutation(qb.random.key(0), 20_000)
    np.testing.assert_array_equal(np.sort(np.asarray(r)), np.arange(20_000))
    np.testing.assert_array_equal(np.asarray(r), np.asarray(jax.random.permutation(jax.random.PRNGKey(0), 20_000)))
