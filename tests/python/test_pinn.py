"""The README PINN (reference §2.4): u_xx = vmap(grad(grad(u)), in_axes=(0, None)) inside
jit(value_and_grad(loss)): loss and gradient equal JAX's identical program within 1e-12 in
float64 (at several w, and along 20 Adam steps), examples/pinn.py prints w = 3.141593, and
the compiled graph stays small."""

import math
import os
import subprocess
import sys

import numpy as np
import pytest

import quabla as qb

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def u(x, w):
    return qb.sin(x * w)


u_xx = qb.vmap(qb.grad(qb.grad(u)), in_axes=(0, None))


def loss(w, x):
    return qb.mean((u_xx(x, w) + math.pi**2 * qb.sin(math.pi * x)) ** 2)


def uj(x, w):
    return jnp.sin(x * w)


uj_xx = jax.vmap(jax.grad(jax.grad(uj)), in_axes=(0, None))


def lossj(w, x):
    return jnp.mean((uj_xx(x, w) + math.pi**2 * jnp.sin(math.pi * x)) ** 2)


def rel(a, b):
    return abs(a - b) / max(1.0, abs(b))


@pytest.mark.parametrize("n", [1, 8, 64])
def test_pinn_loss_and_gradient_equal_jax(n):
    x = np.linspace(0.05, 0.95, n)
    step = qb.jit(qb.value_and_grad(loss))
    stepj = jax.jit(jax.value_and_grad(lossj))
    for w in [2.5, 1.0, 3.0, math.pi]:
        v, g = step(qb.array(w), qb.array(x))
        vj, gj = stepj(w, x)
        assert rel(v.item(), float(vj)) <= 1e-12, (w, v.item(), float(vj))
        assert rel(g.item(), float(gj)) <= 1e-12, (w, g.item(), float(gj))
    # closed form: u_xx = -w^2 sin(w x)
    w = 2.5
    want = np.mean((-(w**2) * np.sin(w * x) + math.pi**2 * np.sin(math.pi * x)) ** 2)
    assert rel(step(qb.array(w), qb.array(x))[0].item(), want) <= 1e-12


def test_pinn_adam_trajectory_equals_jax():
    x = np.linspace(0.05, 0.95, 8)
    step = qb.jit(qb.value_and_grad(loss))
    stepj = jax.jit(jax.value_and_grad(lossj))
    opt = qb.optim.Adam(learning_rate=0.05)
    w, wj = qb.array(2.5), 2.5
    state = opt.init(w)
    m = v = 0.0
    for t in range(1, 21):
        val, g = step(w, qb.array(x))
        valj, gj = stepj(wj, x)
        assert rel(val.item(), float(valj)) <= 1e-12 and rel(g.item(), float(gj)) <= 1e-12
        w, state = opt.update(w, g, state)
        gj = float(gj)
        m = 0.9 * m + 0.1 * gj
        v = 0.999 * v + 0.001 * gj * gj
        wj = wj - 0.05 * (m / (1 - 0.9**t)) / (math.sqrt(v / (1 - 0.999**t)) + 1e-8)
        assert rel(w.item(), wj) <= 1e-12


def test_pinn_example_prints_w():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "pinn.py")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("w = 3.141593, loss = "), r.stdout
    assert float(r.stdout.split("loss = ")[1]) < 1e-10


def test_pinn_graph_sizes():
    x, w = qb.linspace(0.05, 0.95, 8), qb.array(2.5)
    n_uxx = qb.jit(u_xx).lower(x, w).program.optimized_num_ops()
    n_vg = qb.jit(qb.value_and_grad(loss)).lower(w, x).program.optimized_num_ops()
    # independent of the number of points; small after canonicalize
    assert qb.jit(qb.value_and_grad(loss)).lower(w, qb.linspace(0.05, 0.95, 64)).program.optimized_num_ops() == n_vg
    assert n_uxx <= 10 and n_vg <= 40, (n_uxx, n_vg)
