"""The Python entry points of the export: `qb.export(f, *args)` and
`jit(f).lower(...).as_text(dialect="stablehlo")` give StableHLO that verifies with jaxlib,
runs on XLA and IREE, and equals Quabla's own result (including a grad and a vmap)."""
import functools

import numpy as np
import pytest

import quabla as qb

import harness as h

_check = functools.partial(h.check_fn, eager=True)


def test_export_mlp_loss_grad():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 4))
    w1, w2 = rng.standard_normal((4, 16)), rng.standard_normal((16, 1))

    def loss(w1, w2, x):
        return qb.mean(qb.tanh(x @ w1) @ w2 ** 2)

    text = _check(qb.grad(loss, argnums=(0, 1)), w1, w2, x)
    assert "stablehlo.dot_general" in text


def test_export_vmap_and_float32():
    x = np.linspace(0.1, 0.9, 6).astype(np.float32)
    w = np.float32(2.5)
    f = qb.vmap(qb.grad(lambda x, w: qb.sin(x * w)), in_axes=(0, None))
    _check(f, x, qb.asarray(w))


def test_as_text_dialects():
    low = qb.jit(lambda x: qb.exp(x) + 1.0).lower(qb.ShapeDtype((3,), qb.float64))
    assert "quabla.exp" in low.as_text()
    assert low.as_text(dialect="stablehlo") == low.as_stablehlo()
    assert "stablehlo.exponential" in low.as_stablehlo()
    with pytest.raises(ValueError, match="dialect"):
        low.as_text(dialect="hlo")
