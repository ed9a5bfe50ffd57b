"""qb.ops segment reductions against jax.ops (x64): values for every reduction, dtype and
mode (negative and too large ids included), rows of several dims, jit, gradients and vmap,
and typed errors."""

import numpy as np
import pytest

import quabla as qb

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)

NAMES = ["segment_sum", "segment_prod", "segment_max", "segment_min"]
RNG = np.random.default_rng(3)
IDS = RNG.integers(-2, 9, size=40).astype(np.int32)  # negative and >= 7 ids are out of range


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
@pytest.mark.parametrize("mode", [None, "clip"])
def test_matches_jax(name, dtype, mode):
    data = (RNG.standard_normal((40, 3, 2)) * 3).astype(dtype)
    want = getattr(jax.ops, name)(data, IDS, 7, mode=mode)
    got = getattr(qb.ops, name)(data, IDS, 7, mode=mode)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, atol=0)
    jitted = qb.jit(lambda d, s: getattr(qb.ops, name)(d, s, num_segments=7, mode=mode))(data, IDS)
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(want), rtol=1e-6, atol=0)


def test_counted_segments_gradients_and_vmap():
    data = RNG.standard_normal((40, 4))
    ids = np.abs(IDS)
    np.testing.assert_array_equal(np.asarray(qb.ops.segment_sum(data, ids)).shape, (int(ids.max()) + 1, 4))
    for name in ["segment_sum"]:  # jax.ops has no gradient of the others with repeated ids
        g = qb.grad(lambda d: (getattr(qb.ops, name)(d, ids, 9) ** 2).sum())(data)
        gj = jax.grad(lambda d: (getattr(jax.ops, name)(d, ids, 9) ** 2).sum())(data)
        np.testing.assert_allclose(np.asarray(g), np.asarray(gj), rtol=1e-10, atol=1e-12, err_msg=name)
    batch = RNG.standard_normal((3, 40, 4))
    got = qb.vmap(lambda d: qb.ops.segment_sum(d, ids, 9))(batch)
    want = jax.vmap(lambda d: jax.ops.segment_sum(d, ids, 9))(batch)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12, atol=1e-12)


def test_errors():
    data = np.ones((5, 2))
    with pytest.raises(qb.DTypeError, match="segment_sum"):
        qb.ops.segment_sum(data, np.zeros(5), 2)
    with pytest.raises(qb.ShapeError, match="segment_max"):
        qb.ops.segment_max(data, np.zeros(4, np.int32), 2)
    with pytest.raises(qb.TracerError, match="num_segments"):
        qb.jit(lambda d, s: qb.ops.segment_sum(d, s))(data, np.zeros(5, np.int32))
