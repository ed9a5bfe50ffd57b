"""Python-front overheads, measured against JAX in the same run (benchmarks, not tests).

    python bench/python_overhead.py [--quick]

Prints one line per measurement: Quabla's figure, JAX's (when `jax` is importable) and the
ratio. Measured:

* jit per-call: ``jit(lambda x: x + 1)`` on a float32 scalar, steady state; and a pytree
  call, a dict of two parameters and a list of two inputs plus a static string, as a
  training step passes them;
* eager ``a + b`` on two float32 arrays of 8 elements, steady state, and its first call
  (a new op signature: trace of one op + compilation);
* first call of a small jitted function (trace + compile + run), fresh function each time;
* a 1e6-element float64 NumPy round trip: ``qb.array(a)`` (copy in) then ``np.asarray(t)``
  (zero-copy out) and ``t.numpy().copy()``.
"""

import argparse
import statistics
import sys
import time
import timeit

import numpy as np

import quabla as qb

try:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_platforms", "cpu")
    jax.config.update("jax_enable_x64", True)  # float64 round trips stay float64
except Exception:  # noqa: BLE001 - JAX is optional
    jax = None


def per_call(fn, number, repeat=5):
    """Best-of-`repeat` seconds per call."""
    fn()
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def once(make_and_call, repeat):
    """Median seconds of a fresh first call."""
    ts = []
    for i in range(repeat):
        t0 = time.perf_counter()
        make_and_call(i)
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def row(name, q, j, unit="us"):
    scale = {"us": 1e6, "ms": 1e3}[unit]
    js = f"{j * scale:10.2f} {unit}" if j is not None else "       n/a   "
    ratio = f"{j / q:6.2f}x" if j is not None else ""
    print(f"{name:48s} quabla {q * scale:10.2f} {unit}   jax {js}   jax/quabla {ratio}")
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    n = 20000 if args.quick else 200000
    print(f"quabla {qb.__version__}, numpy {np.__version__}, jax {jax.__version__ if jax else 'not installed'}")

    # jit per-call on a scalar
    f = qb.jit(lambda x: x + 1)
    x = qb.array(1.0, dtype=qb.float32)
    q = per_call(lambda: f(x), n)
    j = None
    if jax:
        jf = jax.jit(lambda x: x + 1)
        jx = jnp.asarray(1.0, dtype=jnp.float32)
        j = per_call(lambda: jf(jx), n // 4)
    row("jit(lambda x: x + 1)(scalar) per call", q, j)

    # jit per-call on pytree arguments with a static value
    def step(p, xs, mode):
        return p["w"] * xs[0] + p["b"] * xs[1] if mode == "affine" else xs[0]

    g = qb.jit(step, static_argnums=2)
    v = qb.array(np.ones(4, np.float32))
    q = per_call(lambda: g({"w": v, "b": v}, [v, v], "affine"), n)
    j = None
    if jax:
        jg = jax.jit(step, static_argnums=2)
        jv = jnp.ones(4, jnp.float32)
        j = per_call(lambda: jg({"w": jv, "b": jv}, [jv, jv], "affine"), n // 10)
    row("jit(step)({w, b}, [x, y], 'affine') per call", q, j)

    # eager a + b on 8 elements
    a = qb.array(np.arange(8, dtype=np.float32))
    b = qb.array(np.ones(8, dtype=np.float32))
    q = per_call(lambda: a + b, n)
    j = None
    if jax:
        ja, jb = jnp.arange(8, dtype=jnp.float32), jnp.ones(8, dtype=jnp.float32)
        j = per_call(lambda: ja + jb, n // 10)
    row("eager a + b (8 x f32) per call", q, j)

    # eager first call of a new signature
    def q_first(i):
        t = qb.ones((3, 5 + i), dtype=qb.float32)
        qb.tanh(t)

    def j_first(i):
        jnp.tanh(jnp.ones((3, 5 + i), dtype=jnp.float32)).block_until_ready()

    reps = 5 if args.quick else 15
    row("eager first call (new op signature)", once(q_first, reps), once(j_first, reps) if jax else None, "ms")

    # first call (trace + compile + run) of a small function
    def small(x, w):
        h = qb.tanh(x @ w)
        return qb.sum(h * h) / h.size

    def j_small(x, w):
        h = jnp.tanh(x @ w)
        return jnp.sum(h * h) / h.size

    xs = np.random.default_rng(0).random((8, 16)).astype(np.float32)
    ws = np.random.default_rng(1).random((16, 4)).astype(np.float32)
    qx, qw = qb.array(xs), qb.array(ws)

    def q_fresh(i):
        qb.jit(lambda x, w: small(x, w))(qx, qw)

    def j_fresh(i):
        jax.jit(lambda x, w: j_small(x, w))(xs, ws).block_until_ready()

    row("first call of a small jitted function", once(q_fresh, reps), once(j_fresh, reps) if jax else None, "ms")

    # 1e6-element NumPy round trip
    big = np.random.default_rng(2).random(1_000_000)

    def q_rt():
        t = qb.array(big)
        return np.asarray(t)

    def q_rt_copy():
        return qb.array(big).numpy().copy()

    r = 10 if args.quick else 50
    q = per_call(q_rt, r)
    j = per_call(lambda: np.asarray(jnp.asarray(big)), r) if jax else None
    row("1e6 f64 round trip (copy in, zero-copy out)", q, j, "ms")
    row("1e6 f64 round trip (copy in, copy out)", per_call(q_rt_copy, r), None, "ms")


if __name__ == "__main__":
    main()
