"""qb.random against jax.random in the same run (a benchmark, not a test).

    python bench/random_bench.py [--quick]

Jitted samplers of 1e6 values (uniform float64/float32, normal float64/float32, randint int32, bits)
from one key, and a vmap of per-example uniforms (1000 keys x 1000 values): min and median
seconds per call over many repetitions after a warm-up call, Quabla's and JAX's, and the
ratio of the minima (quabla / jax; below 1 is faster). Both programs produce the same bits.
"""

import argparse
import statistics
import timeit

import numpy as np

import quabla as qb

import jax

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_enable_x64", True)


def timed(fn, number, repeat):
    fn()
    ts = [t / number for t in timeit.repeat(fn, number=number, repeat=repeat)]
    return min(ts), statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    n = 100_000 if args.quick else 1_000_000
    number, repeat = (3, 5) if args.quick else (5, 15)
    key, jkey = qb.random.key(0), jax.random.PRNGKey(0)
    cases = [
        ("uniform f64", lambda k: qb.random.uniform(k, (n,)), lambda k: jax.random.uniform(k, (n,))),
        ("uniform f32", lambda k: qb.random.uniform(k, (n,), "float32"), lambda k: jax.random.uniform(k, (n,), "float32")),
        ("normal f64", lambda k: qb.random.normal(k, (n,)), lambda k: jax.random.normal(k, (n,))),
        ("normal f32", lambda k: qb.random.normal(k, (n,), "float32"), lambda k: jax.random.normal(k, (n,), "float32")),
        ("randint i32", lambda k: qb.random.randint(k, (n,), 0, 1000, "int32"), lambda k: jax.random.randint(k, (n,), 0, 1000, "int32")),
        ("bits u32", lambda k: qb.random.bits(k, (n,)), lambda k: jax.random.bits(k, (n,), "uint32")),
        ("vmap uniform", lambda k: qb.vmap(lambda kk: qb.random.uniform(kk, (n // 1000,)))(qb.random.split(k, 1000)),
         lambda k: jax.vmap(lambda kk: jax.random.uniform(kk, (n // 1000,)))(jax.random.split(k, 1000))),
    ]
    print(f"{'case':<14} {'quabla min':>11} {'median':>9} {'jax min':>9} {'median':>9} {'ratio':>6}   (n={n})")
    for name, qf, jf in cases:
        qj, jj = qb.jit(qf), jax.jit(jf)
        same = np.array_equal(np.asarray(qj(key)), np.asarray(jj(jkey)))
        qmin, qmed = timed(lambda: qj(key), number, repeat)
        jmin, jmed = timed(lambda: jj(jkey).block_until_ready(), number, repeat)
        print(f"{name:<14} {qmin * 1e3:9.3f}ms {qmed * 1e3:7.3f}ms {jmin * 1e3:7.3f}ms {jmed * 1e3:7.3f}ms {qmin / jmin:6.2f}   bitwise equal: {same}")


if __name__ == "__main__":
    main()
