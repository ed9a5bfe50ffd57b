"""First-call and per-call times of three jitted steps, Quabla against JAX in the same run.

    python bench/python_steps.py [--reps 5] [--json out.json]

Workloads (float64 PINN as in the README; the others float32):

* small: ``jit(lambda x: sum(sin(x) ** 2))`` on 16 elements;
* pinn: the README PINN step, ``jit(value_and_grad(loss))`` with ``u_xx`` by
  ``vmap(grad(grad(u)))`` over 8 points;
* mlp: ``jit(value_and_grad(loss))`` of a 128-256-10 tanh MLP with a softmax cross-entropy
  over a batch of 32 (parameters as a dict pytree).

First call: a fresh function each repetition (trace + transforms + compile + run), min and
median over ``--reps``. Per call: timeit-style (a repeat runs ``number`` calls, min and median
over repeats), blocking on every JAX result. Ratios are Quabla / JAX (below 1: Quabla faster).
The script uses only API that predates the op table, so it runs on older builds too
(``PYTHONPATH=<site of an older wheel> python bench/python_steps.py``).
"""
import argparse
import json
import math
import statistics
import time
import timeit

import numpy as np

import quabla as qb

import jax
import jax.numpy as jnp

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_enable_x64", True)


def per_call(fn, repeat=7):
    fn()
    number = 1
    while True:
        t = timeit.timeit(fn, number=number)
        if t >= 0.025:
            break
        number *= 2
    ts = [t / number for t in timeit.repeat(fn, number=number, repeat=repeat)]
    return min(ts), statistics.median(ts)


def first_calls(make_and_call, reps):
    ts = []
    for i in range(reps):
        t0 = time.perf_counter()
        make_and_call(i)
        ts.append(time.perf_counter() - t0)
    return min(ts), statistics.median(ts)


# ---------------------------------------------------------------------------------------------
# Workloads: (make(i) -> callable taking no arguments) for both libraries.


def small_q(i):
    x = qb.array(np.linspace(0.0, 1.0, 16, dtype=np.float32) + i * 1e-3)
    f = qb.jit(lambda x: qb.sum(qb.sin(x) ** 2))
    return lambda: f(x)


def small_j(i):
    x = jnp.asarray(np.linspace(0.0, 1.0, 16, dtype=np.float32) + i * 1e-3)
    f = jax.jit(lambda x: jnp.sum(jnp.sin(x) ** 2))
    return lambda: f(x).block_until_ready()


PTS = np.linspace(0.1, 0.9, 8)


def pinn_q(i):
    def u(x, w):
        return qb.sin(x * w)

    def loss(w, x):
        uxx = qb.vmap(qb.grad(qb.grad(u)), in_axes=(0, None))(x, w)
        return qb.mean((uxx + math.pi**2 * qb.sin(math.pi * x)) ** 2)

    step = qb.jit(qb.value_and_grad(loss))
    w, x = qb.array(2.0 + i * 1e-3), qb.array(PTS)
    return lambda: step(w, x)


def pinn_j(i):
    def u(x, w):
        return jnp.sin(x * w)

    def loss(w, x):
        uxx = jax.vmap(jax.grad(jax.grad(u)), in_axes=(0, None))(x, w)
        return jnp.mean((uxx + math.pi**2 * jnp.sin(math.pi * x)) ** 2)

    step = jax.jit(jax.value_and_grad(loss))
    w, x = jnp.asarray(2.0 + i * 1e-3), jnp.asarray(PTS)
    return lambda: jax.block_until_ready(step(w, x))


RNG = np.random.default_rng(0)
MLP = {
    "w1": (RNG.standard_normal((128, 256)) * 0.05).astype(np.float32),
    "b1": np.zeros(256, np.float32),
    "w2": (RNG.standard_normal((256, 10)) * 0.05).astype(np.float32),
    "b2": np.zeros(10, np.float32),
}
XB = RNG.standard_normal((32, 128)).astype(np.float32)
YB = np.eye(10, dtype=np.float32)[RNG.integers(0, 10, 32)]


def mlp_q(i):
    def loss(p, x, y):
        h = qb.tanh(x @ p["w1"] + p["b1"])
        z = h @ p["w2"] + p["b2"]
        m = qb.max(z, axis=1, keepdims=True)
        lse = qb.log(qb.sum(qb.exp(z - m), axis=1, keepdims=True)) + m
        return -qb.mean(qb.sum(y * (z - lse), axis=1))

    step = qb.jit(qb.value_and_grad(loss))
    p = {k: qb.array(v + np.float32(i * 1e-4)) for k, v in MLP.items()}
    x, y = qb.array(XB), qb.array(YB)
    return lambda: step(p, x, y)


def mlp_j(i):
    def loss(p, x, y):
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        z = h @ p["w2"] + p["b2"]
        return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(z, axis=1), axis=1))

    step = jax.jit(jax.value_and_grad(loss))
    p = {k: jnp.asarray(v + np.float32(i * 1e-4)) for k, v in MLP.items()}
    x, y = jnp.asarray(XB), jnp.asarray(YB)
    return lambda: jax.block_until_ready(step(p, x, y))


WORKLOADS = [("small", small_q, small_j), ("pinn", pinn_q, pinn_j), ("mlp", mlp_q, mlp_j)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--json")
    a = ap.parse_args()
    out = []
    for name, mq, mj in WORKLOADS:
        # First calls (fresh functions; offsets keep every repetition a new trace).
        fq = first_calls(lambda i: mq(1000 + i)(), a.reps)
        fj = first_calls(lambda i: mj(1000 + i)(), a.reps)
        pq = per_call(mq(0))
        pj = per_call(mj(0))
        row = {"workload": name, "first_q_s": fq, "first_jax_s": fj, "call_q_s": pq, "call_jax_s": pj}
        out.append(row)
        print(
            f"{name:6s} first call  quabla {fq[0] * 1e3:8.2f} / {fq[1] * 1e3:8.2f} ms   jax {fj[0] * 1e3:8.2f} / {fj[1] * 1e3:8.2f} ms   ratio {fq[0] / fj[0]:.3f} / {fq[1] / fj[1]:.3f}"
        )
        print(
            f"{name:6s} per call    quabla {pq[0] * 1e6:8.2f} / {pq[1] * 1e6:8.2f} us   jax {pj[0] * 1e6:8.2f} / {pj[1] * 1e6:8.2f} us   ratio {pq[0] / pj[0]:.3f} / {pq[1] / pj[1]:.3f}"
        )
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
