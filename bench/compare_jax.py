"""Quabla's core benchmarks against JAX's identical workloads, in one run.

    python bench/compare_jax.py [--only pinn,matmul,ew,dispatch] [--bench target/release/quabla-bench]
                                [--rounds 2] [--json out.json]

Runs target/release/quabla-bench (one JSON object per workload on stdout) and the same
workloads on JAX's CPU backend in this process, alternating Quabla and JAX `--rounds` times so
both see the same machine load, and prints per-call min and median, first calls, and the
ratios Quabla / JAX (below 1: Quabla faster). Workloads (definitions as in the JAX anchors,
notes/anchors/bench_jax.py):

* pinn: the README PINN step, value_and_grad of mean((u_xx + pi^2 sin(pi x))^2) with
  u(x, w) = sin(x w), u_xx by vmap(grad(grad)), f64, 8 points;
* matmul: 1024 x 1024 @ 1024 x 1024 in f32 and f64 (GFLOP/s);
* ew: tanh(2x + 1) * exp(-x) on 1e6 f32;
* dispatch: jit(x + 1) on an f32 scalar.

Per-call times are timeit-style on both sides (a repeat runs `number` calls back to back,
with `number` chosen so a repeat takes >= 25 ms; min and median over repeats), blocking on
every JAX call. First calls: JAX's is a fresh jax.jit wrapper's first call (trace + lower +
compile + run); Quabla's is build + transform expansion + compile + run of the program, in a
process that compiled nothing before (PINN also reports a second, warm compile).

`--one-core` pins both sides to one CPU (JAX's XLA otherwise uses its thread pool on all
cores for large matmuls and elementwise loops; Quabla's code is single-threaded).

Environment: `OPENBLAS_CORETYPE` (and `OPENBLAS_L2_SIZE`) are unset for this process and the
Quabla bench process only -- the machine sets OPENBLAS_CORETYPE=Haswell, which slows NumPy's
OpenBLAS; JAX's CPU backend does not use OpenBLAS, so this only keeps the comparison free of
that setting.
"""
import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

# Only inside this benchmark (see the module docstring); before NumPy/JAX are imported.
for _k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
    os.environ.pop(_k, None)

import jax  # noqa: E402

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_enable_x64", True)  # PINN is f64; the other workloads are explicit f32/f64
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timeit_call(call, target=0.025, repeats=40, max_total=6.0):
    """(min, median, number, repeats) seconds per call, as quabla-bench measures."""
    for _ in range(3):
        call()
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            call()
        dt = time.perf_counter() - t0
        if dt >= target or number >= 1 << 20:
            break
        number *= 2 if dt > target / 8 else 8
    repeats = max(5, min(repeats, int(max_total / max(dt, 1e-9))))
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            call()
        times.append((time.perf_counter() - t0) / number)
    return min(times), statistics.median(times), number, repeats


def block(x):
    return jax.block_until_ready(x)


# ------------------------------------------------------------------ JAX workloads
def make_pinn():
    def u(x, w):
        return jnp.sin(x * w)

    u_xx = jax.vmap(jax.grad(jax.grad(u)), in_axes=(0, None))

    def loss(w, x):
        return jnp.mean((u_xx(x, w) + math.pi ** 2 * jnp.sin(math.pi * x)) ** 2)

    return jax.value_and_grad(loss), (jnp.asarray(2.5, jnp.float64), jnp.linspace(0.05, 0.95, 8))


def make_matmul(dtype):
    def make():
        k1, k2 = jax.random.split(jax.random.PRNGKey(1))
        a = jax.random.normal(k1, (1024, 1024), dtype)
        b = jax.random.normal(k2, (1024, 1024), dtype)
        return (lambda a, b: a @ b), (a, b)

    return make


def make_elementwise():
    x = jax.random.normal(jax.random.PRNGKey(2), (1_000_000,), jnp.float32)
    return (lambda x: jnp.tanh(x * 2 + 1) * jnp.exp(-x)), (x,)


def make_dispatch():
    return (lambda x: x + 1), (jnp.asarray(1.0, jnp.float32),)


# quabla-bench workload name -> (bench argument, JAX maker, flops, bytes)
WORKLOADS = {
    "pinn_step_f64": ("pinn", make_pinn, None, None),
    "matmul_1024_f32": ("matmul", make_matmul(jnp.float32), 2 * 1024 ** 3, None),
    "matmul_1024_f64": ("matmul", make_matmul(jnp.float64), 2 * 1024 ** 3, None),
    "elementwise_1e6_f32": ("ew", make_elementwise, None, 8 * 1_000_000),
    "dispatch_f32_scalar": ("dispatch", make_dispatch, None, None),
}
GROUPS = {"pinn": ["pinn_step_f64"], "matmul": ["matmul_1024_f32", "matmul_1024_f64"], "ew": ["elementwise_1e6_f32"], "dispatch": ["dispatch_f32_scalar"]}


