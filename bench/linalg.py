"""Linear algebra against JAX in the same run: a 256 x 256 Cholesky factorisation followed by
the two triangular solves of ``cho_solve`` (one right-hand side, and 32), and the same with
``grad`` of a Gaussian log-likelihood (``logdet`` + quadratic form), f64.

    python bench/linalg.py [--n 256] [--k 32] [--rounds 2] [--one-core]

Per-call times are timeit-style on both sides (``number`` calls back to back per repeat, chosen
so a repeat takes >= 25 ms; min and median over repeats), blocking on every JAX call, rounds
alternating Quabla and JAX so both see the same machine load. Ratios are Quabla / JAX (below 1:
Quabla faster). Quabla's kernels are the runtime's linear-algebra kernels of the build in use
(the dev profile unless built otherwise); JAX calls LAPACK through XLA's CPU backend.
"""
import argparse
import os
import statistics
import sys
import time

import jax

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import jax.scipy.linalg as jsl  # noqa: E402
import numpy as np  # noqa: E402

import quabla as qb  # noqa: E402


def timeit_call(call, target=0.025, repeats=30, max_total=4.0):
    """(min, median) seconds per call."""
    for _ in range(3):
        call()
    number = 1
    while True:
        t = time.perf_counter()
        for _ in range(number):
            call()
        dt = time.perf_counter() - t
        if dt >= target or number >= 1 << 20:
            break
        number *= 2
    times = []
    start = time.perf_counter()
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(number):
            call()
        times.append((time.perf_counter() - t) / number)
        if time.perf_counter() - start > max_total:
            break
    return min(times), statistics.median(times)


def workloads(n, k):
    r = np.random.RandomState(0)
    m = r.randn(n, n)
    a = m @ m.T / n + np.eye(n)
    b1, bk = r.randn(n), r.randn(n, k)

    def q_solve(a, b):
        return qb.scipy.linalg.cho_solve(qb.scipy.linalg.cho_factor(a, lower=True), b)

    def j_solve(a, b):
        return jsl.cho_solve(jsl.cho_factor(a, lower=True), b)

    def q_nll(a, b):
        l = qb.linalg.cholesky(a)
        z = qb.scipy.linalg.solve_triangular(l, b, lower=True)
        return qb.sum(z * z) / 2 + qb.sum(qb.log(qb.sum(l * qb.eye(a.shape[0]), axis=-1)))

    def j_nll(a, b):
        l = jnp.linalg.cholesky(a)
        z = jsl.solve_triangular(l, b, lower=True)
        return jnp.sum(z * z) / 2 + jnp.sum(jnp.log(jnp.diagonal(l)))

    out = []
    for name, qf, jf, args in [
        (f"cholesky+solve {n}x{n}, 1 rhs", q_solve, j_solve, (a, b1)),
        (f"cholesky+solve {n}x{n}, {k} rhs", q_solve, j_solve, (a, bk)),
        (f"cholesky {n}x{n}", qb.linalg.cholesky, jnp.linalg.cholesky, (a,)),
        (f"grad Gaussian nll {n}x{n}", qb.grad(q_nll), jax.grad(j_nll), (a, b1)),
    ]:
        qj, jj = qb.jit(qf), jax.jit(jf)
        qargs = tuple(qb.asarray(x) for x in args)
        jargs = tuple(jnp.asarray(x) for x in args)
        np.testing.assert_allclose(np.asarray(qj(*qargs)), np.asarray(jj(*jargs)), rtol=1e-8, atol=1e-8)
        out.append((name, lambda qj=qj, qargs=qargs: qj(*qargs), lambda jj=jj, jargs=jargs: jj(*jargs).block_until_ready()))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=256)
    p.add_argument("--k", type=int, default=32)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--one-core", action="store_true", help="pin the process to one CPU")
    args = p.parse_args()
    if args.one_core and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    res = {}
    for _ in range(args.rounds):
        for name, q, j in workloads(args.n, args.k):
            qm, qmed = timeit_call(q)
            jm, jmed = timeit_call(j)
            old = res.get(name)
            if old is None or qm < old[0]:
                res[name] = (qm, qmed, jm, jmed) if old is None else (qm, qmed, min(jm, old[2]), jmed)
    print(f"{'workload':36s} {'quabla min/med (ms)':>22s} {'jax min/med (ms)':>20s} {'ratio min':>10s} {'ratio med':>10s}")
    for name, (qm, qmed, jm, jmed) in res.items():
        print(f"{name:36s} {qm * 1e3:10.3f} {qmed * 1e3:10.3f} {jm * 1e3:9.3f} {jmed * 1e3:9.3f} {qm / jm:10.2f} {qmed / jmed:10.2f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
