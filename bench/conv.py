"""Convolution layers, Quabla against JAX in the same run (float32, CPU).

    python bench/conv.py [--repeat 7] [--rounds 3] [--json out.json]

Workloads:

* conv1d: forward + backward (``jit(value_and_grad(loss, argnums=(0, 1)))``) of a 1-D
  convolution, input N16 C32 L1024, kernel 32 out x 32 in x K5, SAME padding, loss
  ``sum(tanh(conv))``;
* conv2d: the same for a 2-D layer, input N32 C16 32x32, kernel 16 out x 16 in x 3x3, SAME;
* conv2d_fwd: the 2-D layer forward only;
* conv2d_dx, conv2d_dw, conv1d_dx, conv1d_dw: each gradient alone (``vjp`` of the layer
  w.r.t. the input or the kernel on a given cotangent: the two transposed convolutions);
* stem, stem_fwd: a strided stem layer in NHWC, input N16 64x64 C3, kernel 7x7 3 -> 32
  (HWIO), stride 2, SAME: loss + both grads (the input gradient has lhs dilation 2) and
  forward;
* depthwise, depthwise_fwd: a depthwise layer, input N32 C32 32x32, kernel 32 x 1 x 3x3,
  ``feature_group_count=32``, SAME: loss + both grads and forward.

Per call: timeit-style (each repeat runs ``number`` calls, min and median over repeats),
blocking on every JAX result; ``--rounds`` rounds alternate Quabla and JAX (minimum over the
rounds, median of the last), so that both see the same machine load; ``*_cpu_ms`` is the
process CPU time per call in the last round (all threads). ``--quabla-only SECONDS`` times
Quabla alone (min, median, median process CPU time per call), to compare two builds. Ratios are Quabla / JAX (below 1: Quabla faster). Prints one
JSON line per workload.
"""
import argparse
import json
import statistics
import time
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
    c0 = time.process_time()
    ts = [t / number for t in timeit.repeat(fn, number=number, repeat=repeat)]
    cpu = (time.process_time() - c0) / (number * repeat)
    return min(ts), statistics.median(ts), cpu


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
    x3 = rng.normal(size=(16, 64, 64, 3)).astype(np.float32)
    w3 = (rng.normal(size=(7, 7, 3, 32)) * 0.1).astype(np.float32)
    x4 = rng.normal(size=(32, 32, 32, 32)).astype(np.float32)
    w4 = (rng.normal(size=(32, 1, 3, 3)) * 0.1).astype(np.float32)
    nhwc = ("NHWC", "HWIO", "NHWC")

    def stem(lib, conv):
        return lambda x, w: conv(x, w, (2, 2), "SAME", dimension_numbers=nhwc)

    def dwise(lib, conv):
        return lambda x, w: conv(x, w, (1, 1), "SAME", feature_group_count=32)

    def loss(lib, layer):
        np_ = qb if lib is qb else jnp
        return lambda x, w: np_.sum(np_.tanh(layer(x, w)))

    layers = []
    for name, mk, inputs in (("stem", stem, (x3, w3)), ("depthwise", dwise, (x4, w4))):
        ql, jl = mk(qb, qb.conv_general_dilated), mk(jax, jax.lax.conv_general_dilated)
        layers.append((name, qb.jit(qb.value_and_grad(loss(qb, ql), argnums=(0, 1))), jax.jit(jax.value_and_grad(loss(jax, jl), argnums=(0, 1))), inputs))
        layers.append((name + "_fwd", qb.jit(ql), jax.jit(jl), inputs))
    return layers + [
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
    ap.add_argument("--only", default=None, help="comma-separated workload names")
    ap.add_argument("--quabla-only", type=float, default=None, metavar="SECONDS", help="time Quabla alone, calling each workload for SECONDS (to compare two builds of Quabla run alternately)")
    args = ap.parse_args()
    ws = workloads()
    ws = ws[8:] + ws[4:8] + ws[:4]
    if args.only:
        ws = [w for w in ws if w[0] in args.only.split(",")]
    rows = []
    if args.quabla_only:
        for name, qf, _, inputs in ws:
            qi = [qb.array(a) for a in inputs]
            qf(*qi)
            ts, cs = [], []
            end = time.perf_counter() + args.quabla_only
            while time.perf_counter() < end:
                c, t = time.process_time(), time.perf_counter()
                qf(*qi)
                ts.append(time.perf_counter() - t)
                cs.append(time.process_time() - c)
            row = {"bench": name, "quabla_min_ms": min(ts) * 1e3, "quabla_median_ms": statistics.median(ts) * 1e3, "quabla_cpu_median_ms": statistics.median(cs) * 1e3, "calls": len(ts)}
            rows.append(row)
            print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()}), flush=True)
        ws = []
    for name, qf, jf, inputs in ws:
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
            q, qmed, qcpu = per_call(lambda: qf(*qi), args.repeat)
            j, jmed, jcpu = per_call(lambda: jax.block_until_ready(jf(*ji)), args.repeat)
            qmin, jmin = min(qmin, q), min(jmin, j)
        row = {"bench": name, "quabla_min_ms": qmin * 1e3, "quabla_median_ms": qmed * 1e3, "jax_min_ms": jmin * 1e3, "jax_median_ms": jmed * 1e3, "ratio_min": qmin / jmin, "ratio_median": qmed / jmed, "quabla_cpu_ms": qcpu * 1e3, "jax_cpu_ms": jcpu * 1e3}
        rows.append(row)
        print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()}), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
