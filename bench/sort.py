"""qb.sort / qb.argsort against jax.numpy.sort / argsort in the same run (a benchmark, not a
test).

    python bench/sort.py [--quick]

Jitted sorts of n = 1e3 .. 1e6 random float64 (and float32, int32) values, one lane, and a
batch of 1000 lanes of 1000 along the last axis: min and median seconds per call over many
repetitions after a warm-up call, Quabla's and JAX's, the ratio of the minima (quabla / jax;
below 1 is faster) and whether the results are equal.
"""

import argparse

import numpy as np

import quabla as qb

import jax
import jax.numpy as jnp

from random_bench import timed  # bench/ is the script's directory; it also sets JAX to CPU, x64


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    sizes = [1_000, 10_000, 100_000] if args.quick else [1_000, 10_000, 100_000, 1_000_000]
    cases = []
    for n in sizes:
        cases.append((f"sort f64 {n:.0e}", rng.standard_normal(n), qb.sort, jnp.sort))
    n = sizes[-1]
    cases += [
        (f"sort f32 {n:.0e}", rng.standard_normal(n).astype(np.float32), qb.sort, jnp.sort),
        (f"sort i32 {n:.0e}", rng.integers(-1000, 1000, n).astype(np.int32), qb.sort, jnp.sort),
        (f"argsort f64 {n:.0e}", rng.standard_normal(n), qb.argsort, jnp.argsort),
        ("sort 1000x1000", rng.standard_normal((1000, 1000)), qb.sort, jnp.sort),
    ]
    print(f"{'case':<18} {'quabla min':>11} {'median':>9} {'jax min':>9} {'median':>9} {'ratio':>6}")
    for name, x, qf, jf in cases:
        qj, jj = qb.jit(qf), jax.jit(jf)
        qx, jx = qb.asarray(x), jnp.asarray(x)
        same = np.array_equal(np.asarray(qj(qx)), np.asarray(jj(jx)))
        number, repeat = (3, 5) if x.size >= 1_000_000 else (10, 10)
        qmin, qmed = timed(lambda: qj(qx), number, repeat)
        jmin, jmed = timed(lambda: jj(jx).block_until_ready(), number, repeat)
        print(f"{name:<18} {qmin * 1e3:9.3f}ms {qmed * 1e3:7.3f}ms {jmin * 1e3:7.3f}ms {jmed * 1e3:7.3f}ms {qmin / jmin:6.2f}   equal: {same}")


if __name__ == "__main__":
    main()
