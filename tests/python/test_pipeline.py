"""The one compile pipeline and the executor registry, seen from Python: qb.jit, eager ops and
quabla-opt's default pipeline run the same pipeline object (the compiler records, per entry
point, which object it used); qb.devices() comes from the registry."""

import os
import subprocess
import sys

import numpy as np

import quabla as qb
from quabla import _quabla as _q

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
QOPT = os.environ.get("QUABLA_OPT", os.path.join(ROOT, "target", os.environ.get("QUABLA_PROFILE", "debug"), "quabla-opt"))
DEFAULT = "quabla-autodiff,quabla-inline,quabla-canonicalize,quabla-symbol-dce"

PROGRAM = """func.func private @f(%x: tensor<3xf64>) -> tensor<3xf64> {
  %0 = "quabla.sin"(%x) : (tensor<3xf64>) -> tensor<3xf64>
  return %0 : tensor<3xf64>
}
func.func private @f_vjp(tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>) attributes {quabla.of = @f, quabla.transform = "vjp"}
func.func @main(%x: tensor<3xf64>, %ct: tensor<3xf64>) -> tensor<3xf64> {
  %0:2 = func.call @f_vjp(%x, %ct) : (tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>)
  return %0#1 : tensor<3xf64>
}
"""


def test_jit_and_eager_use_the_default_pipeline_object():
    desc, addr = _q.default_pipeline()
    assert desc == DEFAULT
    g = qb.jit(lambda x: qb.grad(lambda y: qb.sum(qb.sin(y) * 3.0))(x))
    assert np.allclose(g(qb.array([0.0, 1.0])).numpy(), 3.0 * np.cos([0.0, 1.0]))
    # A fresh eager signature compiles one single-op program.
    a = qb.array(np.arange(7 * 13, dtype=np.float32).reshape(7, 13))
    assert np.allclose((a - a).numpy(), 0.0)
    jit, eager = _q.pipeline_used("jit"), _q.pipeline_used("eager")
    assert jit == (DEFAULT, addr), jit
    assert eager == (DEFAULT, addr), eager


def test_quabla_opt_uses_the_same_pipeline():
    r = subprocess.run([QOPT, "-", "--emit=stablehlo", "--print-pipeline"], input=PROGRAM, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    # quabla-opt checks the identity in its own process (pointer comparison with the default
    # object); the description ties it to the one qb.jit and eager ops used here.
    assert f"quabla-opt: compile pipeline: default ({_q.default_pipeline()[0]})" in r.stderr, r.stderr
    assert "stablehlo.cosine" in r.stdout


def test_pipeline_used_rejects_unknown_kinds():
    try:
        _q.pipeline_used("xla")
    except ValueError as e:
        assert "unknown kind" in str(e)
    else:
        raise AssertionError("pipeline_used('xla') must raise")


def test_devices_come_from_the_registry():
    table = {name: (kind, available) for name, kind, _, available in _q.device_table()}
    assert table["cpu"] == ("cpu", True)
    assert table["interp"] == ("reference", True)
    assert table["cuda"] == ("gpu", False)
    # plus the Python-side XLA executor (python/quabla/_xla.py) where jax is installed
    xla = ["xla"] if qb.sharding.available() else []
    assert qb.devices() == [n for n, (k, avail) in table.items() if avail and k != "reference"] + xla
    assert _q.device_table()[0][0] == qb.devices()[0] == "cpu"


def test_program_compile_for_the_interpreter():
    low = qb.jit(lambda x: qb.exp(x) + 1.0).lower(qb.array([0.0, 1.0]))
    interp = low.program.compile(interpret=True)
    cpu = low.program.compile()
    assert (interp.engine, interp.device) == ("interpreter", "interp")
    assert (cpu.engine, cpu.device) == ("cpu", "cpu")
    x = [qb.array([0.5, -1.0])]
    assert np.allclose(interp(x)[0].numpy(), cpu(x)[0].numpy())
    try:
        low.program.compile(device="cuda")
    except qb.UnsupportedOperationError as e:
        assert "cuda" in str(e) and "not available" in str(e)
    else:
        raise AssertionError("compiling for cuda must raise")


def test_eager_interp_runs_the_same_pipeline():
    code = (
        "import numpy as np, quabla as qb\n"
        "from quabla import _quabla as q\n"
        "a = qb.array(np.array([1.0, 2.0, 4.0]))\n"
        "print((qb.sqrt(a) * a).tolist())\n"
        "print(q.pipeline_used('eager') == q.default_pipeline())\n"
        "print(q.eager_device_name())\n"
    )
    env = dict(os.environ, QUABLA_EAGER="interp")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    vals, same, device = r.stdout.split("\n")[:3]
    assert np.allclose(eval(vals), np.sqrt([1.0, 2.0, 4.0]) * [1.0, 2.0, 4.0])
    assert same == "True"
    assert device == "interp"


def test_eager_default_device_is_the_cpu():
    assert _q.eager_device_name() == "cpu" or os.environ.get("QUABLA_EAGER") == "interp"
