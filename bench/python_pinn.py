"""The README PINN (reference §2.4) against JAX's identical program, in the same run
(benchmarks, not tests).

    python bench/python_pinn.py [--quick] [--points N]

Measured, for Quabla and JAX (x64, CPU):

* step: one call of ``jit(value_and_grad(loss))`` with ``u_xx = vmap(grad(grad(u)),
  in_axes=(0, None))``, steady state: min and median over many timeit repetitions;
* first call: trace + compile + run of a fresh ``jit(value_and_grad(loss))`` (new function
  objects each time, so nothing is cached), median;
* the same two for the loss written per point without vmap (issue 4's form:
  ``stack([grad(grad(u))(x[i], w) for i in range(n)])``);
* graph sizes: ops of ``@main`` after quabla-autodiff + inline + canonicalize for ``u_xx``
  alone and for the value_and_grad program (per-point form too), and the traced module's
  function count.
"""

import argparse
import math
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
    jax.config.update("jax_enable_x64", True)
except Exception:  # noqa: BLE001 - JAX is optional
    jax = None


def u(x, w):
    return qb.sin(x * w)


def make_loss(per_point):
    u_xx = qb.vmap(qb.grad(qb.grad(lambda x, w: u(x, w))), in_axes=(0, None))
    u2 = qb.grad(qb.grad(lambda x, w: u(x, w)))

    def loss(w, x):
        if per_point:
            uxx = qb.stack([u2(x[i], w) for i in range(x.shape[0])])
        else:
            uxx = u_xx(x, w)
        return qb.mean((uxx + math.pi**2 * qb.sin(math.pi * x)) ** 2)

    return loss, u_xx


def make_loss_jax(per_point):
    def uj(x, w):
        return jnp.sin(x * w)

    u_xx = jax.vmap(jax.grad(jax.grad(lambda x, w: uj(x, w))), in_axes=(0, None))
    u2 = jax.grad(jax.grad(lambda x, w: uj(x, w)))

    def loss(w, x):
        if per_point:
            uxx = jnp.stack([u2(x[i], w) for i in range(x.shape[0])])
        else:
            uxx = u_xx(x, w)
        return jnp.mean((uxx + math.pi**2 * jnp.sin(math.pi * x)) ** 2)

    return loss


def times(fn, number, repeat):
    fn()
    ts = [t / number for t in timeit.repeat(fn, number=number, repeat=repeat)]
    return min(ts), statistics.median(ts)


def first_calls(make_and_call, reps):
    ts = []
    for i in range(reps):
        t0 = time.perf_counter()
        make_and_call(i)
        ts.append(time.perf_counter() - t0)
    return min(ts), statistics.median(ts)


def row(name, q, j, unit):
    scale = {"us": 1e6, "ms": 1e3}[unit]
    qs = f"min {q[0] * scale:8.2f} median {q[1] * scale:8.2f} {unit}"
    if j is None:
        print(f"{name:34s} quabla {qs}")
    else:
        js = f"min {j[0] * scale:8.2f} median {j[1] * scale:8.2f} {unit}"
        print(f"{name:34s} quabla {qs}   jax {js}   jax/quabla min {j[0] / q[0]:5.2f}x median {j[1] / q[1]:5.2f}x")
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--points", type=int, default=8)
    args = ap.parse_args()
    n = args.points
    number, repeat = (2000, 5) if args.quick else (20000, 15)
    reps = 3 if args.quick else 11
    print(f"quabla {qb.__version__}, numpy {np.__version__}, jax {jax.__version__ if jax else 'not installed'}; "
          f"{n} collocation points, float64")
    xs = np.linspace(0.05, 0.95, n)
    x, w = qb.array(xs), qb.array(2.5)
    if jax:
        jx, jw = jnp.asarray(xs), jnp.asarray(2.5)

    for per_point in (False, True):
        tag = "per point" if per_point else "vmap"
        loss, u_xx = make_loss(per_point)
        step = qb.jit(qb.value_and_grad(loss))
        v, g = step(w, x)
        j = None
        if jax:
            stepj = jax.jit(jax.value_and_grad(make_loss_jax(per_point)))
            vj, gj = stepj(jw, jx)
            err = max(abs(v.item() - float(vj)) / max(1.0, abs(float(vj))), abs(g.item() - float(gj)) / max(1.0, abs(float(gj))))
            print(f"[{tag}] loss {v.item():.15e} grad {g.item():.15e}; max relative difference to JAX {err:.1e}")
            j = times(lambda: stepj(jw, jx)[0].block_until_ready(), number // 4, repeat)
        row(f"step ({tag})", times(lambda: step(w, x), number, repeat), j, "us")

        def q_first(i, per_point=per_point):
            lf, _ = make_loss(per_point)
            qb.jit(qb.value_and_grad(lf))(w, x)

        def j_first(i, per_point=per_point):
            jax.jit(jax.value_and_grad(make_loss_jax(per_point)))(jw, jx)[0].block_until_ready()

        row(f"first call ({tag})", first_calls(q_first, reps), first_calls(j_first, reps) if jax else None, "ms")
        low = step.lower(w, x)
        print(f"[{tag}] value_and_grad program: {low.program.num_funcs} traced functions, "
              f"{low.program.optimized_num_ops()} ops after canonicalize")
        if not per_point:
            print(f"[{tag}] u_xx alone: {qb.jit(u_xx).lower(x, w).program.optimized_num_ops()} ops after canonicalize")


if __name__ == "__main__":
    main()
