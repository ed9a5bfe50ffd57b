"""Convolution layers, Quabla against JAX in the same run (float32, CPU).

    python bench/conv.py [--repeat 7] [--rounds 3] [--json out.json]

Workloads:

* conv1d: forward + backward (``jit(value_and_grad(loss, argnums=(0, 1)))``) of a 1-D
  convolution, input N16 C32 L1024, kernel 32 out x 32 in x K5, SAME padding, loss
  ``sum(tanh(conv))``;
* conv2d: the same for a 2-D layer, input N32 C16 32x32, kernel 16 out x 16 in x 3x3, SAME;
* conv2d_fwd: the 2-D layer forward only;
* conv2d_dx, conv2d_dw, conv1d_dx, conv1d_dw: each gradient alone (``vjp`` of the layer
  w.r.t. the input or the kernel on a given cotangent: the two transposed convolutions).

Per call: timeit-style (each repeat runs ``number`` calls, min and median over repeats),
blocking on every JAX result; ``--rounds`` rounds alternate Quabla and JAX (minimum over the
rounds, median of the last), so that both see the same machine load. Ratios are Quabla / JAX (below 1: Quabla faster). Prints one
JSON line per workload.
"""
import argparse
import json
import statistics
import timeit

import numpy as np

import quabla as qb

import jax
import jax.numpy as jnp

jax.config.update("jax_platforms", "cpu")


def per_call(fn, repeat):
    fn()
    number = 1
    while True:
        t = timeit.timeit(fn, number=number)
        if t >= 0.05:
            break
        number *= 2
    ts = [t / number for t in timeit.repeat(fn, number=number, repeat=repeat)]
    return min(ts), statistics.median(ts)


def workloads():
    rng = np.random.default_rng(0)
    x1 = rng.normal(size=(16, 32, 1024)).astype(np.float32)
    w1 = (rng.normal(size=(32, 32, 5)) * 0.1).astype(np.float32)
    x2 = rng.normal(size=(32, 16, 32, 32)).astype(np.float32)
    w2 = (rng.normal(size=(16, 16, 3, 3)) * 0.1).astype(np.float32)

    def q1(x, w):
        return qb.sum(qb.tanh(qb.conv_general_dilated(x, w, (1,), "SAME")))

    def j1(x, w):
        return jnp.sum(jnp.tanh(jax.lax.conv_general_dilated(x, w, (1,), "SAME")))

    def q2(x, w):
        return qb.sum(qb.tanh(qb.conv_general_dilated(x, w, (1, 1), "SAME")))

    def j2(x, w):
        return jnp.sum(jnp.tanh(jax.lax.conv_general_dilated(x, w, (1, 1), "SAME")))

    g1 = rng.normal(size=(16, 32, 1024)).astype(np.float32)
    g2 = rng.normal(size=(32, 16, 32, 32)).astype(np.float32)

    def grads(lib, conv, st):
        def dx(x, w, g):
            return lib.vjp(lambda x: conv(x, w, st, "SAME"), x)[1](g)[0]

        def dw(x, w, g):
            return lib.vjp(lambda w: conv(x, w, st, "SAME"), w)[1](g)[0]

        return dx, dw

    q1dx, q1dw = grads(qb, qb.conv_general_dilated, (1,))
    j1dx, j1dw = grads(jax, jax.lax.conv_general_dilated, (1,))
    q2dx, q2dw = grads(qb, qb.conv_general_dilated, (1, 1))
    j2dx, j2dw = grads(jax, jax.lax.conv_general_dilated, (1, 1))
    return [
        ("conv1d_dx", qb.jit(q1dx), jax.jit(j1dx), (x1, w1, g1)),
        ("conv1d_dw", qb.jit(q1dw), jax.jit(j1dw), (x1, w1, g1)),
        ("conv2d_dx", qb.jit(q2dx), jax.jit(j2dx), (x2, w2, g2)),
        ("conv2d_dw", qb.jit(q2dw), jax.jit(j2dw), (x2, w2, g2)),
        ("conv1d", qb.jit(qb.value_and_grad(q1, argnums=(0, 1))), jax.jit(jax.value_and_grad(j1, argnums=(0, 1))), (x1, w1)),
        ("conv2d", qb.jit(qb.value_and_grad(q2, argnums=(0, 1))), jax.jit(jax.value_and_grad(j2, argnums=(0, 1))), (x2, w2)),
        ("conv2d_fwd", qb.jit(lambda x, w: qb.conv_general_dilated(x, w, (1, 1), "SAME")), jax.jit(lambda x, w: jax.lax.conv_general_dilated(x, w, (1, 1), "SAME")), (x2, w2)),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    rows = []
    ws = workloads()
    for name, qf, jf, inputs in ws[4:] + ws[:4]:
        qi = [qb.array(a) for a in inputs]
        ji = [jnp.asarray(a) for a in inputs]
        # Same numbers first (float32: loose tolerance).
        qv = qf(*qi)
        jv = jf(*ji)
        for a, b in zip(jax.tree_util.tree_leaves(qv), jax.tree_util.tree_leaves(jv)):
            a, b = np.asarray(a), np.asarray(b)
            assert np.allclose(a, b, rtol=1e-3, atol=1e-3 * (1 + np.abs(b).max())), name
        qmin = jmin = float("inf")
        for _ in range(args.rounds):
            q, qmed = per_call(lambda: qf(*qi), args.repeat)
            j, jmed = per_call(lambda: jax.block_until_ready(jf(*ji)), args.repeat)
            qmin, jmin = min(qmin, q), min(jmin, j)
        row = {"bench": name, "quabla_min_ms": qmin * 1e3, "quabla_median_ms": qmed * 1e3, "jax_min_ms": jmin * 1e3, "jax_median_ms": jmed * 1e3, "ratio_min": qmin / jmin, "ratio_median": qmed / jmed}
        rows.append(row)
        print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()}), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
