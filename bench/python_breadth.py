"""Issue-11 breadth workloads, Quabla against JAX in the same run (per-call min and median
over repeats, the ratio Quabla / JAX; below 1: Quabla faster). JSON lines on stdout.

    python bench/python_breadth.py [--repeats 15]

* sort / argsort: jit(sort(x, axis=-1)) and jit(argsort(x)) on f64 [64, 256] (Quabla's CPU
  lowering counts ranks: O(n^2) per row, so this shows its cost at n = 256);
* lgamma: jit(gammaln(x)) on 1e6 f64 (an f64 scalar formula per element);
* gelu+softmax: jit(softmax(gelu(x))) on f64 [256, 1024].
"""
import argparse
import json
import statistics
import time

import numpy as np

import quabla as qb


def timeit(f, *args, min_time=0.025, repeats=15):
    f(*args)
    n, t = 1, 0.0
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            f(*args)
        t = time.perf_counter() - t0
        if t >= min_time:
            break
        n *= 2
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            f(*args)
        ts.append((time.perf_counter() - t0) / n)
    return min(ts), statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=15)
    a = ap.parse_args()
    import jax

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
    import jax.numpy as jnp
    import jax.scipy.special as jss

    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 256))
    big = rng.uniform(0.1, 30.0, 1_000_000)
    act = rng.standard_normal((256, 1024))
    cases = [
        ("sort", lambda v: qb.sort(v, axis=-1), lambda v: jnp.sort(v, axis=-1), x),
        ("argsort", qb.argsort, jnp.argsort, x),
        ("lgamma", qb.scipy.special.gammaln, jss.gammaln, big),
        ("gelu+softmax", lambda v: qb.nn.softmax(qb.nn.gelu(v)), lambda v: jax.nn.softmax(jax.nn.gelu(v)), act),
    ]
    for name, qf, jf, data in cases:
        qj = qb.jit(qf)
        jj = jax.jit(jf)
        qx, jx = qb.array(data), jnp.asarray(data)
        qmin, qmed = timeit(lambda v: qj(v), qx, repeats=a.repeats)
        jmin, jmed = timeit(lambda v: jj(v).block_until_ready(), jx, repeats=a.repeats)
        print(json.dumps({"workload": name, "shape": list(data.shape), "quabla_min_s": qmin, "quabla_median_s": qmed, "jax_min_s": jmin, "jax_median_s": jmed, "ratio_min": qmin / jmin, "ratio_median": qmed / jmed}))


if __name__ == "__main__":
    main()
