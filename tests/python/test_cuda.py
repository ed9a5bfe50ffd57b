"""The CUDA device from Python. On a machine without the CUDA driver (CI, the development
machines) `cuda` is registered but unavailable, and compiling for it raises
UnsupportedOperationError naming the device and the missing driver; with a driver and a GPU
(tests/gpu/run.sh) jitted functions match the CPU."""
import ctypes.util
import os
import subprocess
import sys

import numpy as np
import pytest

import quabla as qb
from quabla import _quabla as _q

HAS_DRIVER = ctypes.util.find_library("cuda") is not None
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _table():
    return {name: (kind, available) for name, kind, _, available in _q.device_table()}


@pytest.mark.skipif(HAS_DRIVER, reason="this machine has a CUDA driver")
def test_without_a_driver_cuda_is_listed_unavailable():
    assert _table()["cuda"] == ("gpu", False)
    assert "cuda" not in qb.devices()


@pytest.mark.skipif(HAS_DRIVER, reason="this machine has a CUDA driver")
def test_jit_for_cuda_without_a_driver_raises_naming_the_device():
    f = qb.jit(lambda x: qb.sin(x) * 2.0, device="cuda")
    with pytest.raises(qb.UnsupportedOperationError) as e:
        f(qb.array([1.0, 2.0]))
    assert e.value.device == "cuda" and "cuda" in str(e.value) and "not available" in str(e.value)
    # The compile path below the jit check names the missing driver.
    low = qb.jit(lambda x: x + 1.0).lower(qb.array([1.0]))
    with pytest.raises(qb.UnsupportedOperationError) as e:
        low.program.compile(device="cuda")
    assert "cuda" in str(e.value) and "CUDA driver" in str(e.value), str(e.value)


@pytest.mark.skipif(not HAS_DRIVER, reason="needs the CUDA driver and a GPU (tests/gpu/run.sh)")
def test_cuda_matches_the_cpu():
    rng = np.random.default_rng(0)
    x = qb.array(rng.standard_normal((33, 70)))
    w = qb.array(rng.standard_normal((70, 5)))

    def f(x, w):
        return qb.sum(qb.tanh(x @ w), axis=0), qb.max(x)

    for a, b in zip(qb.jit(f, device="cuda")(x, w), qb.jit(f)(x, w)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)


def test_quabla_opt_emits_ptx():
    # The lowering needs no GPU, only libdevice from the nvidia-cuda-nvcc-cu12 wheel.
    nvcc = os.path.join(os.path.dirname(np.__file__), "..", "nvidia", "cuda_nvcc")
    if not os.environ.get("QUABLA_CUDA_NVCC") and not os.path.isdir(nvcc):
        pytest.skip("the nvidia-cuda-nvcc-cu12 wheel is not installed")
    src = 'func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {\n  %0 = "quabla.exp"(%a) : (tensor<8xf32>) -> tensor<8xf32>\n  return %0 : tensor<8xf32>\n}\n'
    code = "import sys; from quabla import _opt; sys.exit(_opt.main())"
    r = subprocess.run([sys.executable, "-c", code, "-", "--emit=ptx", "--cuda-arch=sm_80"], input=src, capture_output=True, text=True)
    if r.returncode != 0 and "No module" in r.stderr:
        pytest.skip(r.stderr)
    assert r.returncode == 0, r.stderr
    assert "1 kernels, 1 launches" in r.stdout and ".target sm_80" in r.stdout and ".entry main_kernel" in r.stdout, r.stdout
