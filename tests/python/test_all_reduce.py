"""``qb.distributed.all_reduce``: one array per device, every device receiving the reduction.
Host arrays are reduced on the host (checked here against NumPy for every op and dtype);
arrays on GPUs go through NCCL (checked where a driver, GPUs and libnccl exist:
tests/gpu/run.sh); the argument checks are the same on both paths."""

import ctypes.util

import numpy as np
import pytest

import quabla as qb
from quabla import _quabla as _q

D = qb.distributed
HAS_DRIVER = ctypes.util.find_library("cuda") is not None
RNG = np.random.default_rng(3)

NP = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod}


@pytest.mark.parametrize("op", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8, np.uint32, np.bool_])
@pytest.mark.parametrize("n", [1, 3])
def test_host_arrays_reduce_like_numpy(op, dtype, n):
    if op == "mean" and not np.issubdtype(dtype, np.floating):
        pytest.skip("mean takes floats (checked below)")
    if op in ("sum", "prod") and dtype == np.bool_:
        pytest.skip("bool takes max and min (checked below)")
    arrays = [(RNG.standard_normal((2, 3)) * 4).astype(dtype) if dtype != np.bool_ else RNG.random((2, 3)) < 0.5 for _ in range(n)]
    got = D.all_reduce([qb.array(a, dtype=dtype) for a in arrays], op)
    want = NP[op](np.stack(arrays), axis=0).astype(dtype)
    assert len(got) == n
    for g in got:
        assert g.device == "cpu" and g.dtype == qb.dtype(dtype) and g.shape == (2, 3)
        if np.issubdtype(dtype, np.floating):
            np.testing.assert_allclose(g.numpy(), want, rtol=1e-6)
        else:
            np.testing.assert_array_equal(g.numpy(), want)


def test_array_likes_are_accepted():
    got = D.all_reduce((np.arange(3.0), [1.0, 1.0, 1.0]), "sum")
    assert [g.tolist() for g in got] == [[1.0, 2.0, 3.0]] * 2


def test_bad_arguments_are_typed_errors():
    x = qb.ones((2,))
    with pytest.raises(qb.InvalidArgumentError, match="op must be one of"):
        D.all_reduce([x], "avg")
    with pytest.raises(qb.InvalidArgumentError, match="at least one"):
        D.all_reduce([])
    with pytest.raises(qb.ArgumentTypeError, match="sequence of arrays"):
        D.all_reduce(3)
    with pytest.raises(qb.ShapeError, match="array 1 has shape"):
        D.all_reduce([x, qb.ones((3,))])
    with pytest.raises(qb.DTypeError, match="array 1 is"):
        D.all_reduce([x, qb.ones((2,), dtype=qb.float32)])
    with pytest.raises(qb.DTypeError, match="takes floats"):
        D.all_reduce([qb.array([1, 2])], "mean")
    with pytest.raises(qb.DTypeError, match="not defined on bool"):
        D.all_reduce([qb.array([True])], "sum")
    with pytest.raises(qb.UnsupportedOperationError, match="traced"):
        qb.jit(lambda a: D.all_reduce([a])[0])(x)


def test_mixed_devices_are_refused():
    mx = pytest.importorskip("mlx.core", reason="mlx is not installed (pip install 'mlx[cpu]')")
    del mx
    with pytest.raises(qb.InvalidArgumentError, match="all be on GPUs"):
        D.all_reduce([qb.ones((2,)), qb.device_put(qb.ones((2,)), "mlx")])


def test_the_gpu_path_refuses_host_buffers():
    # The NCCL entry point checks its inputs before any driver call (no GPU needed).
    with pytest.raises(qb.QuablaError, match="not on a GPU"):
        _q.nccl_all_reduce([qb.ones((2,))], "sum")
    with pytest.raises(qb.InvalidArgumentError, match="op must be"):
        _q.nccl_all_reduce([qb.ones((2,))], "avg")


@pytest.mark.skipif(not HAS_DRIVER, reason="needs the CUDA driver, GPUs and NCCL (tests/gpu/run.sh)")
def test_gpus_reduce_through_nccl():
    gpus = [d for d in qb.devices() if d.startswith("cuda:")]
    if not ctypes.util.find_library("nccl"):
        with pytest.raises(qb.UnsupportedOperationError, match="NCCL"):
            D.all_reduce([qb.device_put(qb.ones((2,)), gpus[0])])
        return
    arrays = [RNG.standard_normal((5, 7)) for _ in gpus]
    placed = [qb.device_put(qb.array(a), g) for a, g in zip(arrays, gpus)]
    for op in ["sum", "mean", "max", "min"]:
        got = D.all_reduce(placed, op)
        for g, dev in zip(got, gpus):
            assert g.device == dev
            np.testing.assert_allclose(g.numpy(), NP[op](np.stack(arrays), axis=0), rtol=1e-12)
    with pytest.raises(qb.InvalidArgumentError, match="one array per GPU"):
        D.all_reduce([placed[0], placed[0]])
