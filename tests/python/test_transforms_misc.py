"""Transforms: the traced module (declarations visible in lower().as_text()), threads,
degenerate functions, and the stock mlir-opt check of a module with transform declarations."""

import os
import shutil
import subprocess
import threading

import numpy as np
import pytest

import quabla as qb

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_lowered_module_has_declarations():
    f = lambda x, w: qb.sum(qb.sin(x * w))  # noqa: E731
    low = qb.jit(qb.vmap(qb.grad(f), in_axes=(0, None))).lower(qb.ones((4, 3)), qb.ones(3))
    text = low.as_text()
    assert 'quabla.transform = "vjp"' in text and 'quabla.transform = "vmap"' in text
    assert "quabla.in_axes = array<i64: 0, -1>" in text and "quabla.axis_size = 4 : i64" in text
    opt = low.as_text(optimized=True)
    assert "quabla.transform" not in opt and "func.call" not in opt and opt.count("func.func") == 1
    assert low.program.num_funcs == 5  # main, f, its vjp, grad(f), its vmap and low.program.optimized_num_ops() > 0


@pytest.mark.skipif(not shutil.which("mlir-opt") and not os.path.exists("/usr/lib/llvm-22/bin/mlir-opt"), reason="no mlir-opt")
def test_module_with_declarations_verifies_with_stock_mlir_opt(tmp_path):
    mlir_opt = shutil.which("mlir-opt") or "/usr/lib/llvm-22/bin/mlir-opt"
    f = lambda p, x: qb.sum(qb.tanh(x @ p["w"]) ** 2)  # noqa: E731
    low = qb.jit(qb.value_and_grad(lambda p, x: qb.sum(qb.vmap(qb.grad(f), in_axes=(None, 0))(p, x)["w"])))
    text = low.lower({"w": qb.ones((3, 2))}, qb.ones((5, 3))).as_text()
    path = tmp_path / "m.mlir"
    path.write_text(text)
    r = subprocess.run([mlir_opt, f"--irdl-file={ROOT}/dialect/quabla.irdl.mlir", str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_constant_and_unused_inputs():
    g = qb.grad(lambda x, y: qb.sum(y) * 0.0 + 3.0, argnums=(0, 1))(qb.ones(2), qb.ones(3))
    assert g[0].tolist() == [0.0, 0.0] and g[1].tolist() == [0.0, 0.0, 0.0]
    assert qb.jacobian(lambda x: qb.ones(2) * 2.0)(qb.ones(3)).tolist() == [[0.0] * 3] * 2
    out = qb.vmap(lambda x: 1.0)(qb.ones(4))
    assert out.tolist() == [1.0] * 4


def test_transforms_from_threads():
    f = lambda x: qb.sum(qb.sin(x) ** 2)  # noqa: E731
    errors, results = [], {}

    def work(i):
        try:
            x = qb.array(np.linspace(0.0, 1.0, 3 + i % 3))
            g = qb.grad(lambda x: f(x) * (i + 1))(x)
            v = qb.jit(qb.vmap(qb.grad(f)))(qb.reshape(x, (x.shape[0], 1)))
            results[i] = (g.numpy(), v.numpy(), x.numpy())
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    for i, (g, v, x) in results.items():
        np.testing.assert_allclose(g, (i + 1) * 2 * np.sin(x) * np.cos(x), rtol=1e-13)
        np.testing.assert_allclose(v[:, 0], 2 * np.sin(x) * np.cos(x), rtol=1e-13)


def test_jit_of_transform_keeps_python_numbers_dynamic():
    calls = []

    def f(x, n):
        calls.append(n)
        return x**n

    g = qb.jit(qb.grad(f))
    assert [g(v, 3).item() for v in (2.0, 3.0, 4)] == [12.0, 27.0, 48.0]
    assert calls == [3]  # x is a float64 argument (differentiated); n stays static
    assert g(2.0, 2).item() == 4.0  # a changed number is traced from then on (weak int64)
    assert calls[0] == 3 and len(calls) == 2 and isinstance(calls[1], qb.Tracer)
    assert g(2.0, 4).item() == 32.0 and len(calls) == 2
