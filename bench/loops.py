"""Loop overhead: Quabla against JAX in the same run (CPU, float64).

    python bench/loops.py [--repeat 7] [--json out.json] [--scaling]

Workloads:

* scan_rnn_fwd: ``jit`` of a 1000-step ``scan`` of a tanh RNN cell (hidden 32, input 16)
  returning the sum of squares of the final state and of the per-step outputs;
* scan_rnn_grad: ``jit(grad)`` of the same loss with respect to the cell's weights (the
  forward loop stacks the hidden states, a reversed loop runs the cell's VJP);
* fori_scalar: ``jit`` of a 10,000-iteration ``fori_loop`` of the scalar update
  ``x = x * 0.999 + 0.001 * sin(x)``;
* fori_scalar_grad: its ``jit(grad)``.

``--scaling`` adds ``scan_ys_grad/T``: ``jit(grad)`` of a scan whose body emits a 128-vector
per step (stacked ``ys`` of ``[T, 128]``), for T = 250 ... 4000; its time per iteration must
stay flat (a backward loop that copied the ``ys`` cotangent per iteration would grow with T).

Per call: timeit-style (a repeat runs ``number`` calls, min and median over repeats), blocking
on every JAX result; the per-iteration figure is the per-call time divided by the trip count.
Ratios are Quabla / JAX (below 1: Quabla faster).
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
jax.config.update("jax_enable_x64", True)


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


T, H, D, N = 1000, 32, 16, 10_000


def rnn_loss(m, scan):
    def loss(w, u, xs):
        def cell(h, x):
            h2 = m.tanh(w @ h + u @ x)
            return h2, m.sum(h2 * h2)

        h, ys = scan(cell, m.zeros(H), xs)
        return m.sum(h * h) + m.sum(ys)

    return loss


def scalar_loop(m, fori):
    def f(a):
        return fori(0, N, lambda i, x: x * 0.999 + 0.001 * m.sin(x * a), a)

    return f


def ys_loss(m, scan):
    def loss(w, xs):
        def body(c, x):
            c2 = m.tanh(c * w + x)
            return c2, c2 * 2.0

        c, ys = scan(body, m.zeros(xs.shape[1]), xs)
        return m.sum(ys * ys) + m.sum(c)

    return loss


def scaling_workloads():
    rng = np.random.default_rng(1)
    w = rng.normal(size=128) * 0.5
    qg = qb.jit(qb.grad(ys_loss(qb, qb.scan)))
    jg = jax.jit(jax.grad(ys_loss(jnp, jax.lax.scan)))
    out = []
    for t in (250, 500, 1000, 2000, 4000):
        xs = rng.normal(size=(t, 128))
        qa, ja = (qb.array(w), qb.array(xs)), (jnp.asarray(w), jnp.asarray(xs))
        assert np.allclose(qg(*qa).numpy(), np.asarray(jg(*ja)), rtol=1e-9, atol=1e-12)
        out.append((f"scan_ys_grad/{t}", t, lambda qa=qa: qg(*qa), lambda ja=ja: jax.block_until_ready(jg(*ja))))
    return out


def workloads():
    rng = np.random.default_rng(0)
    w, u, xs = rng.normal(size=(H, H)) / np.sqrt(H), rng.normal(size=(H, D)) / np.sqrt(D), rng.normal(size=(T, D))
    qargs = [qb.array(a) for a in (w, u, xs)]
    jargs = [jnp.asarray(a) for a in (w, u, xs)]
    ql, jl = rnn_loss(qb, qb.scan), rnn_loss(jnp, jax.lax.scan)
    qs, js = scalar_loop(qb, qb.fori_loop), scalar_loop(jnp, jax.lax.fori_loop)
    a_q, a_j = qb.array(0.7), jnp.asarray(0.7)
    out = []
    for name, trips, qf, qa, jf, ja in [
        ("scan_rnn_fwd", T, qb.jit(ql), qargs, jax.jit(jl), jargs),
        ("scan_rnn_grad", T, qb.jit(qb.grad(ql, argnums=(0, 1))), qargs, jax.jit(jax.grad(jl, argnums=(0, 1))), jargs),
        ("fori_scalar", N, qb.jit(qs), [a_q], jax.jit(js), [a_j]),
        ("fori_scalar_grad", N, qb.jit(qb.grad(qs)), [a_q], jax.jit(jax.grad(js)), [a_j]),
    ]:
        # Same numbers first.
        got = [np.asarray(v.numpy()) for v in qb.tree.leaves(qf(*qa))]
        want = [np.asarray(v) for v in jax.tree_util.tree_leaves(jf(*ja))]
        for g, wv in zip(got, want):
            assert np.allclose(g, wv, rtol=1e-9, atol=1e-12), (name, g, wv)
        out.append((name, trips, lambda qf=qf, qa=qa: qf(*qa), lambda jf=jf, ja=ja: jax.block_until_ready(jf(*ja))))
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--json")
    p.add_argument("--scaling", action="store_true", help="also time jit(grad) of a scan with stacked ys for T = 250..4000")
    args = p.parse_args()
    rows = []
    print(f"{'workload':18s} {'quabla min/med (ms)':>22s} {'jax min/med (ms)':>20s} {'ratio':>6s} {'q ns/iter':>10s} {'jax ns/iter':>11s}")
    for name, trips, qcall, jcall in workloads() + (scaling_workloads() if args.scaling else []):
        qmin, qmed = per_call(qcall, args.repeat)
        jmin, jmed = per_call(jcall, args.repeat)
        row = {"workload": name, "trips": trips, "quabla_min_s": qmin, "quabla_median_s": qmed, "jax_min_s": jmin, "jax_median_s": jmed, "ratio_min": qmin / jmin, "ratio_median": qmed / jmed, "quabla_ns_per_iter": qmin / trips * 1e9, "jax_ns_per_iter": jmin / trips * 1e9}
        rows.append(row)
        print(f"{name:18s} {qmin * 1e3:10.3f} / {qmed * 1e3:9.3f} {jmin * 1e3:9.3f} / {jmed * 1e3:8.3f} {qmin / jmin:6.2f} {row['quabla_ns_per_iter']:10.1f} {row['jax_ns_per_iter']:11.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
