"""Composite programs exported with `quabla-opt --emit=stablehlo` (the standard pipeline:
autodiff, vmap, inline, canonicalize, symbol-dce, then the export), run on XLA CPU and IREE
llvm-cpu, against Quabla's CPU JIT; plus calls kept as func.call, the error paths, and the
PINN step against JAX itself."""
import os
import subprocess

import numpy as np
import pytest

import harness as h

pytest.importorskip("jax", reason="the StableHLO tests run the export on jaxlib's XLA (requirements-dev.txt)")
pytest.importorskip("iree.compiler", reason="the StableHLO tests run the export on IREE (requirements-dev.txt)")

HERE = os.path.dirname(__file__)
PIPELINE = "quabla-autodiff,quabla-inline,quabla-canonicalize"


def program(name):
    with open(os.path.join(HERE, "programs", name)) as f:
        return f.read()


def mlp_inputs(dtype, seed=0):
    rng = np.random.default_rng(seed)
    shapes = [(8, 16), (8, 4), (16, 32), (32,), (32, 4), (4,)]
    return [(rng.standard_normal(s) * (0.5 if i >= 2 else 1.0)).astype(dtype) for i, s in enumerate(shapes)]


LABELS = ["loss", "dw1", "db1", "dw2", "db2"]


@pytest.mark.parametrize("dt", ["f32", "f64"])
def test_mlp_forward_backward(dt):
    """examples/mlp.mlir: forward and hand-written backward."""
    with open(os.path.join(h.ROOT, "examples", "mlp.mlir")) as f:
        text = f.read().replace("f32", dt)
    h.check(text, mlp_inputs(h.DTYPES[dt]), LABELS)


def test_mlp_vjp_transform():
    """The same loss and gradients from a vjp transform function, expanded by the pipeline."""
    text = program("mlp_vjp.mlir")
    shlo = h.check(text, mlp_inputs(np.float32, 1), LABELS, run_pipeline=PIPELINE)
    assert "func.call" not in shlo and "quabla" not in shlo.replace("loc(", "")
    # The hand-written backward pass of examples/mlp.mlir computes the same gradients.
    with open(os.path.join(h.ROOT, "examples", "mlp.mlir")) as f:
        hand = h.xla_run(h.export(f.read()), mlp_inputs(np.float32, 1))
    for a, b, l in zip(h.xla_run(shlo, mlp_inputs(np.float32, 1)), hand, LABELS):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=l)


def test_every_reduction():
    rng = np.random.default_rng(2)
    logits = rng.standard_normal((6, 5))
    logits[2, 1] = logits[2, 3] = logits[2].max() + 1.0  # an argmax tie: the first index wins
    labels = np.array([0, 4, 2, 1, 9, -1], np.int32)  # out-of-range labels clamp
    h.check(program("reductions.mlir"), [logits, labels], ["loss", "argmax", "argmin", "prod", "min", "any", "all"])


def pinn_inputs():
    rng = np.random.default_rng(3)
    return [np.linspace(-1.5, 1.5, 16), rng.standard_normal(8), rng.standard_normal(8) * 0.3, rng.standard_normal(8) * 0.5]


def test_pinn_value_and_grad():
    """vmap of a second derivative (nested JVPs) inside a VJP: expanded, exported, run."""
    shlo = h.check(program("pinn.mlir"), pinn_inputs(), ["loss", "dw1", "db1", "dw2"], run_pipeline=PIPELINE)
    assert "func.call" not in shlo


