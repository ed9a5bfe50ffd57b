"""Device placement: ``x.device``, ``qb.device_put`` and the device names (``cuda`` is
``cuda:0``; ``cuda:N`` names one GPU). On machines without a GPU the CUDA names raise
UnsupportedOperationError naming the device; MLX (``mlx[cpu]``) is a real second device here,
so placement and residency are checked on it."""

import ctypes.util

import numpy as np
import pytest

import quabla as qb
from quabla import _quabla as _q

HAS_DRIVER = ctypes.util.find_library("cuda") is not None


def test_host_tensors_are_on_the_cpu():
    x = qb.arange(4.0)
    assert x.device == "cpu"
    assert qb.device_put(x).device == "cpu"
    # Already there: the same tensor, no copy.
    assert qb.device_put(x, "cpu") is x


def test_device_put_takes_pytrees_and_array_likes():
    tree = {"w": qb.ones((2, 3)), "b": np.arange(3.0), "s": 2.5, "l": [np.int32(4)]}
    out = qb.device_put(tree, "cpu")
    assert set(out) == {"w", "b", "s", "l"}
    assert all(isinstance(v, qb.Tensor) and v.device == "cpu" for v in qb.tree.leaves(out))
    np.testing.assert_array_equal(out["b"].numpy(), np.arange(3.0))
    assert out["s"].item() == 2.5 and out["l"][0].dtype == qb.int32


def test_bad_devices_are_typed_errors_naming_them():
    x = qb.ones((2,))
    for name in ["tpu", "cpu:0", "cuda:x", "cuda:"]:
        with pytest.raises(qb.UnsupportedOperationError) as e:
            qb.device_put(x, name)
        assert e.value.device == name and e.value.op == "device_put" and "unknown device" in str(e.value)
    with pytest.raises(qb.ArgumentTypeError, match="device must be a device name"):
        qb.device_put(x, 0)
    with pytest.raises(qb.UnsupportedOperationError, match="NamedSharding"):
        qb.device_put(x, "xla")


@pytest.mark.skipif(HAS_DRIVER, reason="this machine has a CUDA driver")
def test_cuda_names_without_a_driver():
    x = qb.ones((2,))
    for name in ["cuda", "cuda:0", "cuda:3"]:
        with pytest.raises(qb.UnsupportedOperationError) as e:
            qb.device_put(x, name)
        assert e.value.device == name and "not available" in str(e.value) and "CUDA driver" in str(e.value)
    assert _q.canonical_device("cuda") == "cuda"
    assert not any(d.startswith("cuda") for d in qb.devices())
    # jit keeps the name it was given; the call says it is unavailable.
    f = qb.jit(lambda a: a + 1.0, device="cuda:1")
    with pytest.raises(qb.UnsupportedOperationError) as e:
        f(x)
    assert e.value.device == "cuda:1"


@pytest.mark.skipif(not HAS_DRIVER, reason="needs the CUDA driver and a GPU (tests/gpu/run.sh)")
def test_cuda_placement_and_residency():
    gpus = [d for d in qb.devices() if d.startswith("cuda:")]
    assert gpus and gpus[0] == "cuda:0" and _q.canonical_device("cuda") == "cuda:0"
    x = qb.device_put(qb.arange(6.0).reshape(2, 3), "cuda")
    assert x.device == "cuda:0"
    f = qb.jit(lambda a: qb.sin(a) * 2.0, device="cuda")
    y = f(x)
    assert y.device == "cuda:0"
    np.testing.assert_allclose(y.numpy(), np.sin(np.arange(6.0).reshape(2, 3)) * 2.0, rtol=1e-12)
    assert qb.device_put(y, "cuda:0") is y
    back = qb.device_put(y, "cpu")
    assert back.device == "cpu"
    np.testing.assert_array_equal(back.numpy(), y.numpy())
    with pytest.raises(qb.UnsupportedOperationError):
        qb.device_put(x, f"cuda:{len(gpus)}")


def test_device_put_inside_jit_is_the_identity():
    f = qb.jit(lambda a: qb.device_put(a, "cpu") * 2.0)
    np.testing.assert_array_equal(f(qb.arange(3.0)).numpy(), [0.0, 2.0, 4.0])


def test_mlx_placement_is_resident():
    mx = pytest.importorskip("mlx.core", reason="mlx is not installed (pip install 'mlx[cpu]')")
    del mx
    from quabla import _mlx

    x = qb.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = qb.device_put(x, "mlx")
    assert y.device == "mlx" and x.device == "cpu"
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    assert qb.device_put(y, "mlx") is y
    f = qb.jit(lambda a: a * 2.0 + 1.0, device="mlx")
    before = _mlx.stats["host_inputs"]
    z = f(y)
    # The placed array goes in without a host copy, and the result stays in MLX.
    assert _mlx.stats["host_inputs"] == before and z.device == "mlx"
    np.testing.assert_array_equal(z.numpy(), x.numpy() * 2.0 + 1.0)
    back = qb.device_put(z, "cpu")
    assert back.device == "cpu"
    np.testing.assert_array_equal(back.numpy(), x.numpy() * 2.0 + 1.0)
    # Every dtype survives the round trip.
    for a in [np.array([True, False]), np.arange(3, dtype=np.int64), np.arange(3, dtype=np.uint8), np.array([1.5, -2.0])]:
        t = qb.device_put(qb.array(a), "mlx")
        assert t.device == "mlx" and t.dtype == qb.array(a).dtype
        np.testing.assert_array_equal(t.numpy(), a)
