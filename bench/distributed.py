"""Data-parallel MLP training step on 1 and 8 XLA CPU devices: Quabla's xla executor against
the same model written in JAX with the same shardings, same run.

    python bench/distributed.py [--reps 7] [--batch 1024] [--json out.json]

Model: a 64-256-10 tanh MLP with a softmax cross-entropy (float32), global batch ``--batch``
split over the devices (``P("batch")``), parameters replicated. One step = loss and
gradients plus an SGD update of the parameters, jitted with in/out shardings and kept
resident (parameters stay on the devices between steps). Quabla: ``qb.distributed.
value_and_grad`` inside ``qb.jit(step, in_shardings=..., out_shardings=..., resident=True)``;
JAX: ``jax.jit(step, in_shardings=..., out_shardings=...)`` with ``jax.value_and_grad``.

Reported:
* per step: timeit-style (each repeat runs ``number`` steps, blocking on every result), min
  and median over ``--reps`` repeats, Quabla's and JAX's repeats alternating;
* export + compile: a fresh function each repetition, first ``.lower(...).compile()``:
  Quabla traces, runs its passes, exports StableHLO with Shardy annotations and XLA
  compiles; JAX traces, lowers and XLA compiles. Min and median over ``--reps``; and
  Quabla's own part of it (trace, passes, export, no XLA).
Ratios are Quabla / JAX (below 1: Quabla faster). XLA's device count is fixed when XLA
starts, so the script sets ``XLA_FLAGS=--xla_force_host_platform_device_count=8`` itself.
"""
import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import timeit  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import quabla as qb  # noqa: E402
from quabla.sharding import NamedSharding, PartitionSpec as P, make_mesh  # noqa: E402

LR = 0.1


def params_init(rng, sizes=(64, 256, 10)):
    return [((rng.normal(size=(a, b)) / np.sqrt(a)).astype(np.float32), np.zeros((b,), np.float32)) for a, b in zip(sizes[:-1], sizes[1:])]


def qb_loss(p, x, y):
    (w1, b1), (w2, b2) = p
    z = qb.tanh(x @ w1 + b1) @ w2 + b2
    return -qb.mean(qb.sum(y * (z - qb.logsumexp(z, axis=1, keepdims=True)), axis=1))


def jax_loss(p, x, y):
    (w1, b1), (w2, b2) = p
    z = jnp.tanh(x @ w1 + b1) @ w2 + b2
    return -jnp.mean(jnp.sum(y * (z - jax.nn.logsumexp(z, axis=1, keepdims=True)), axis=1))


def quabla_step(n):
    mesh = make_mesh((n,), ("batch",), qb.sharding.devices()[:n])
    rep, bat = NamedSharding(mesh, P()), NamedSharding(mesh, P("batch"))
    vg = qb.distributed.value_and_grad(qb_loss, devices=mesh, shard_argnums=(1, 2))

    def step(p, x, y):
        v, g = vg(p, x, y)
        return qb.tree.map(lambda a, b: a - LR * b, p, g), v

    return qb.jit(step, in_shardings=(rep, bat, bat), out_shardings=rep, resident=True), rep, bat


def jax_step(n):
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:n]), ("batch",))
    rep, bat = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec()), jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("batch"))

    def step(p, x, y):
        v, g = jax.value_and_grad(jax_loss)(p, x, y)
        return jax.tree.map(lambda a, b: a - LR * b, p, g), v

    return jax.jit(step, in_shardings=(rep, bat, bat), out_shardings=rep), rep, bat


def per_call(fns, reps):
    """(min, median) seconds per call of each function; the repeats alternate between the
    functions, so that the machine's load drifts over all of them alike."""
    numbers = []
    for fn in fns:
        fn()
        number = 1
        while timeit.timeit(fn, number=number) < 0.05:
            number *= 2
        numbers.append(number)
    ts = [[] for _ in fns]
    for _ in range(reps):
        for i, (fn, number) in enumerate(zip(fns, numbers)):
            ts[i].append(timeit.timeit(fn, number=number) / number)
    return [(min(t), statistics.median(t)) for t in ts]


def compile_times(makes, args, reps):
    """(min, median) seconds of a fresh function's ``.lower(*args).compile()``, alternating."""
    ts = [[] for _ in makes]
    for _ in range(reps):
        for i, make in enumerate(makes):
            f = make()
            t0 = time.perf_counter()
            f.lower(*args).compile()
            ts[i].append(time.perf_counter() - t0)
    return [(min(t), statistics.median(t)) for t in ts]


def export_times(n, args, reps):
    """(min, median) seconds of Quabla's part of the first call: trace, passes, StableHLO export."""
    ts = []
    for _ in range(reps):
        step = quabla_step(n)[0].__wrapped__
        t0 = time.perf_counter()
        qb.jit(step).lower(*args).as_text(dialect="stablehlo")
        ts.append(time.perf_counter() - t0)
    return min(ts), statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--json")
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    params = params_init(rng)
    x = rng.normal(size=(a.batch, 64)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, a.batch)]
    rows = {}
    print(f"jax {jax.__version__}, {jax.device_count()} XLA CPU devices, batch {a.batch}, {os.cpu_count()} host cores")
    for n in (1, 8):
        qstep, qrep, qbat = quabla_step(n)
        jstep, jrep, jbat = jax_step(n)
        qp = qb.tree.map(lambda v: qb.sharding.device_put(v, qrep), params)
        qx, qy = qb.sharding.device_put(x, qbat), qb.sharding.device_put(y, qbat)
        jp = jax.device_put(params, jrep)
        jx, jy = jax.device_put(x, jbat), jax.device_put(y, jbat)
        # same numbers first: one step each
        qo, jo = qstep(qp, qx, qy), jstep(jp, jx, jy)
        diff = max(float(np.max(np.abs(np.asarray(u) - np.asarray(v)))) for u, v in zip(jax.tree.leaves(qo), jax.tree.leaves(jo)))
        q, j = per_call([lambda: jax.block_until_ready(qstep(qp, qx, qy)), lambda: jax.block_until_ready(jstep(jp, jx, jy))], a.reps)
        qc, jc = compile_times([lambda: quabla_step(n)[0], lambda: jax_step(n)[0]], (params, x, y), a.reps)
        qe = export_times(n, (params, x, y), a.reps)
        rows[n] = {"step_quabla_s": q, "step_jax_s": j, "compile_quabla_s": qc, "compile_jax_s": jc, "export_quabla_s": qe, "max_abs_diff": diff}
        print(f"{n} device{'s' if n > 1 else ' '}: step  quabla {q[0]*1e6:8.0f} / {q[1]*1e6:8.0f} us   jax {j[0]*1e6:8.0f} / {j[1]*1e6:8.0f} us   "
              f"ratio {q[0]/j[0]:.2f} / {q[1]/j[1]:.2f}   (min / median; outputs differ by {diff:.1e})")
        print(f"           export+compile  quabla {qc[0]*1e3:6.0f} / {qc[1]*1e3:6.0f} ms   jax {jc[0]*1e3:6.0f} / {jc[1]*1e3:6.0f} ms   ratio {qc[0]/jc[0]:.2f} / {qc[1]/jc[1]:.2f}")
        print(f"           of which Quabla trace+passes+export {qe[0]*1e3:.1f} / {qe[1]*1e3:.1f} ms")
    print(f"speedup 8 vs 1 device (min): quabla {rows[1]['step_quabla_s'][0]/rows[8]['step_quabla_s'][0]:.2f}x, "
          f"jax {rows[1]['step_jax_s'][0]/rows[8]['step_jax_s'][0]:.2f}x")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