def test_pinn_matches_jax():
    """The exported PINN step on XLA equals JAX's own value_and_grad of the same function."""
    import jax
    import jax.numpy as jnp

    h._xla()  # enables x64

    def u(x, w1, b1, w2):
        return jnp.sum(jnp.tanh(w1 * x + b1) * w2)

    uxx = jax.grad(jax.grad(u))

    def loss(w1, b1, w2, xs):
        r = jax.vmap(uxx, in_axes=(0, None, None, None))(xs, w1, b1, w2) + jnp.sin(xs)
        return jnp.mean(r * r)

    xs, w1, b1, w2 = pinn_inputs()
    val, grads = jax.value_and_grad(loss, argnums=(0, 1, 2))(w1, b1, w2, xs)
    got = h.xla_run(h.export(program("pinn.mlir")), pinn_inputs())
    for g, w, l in zip(got, [val, *grads], ["loss", "dw1", "db1", "dw2"]):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-10, atol=1e-12, err_msg=l)


def test_calls_stay_calls():
    """With the export alone in the pipeline, calls are func.call of private functions."""
    text = program("calls.mlir")
    rng = np.random.default_rng(4)
    shlo = h.check(text, [rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(4).astype(np.float32)], pipeline="convert-quabla-to-stablehlo")
    assert shlo.count('"func.call"') == 3 and "func.func private @layer" in shlo and "func.func @main" in shlo


def test_single_public_function_becomes_main():
    text = """func.func @f(%x: tensor<3xf64>) -> tensor<3xf64> {
  %0 = "quabla.exp"(%x) : (tensor<3xf64>) -> tensor<3xf64>
  return %0 : tensor<3xf64>
}
func.func private @main(%x: tensor<3xf64>) -> tensor<3xf64> {
  return %x : tensor<3xf64>
}"""
    shlo = h.export(text, "convert-quabla-to-stablehlo")
    assert "func.func @main(" in shlo and "func.func private @main_1(" in shlo
    x = np.array([0.0, 1.0, -2.0])
    np.testing.assert_allclose(h.xla_run(shlo, [x])[0], np.exp(x), rtol=1e-15)


def _fails(text, *args):
    r = h._qopt(list(args), text)
    assert r.returncode == 1, r.stdout
    return r.stderr


def test_errors():
    text = program("mlp_vjp.mlir")
    err = _fails(text, "--pass-pipeline=builtin.module(convert-quabla-to-stablehlo)")
    assert "'quabla.vjp' op cannot be lowered: @loss_vjp (the vjp of @loss) is a transform function without a body: run quabla-autodiff" in err
    err = _fails(text, "--pass-pipeline=builtin.module(quabla-autodiff,convert-quabla-to-stablehlo,quabla-inline)")
    assert "convert-quabla-to-stablehlo is terminal" in err
    two = "func.func @a(%x: tensor<f32>) -> tensor<f32> {\n  return %x : tensor<f32>\n}\nfunc.func @b(%x: tensor<f32>) -> tensor<f32> {\n  return %x : tensor<f32>\n}"
    assert "needs one entry point, a public func.func @main (public functions: @a, @b)" in _fails(two, "--emit=stablehlo")
    r = subprocess.run([h.QOPT, "--list-passes"], capture_output=True, text=True)
    assert "convert-quabla-to-stablehlo" in r.stdout


# Regression: two same-typed reductions returned separately once shared a destination in the
# CPU JIT (cse before eliminate-empty-tensors); the export and the JIT must agree.
def test_jit_same_typed_reductions():
    p = h.Program()
    x = p.arg(np.arange(16, dtype=np.float32).reshape(4, 4))
    y = p.arg(np.ones((4, 4), np.float32))
    p.out(p.op("reduce_sum", [x], "tensor<4xf32>", "dims = array<i64: 1>"), "sum x")
    p.out(p.op("reduce_sum", [y], "tensor<4xf32>", "dims = array<i64: 1>"), "sum y")
    p.check(iree=False)


@pytest.mark.parametrize("n", [0, 3, 4])
def test_control_flow(n):
    """quabla.if / quabla.while export to stablehlo.if / stablehlo.while and run on XLA and IREE."""
    x = np.array([0.25, -1.0, 0.5, 2.0], np.float32)
    shlo = h.check(program("control.mlir"), [np.array(n, np.int64), x], labels=["value", "count"])
    assert '"stablehlo.while"' in shlo and '"stablehlo.if"' in shlo