def run_jax(name):
    _, make, _, _ = WORKLOADS[name]
    fn, args = make()
    j = jax.jit(fn)
    t0 = time.perf_counter()
    block(j(*args))
    first = time.perf_counter() - t0
    mn, med, number, repeats = timeit_call(lambda: block(j(*args)))
    return dict(first_call_s=first, min_s=mn, median_s=med, number=number, repeats=repeats)


def run_quabla(bench, groups):
    env = dict(os.environ)
    out = subprocess.run([bench] + groups, capture_output=True, text=True, env=env, check=True).stdout
    res = {}
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("{"):
            r = json.loads(line)
            res[r["workload"]] = r
    return res


def fmt_t(s):
    if s is None:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.2f} us"
    if s < 1:
        return f"{s * 1e3:.3f} ms"
    return f"{s:.3f} s"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="pinn,matmul,ew,dispatch")
    ap.add_argument("--bench", default=os.path.join(ROOT, "target", "release", "quabla-bench"))
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--json", default="")
    ap.add_argument("--one-core", action="store_true", help="pin this process (JAX, its threads) and quabla-bench to one CPU")
    a = ap.parse_args()
    if a.one_core:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    if not os.path.exists(a.bench):
        sys.exit(f"{a.bench} not found: cargo build --release -p quabla-bench")
    groups = [g for g in a.only.split(",") if g]
    names = [n for g in groups for n in GROUPS[g]]
    print(f"python {platform.python_version()} jax {jax.__version__} numpy {np.__version__} devices {jax.devices()} "
          f"(OPENBLAS_CORETYPE unset for this run; CPUs {sorted(os.sched_getaffinity(0))})")
    q_runs = {n: [] for n in names}
    j_runs = {n: [] for n in names}
    for _ in range(a.rounds):
        q = run_quabla(a.bench, groups)
        for n in names:
            q_runs[n].append(q[n])
        for n in names:
            j_runs[n].append(run_jax(n))

    def best(runs, key):
        v = [r[key] for r in runs if r.get(key) is not None]
        return min(v) if v else None

    rows = []
    print(f"\n{'workload':22s} {'':7s} {'min':>11s} {'median':>11s} {'first call':>11s}  extra")
    for n in names:
        _, _, flops, nbytes = WORKLOADS[n]
        # First calls from the first round: later JAX rounds hit XLA's in-process compile cache.
        q = dict(min_s=best(q_runs[n], "min_s"), median_s=best(q_runs[n], "median_s"), first_call_s=q_runs[n][0]["first_call_s"])
        jx = dict(min_s=best(j_runs[n], "min_s"), median_s=best(j_runs[n], "median_s"), first_call_s=j_runs[n][0]["first_call_s"])
        for who, r in (("quabla", q), ("jax", jx)):
            extra = ""
            if flops:
                extra = f"{flops / r['min_s'] / 1e9:7.1f} GFLOP/s at min, {flops / r['median_s'] / 1e9:7.1f} at median"
            if nbytes:
                extra = f"{nbytes / r['min_s'] / 1e9:6.2f} GB/s at min"
            if who == "quabla" and n == "pinn_step_f64":
                extra = f"warm compile {fmt_t(q_runs[n][0].get('first_call_warm_s'))}"
            print(f"{n:22s} {who:7s} {fmt_t(r['min_s']):>11s} {fmt_t(r['median_s']):>11s} {fmt_t(r['first_call_s']):>11s}  {extra}")
        ratio = {k: q[k] / jx[k] for k in ("min_s", "median_s", "first_call_s")}
        print(f"{'':22s} {'ratio':7s} {ratio['min_s']:11.2f} {ratio['median_s']:11.2f} {ratio['first_call_s']:11.2f}  (Quabla / JAX)")
        rows.append(dict(workload=n, quabla=q, jax=jx, ratio=ratio, quabla_runs=q_runs[n], jax_runs=j_runs[n]))
    print(f"\nfigures: min / median: best over {a.rounds} alternating rounds; first call: the first round (cold)")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(dict(jax=jax.__version__, python=platform.python_version(), rounds=a.rounds, results=rows), fh, indent=1)
        print("wrote", a.json)


if __name__ == "__main__":
    main()
