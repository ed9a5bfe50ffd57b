"""Linear algebra against JAX in the same run: a 256 x 256 Cholesky factorisation followed by
the two triangular solves of ``cho_solve`` (one right-hand side, and 32), and the same with
``grad`` of a Gaussian log-likelihood (``logdet`` + quadratic form), f64; with ``--more``
also a triangular solve with n right-hand sides, an LU-based ``solve`` (1 and k right-hand
sides) and the Cholesky in f32.

    python bench/linalg.py [--n 256 [64 1024 ...]] [--k 32] [--rounds 2] [--more] [--one-core]

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
    """(min, median, min process CPU time) seconds per call (CPU time: all threads)."""
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
    times, cpus = [], []
    start = time.perf_counter()
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        for _ in range(number):
            call()
        times.append((time.perf_counter() - t) / number)
        cpus.append((time.process_time() - c) / number)
        if time.perf_counter() - start > max_total:
            break
    return min(times), statistics.median(times), min(cpus)


def workloads(n, k, more=False):
    r = np.random.RandomState(0)
    m = r.randn(n, n)
    a = m @ m.T / n + np.eye(n)
    b1, bk = r.randn(n), r.randn(n, k)
    l = np.linalg.cholesky(a)
    bn = r.randn(n, n)

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

    rows = [
        (f"cholesky+solve {n}x{n}, 1 rhs", q_solve, j_solve, (a, b1)),
        (f"cholesky+solve {n}x{n}, {k} rhs", q_solve, j_solve, (a, bk)),
        (f"cholesky {n}x{n}", qb.linalg.cholesky, jnp.linalg.cholesky, (a,)),
        (f"grad Gaussian nll {n}x{n}", qb.grad(q_nll), jax.grad(j_nll), (a, b1)),
    ]
    if more:
        rows += [
            (f"solve_triangular {n}x{n}, {n} rhs", lambda l, b: qb.scipy.linalg.solve_triangular(l, b, lower=True), lambda l, b: jsl.solve_triangular(l, b, lower=True), (l, bn)),
            (f"solve_triangular T {n}x{n}, {n} rhs", lambda l, b: qb.scipy.linalg.solve_triangular(l, b, lower=True, trans=1), lambda l, b: jsl.solve_triangular(l, b, lower=True, trans=1), (l, bn)),
            (f"solve (lu) {n}x{n}, 1 rhs", qb.linalg.solve, jnp.linalg.solve, (m, b1)),
            (f"solve (lu) {n}x{n}, {k} rhs", qb.linalg.solve, jnp.linalg.solve, (m, bk)),
            (f"cholesky {n}x{n} f32", qb.linalg.cholesky, jnp.linalg.cholesky, (a.astype(np.float32),)),
        ]
    out = []
    for name, qf, jf, args in rows:
        qj, jj = qb.jit(qf), jax.jit(jf)
        qargs = tuple(qb.asarray(x) for x in args)
        jargs = tuple(jnp.asarray(x) for x in args)
        tol = 1e-3 if args[0].dtype == np.float32 else 1e-7
        np.testing.assert_allclose(np.asarray(qj(*qargs)), np.asarray(jj(*jargs)), rtol=tol, atol=tol)
        out.append((name, lambda qj=qj, qargs=qargs: qj(*qargs), lambda jj=jj, jargs=jargs: jj(*jargs).block_until_ready()))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, nargs="+", default=[256])
    p.add_argument("--k", type=int, default=32)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--more", action="store_true", help="also triangular_solve with n rhs, LU solve, f32 Cholesky")
    p.add_argument("--one-core", action="store_true", help="pin the process to one CPU")
    args = p.parse_args()
    if args.one_core and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    res = {}
    loads = [w for n in args.n for w in workloads(n, args.k, args.more)]
    cpu0 = time.process_time()
    for _ in range(args.rounds):
        for name, q, j in loads:
            qm, qmed, qc = timeit_call(q)
            jm, jmed, jc = timeit_call(j)
            old = res.get(name)
            # Each side's best round (its min, with that round's median), and its least CPU time.
            if old is None:
                res[name] = (qm, qmed, jm, jmed, qc, jc)
            else:
                res[name] = ((qm, qmed) if qm < old[0] else old[:2]) + ((jm, jmed) if jm < old[2] else old[2:4]) + (min(qc, old[4]), min(jc, old[5]))
    print(f"process CPU time {time.process_time() - cpu0:.1f} s, load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"{'workload':36s} {'quabla min/med (ms)':>22s} {'jax min/med (ms)':>20s} {'ratio min':>10s} {'ratio med':>10s} {'cpu q/jax (ms)':>16s} {'ratio cpu':>10s}")
    for name, (qm, qmed, jm, jmed, qc, jc) in res.items():
        print(f"{name:36s} {qm * 1e3:10.3f} {qmed * 1e3:10.3f} {jm * 1e3:9.3f} {jmed * 1e3:9.3f} {qm / jm:10.2f} {qmed / jmed:10.2f} {qc * 1e3:7.3f} {jc * 1e3:8.3f} {qc / max(jc, 1e-12):10.2f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
