"""The README PINN's training step three ways, in the same run (a benchmark, not a test):

* ``Trainer``: ``qb.optim.Trainer(loss, w, qb.optim.Adam(0.05), x)``, ``trainer.step()``
  (one compiled program: loss, gradient and Adam update; parameters and moments resident);
* ``loop``: ``v, g = qb.jit(qb.value_and_grad(loss))(w, x)`` then ``opt.update(w, g, state)``
  (the pure-pytree loop of examples/pinn.py: two programs and the pytree update per step);
* ``Trainer`` on ``mlx`` (when ``mlx`` is installed): the same step program on the MLX executor;
* ``JAX``: ``jax.jit`` of one step function, JAX's ``value_and_grad`` of the same loss plus
  Adam written in ``jax.numpy`` (no optax), float64 (x64) like Quabla's program.

The same three for a float32 MLP (8 -> 64 -> 1, batch 256) follow, unless ``--no-mlp``.

Each is timed in blocks of ``--steps`` consecutive steps (JAX blocks on the result at the end
of each block), ``--repeat`` blocks; printed: min and median microseconds per step. The
final ``w`` of each (300 steps from 2.5) is printed too: all three train to 3.141593.

    python bench/trainer.py [--steps 2000] [--repeat 25] [--quick] [--no-mlp]
"""

import argparse
import math
import statistics
import sys
import time

import quabla as qb

try:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_platforms", "cpu")
    jax.config.update("jax_enable_x64", True)
except Exception:  # noqa: BLE001 - JAX is optional
    jax = None

LR, B1, B2, EPS = 0.05, 0.9, 0.999, 1e-8


def u(x, w):
    return qb.sin(x * w)


u_xx = qb.vmap(qb.grad(qb.grad(u)), in_axes=(0, None))


def loss(w, x):
    return qb.mean((u_xx(x, w) + math.pi**2 * qb.sin(math.pi * x)) ** 2)


def blocks(run, steps, repeat, sync=lambda: None):
    """Microseconds per step of ``repeat`` blocks of ``steps`` calls of ``run``."""
    for _ in range(min(steps, 200)):
        run()
    sync()
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(steps):
            run()
        sync()
        out.append((time.perf_counter() - t0) / steps * 1e6)
    return min(out), statistics.median(out)


def quabla_trainer(x, w0, device="cpu"):
    tr = qb.optim.Trainer(loss, w0, qb.optim.Adam(learning_rate=LR, b1=B1, b2=B2, eps=EPS), x, device=device)
    return tr, tr.step


def quabla_loop(x, w0):
    opt = qb.optim.Adam(learning_rate=LR, b1=B1, b2=B2, eps=EPS)
    vg = qb.jit(qb.value_and_grad(loss))
    box = [w0, opt.init(w0)]

    def step():
        v, g = vg(box[0], x)
        box[0], box[1] = opt.update(box[0], g, box[1])

    return box, step


def jax_step():
    def uj(x, w):
        return jnp.sin(x * w)

    uxx = jax.vmap(jax.grad(jax.grad(uj)), in_axes=(0, None))

    def lossj(w, x):
        return jnp.mean((uxx(x, w) + math.pi**2 * jnp.sin(math.pi * x)) ** 2)

    @jax.jit
    def step(state, x):
        w, m, v, t = state
        value, g = jax.value_and_grad(lossj)(w, x)
        t = t + 1.0
        m = B1 * m + (1 - B1) * g
        v = B2 * v + (1 - B2) * g * g
        w = w - LR * (m / (1 - B1**t)) / (jnp.sqrt(v / (1 - B2**t)) + EPS)
        return (w, m, v, t), value

    return step


def mlp_loss(p, x, y):
    h = qb.tanh(x @ p["w1"] + p["b1"])
    return qb.mean((h @ p["w2"] + p["b2"] - y) ** 2)


def mlp_data(hidden, batch):
    import numpy as np

    rng = np.random.default_rng(0)
    p = {
        "w1": (rng.normal(size=(8, hidden)) * 0.3).astype(np.float32),
        "b1": np.zeros(hidden, np.float32),
        "w2": (rng.normal(size=(hidden, 1)) * 0.3).astype(np.float32),
        "b2": np.zeros(1, np.float32),
    }
    x = rng.normal(size=(batch, 8)).astype(np.float32)
    y = np.sin(x.sum(axis=1, keepdims=True)).astype(np.float32)
    return p, x, y


def mlp_rows(steps, repeat, hidden=64, batch=256):
    """The same three ways for a float32 MLP 8 -> hidden -> 1 on one batch."""
    p, x, y = mlp_data(hidden, batch)
    qp = qb.tree.map(qb.array, p)
    qx, qy = qb.array(x), qb.array(y)
    rows = []
    tr = qb.optim.Trainer(mlp_loss, qp, qb.optim.Adam(1e-3), qx, qy)
    rows.append(("Quabla Trainer.step()", blocks(tr.step, steps, repeat)))
    opt = qb.optim.Adam(1e-3)
    vg = qb.jit(qb.value_and_grad(mlp_loss))
    box = [qp, opt.init(qp)]

    def lstep():
        v, g = vg(box[0], qx, qy)
        box[0], box[1] = opt.update(box[0], g, box[1])

    rows.append(("Quabla jit(value_and_grad) + opt.update", blocks(lstep, max(steps // 10, 20), repeat)))
    if jax is not None:

        def lj(p, x, y):
            h = jnp.tanh(x @ p["w1"] + p["b1"])
            return jnp.mean((h @ p["w2"] + p["b2"] - y) ** 2)

        @jax.jit
        def jstep(state, x, y):
            p, m, v, t = state
            value, g = jax.value_and_grad(lj)(p, x, y)
            t = t + 1.0
            m = jax.tree.map(lambda m, g: B1 * m + (1 - B1) * g, m, g)
            v = jax.tree.map(lambda v, g: B2 * v + (1 - B2) * g * g, v, g)
            p = jax.tree.map(lambda p, m, v: p - 1e-3 * (m / (1 - B1**t)) / (jnp.sqrt(v / (1 - B2**t)) + EPS), p, m, v)
            return (p, m, v, t), value

        jp = jax.tree.map(jnp.asarray, p)
        z = jax.tree.map(jnp.zeros_like, jp)
        s = [(jp, z, z, jnp.zeros((), jnp.float32))]
        xj, yj = jnp.asarray(x), jnp.asarray(y)

        def jrun():
            s[0], _ = jstep(s[0], xj, yj)

        rows.append(("JAX jit(value_and_grad + Adam)", blocks(jrun, steps, repeat, lambda: jax.block_until_ready(s[0]))))
    return rows


def show(title, rows):
    print(title)
    print(f"{'':44s} {'min':>9s} {'median':>9s}")
    for name, (mn, md) in rows:
        print(f"{name:44s} {mn:9.2f} {md:9.2f}")
    base = rows[0][1]
    for name, (mn, md) in rows[1:]:
        print(f"  {name} / Trainer: min {mn / base[0]:.1f}x, median {md / base[1]:.1f}x")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=2000, help="steps per timed block")
    ap.add_argument("--repeat", type=int, default=25, help="timed blocks")
    ap.add_argument("--quick", action="store_true", help="200 steps x 5 blocks")
    ap.add_argument("--no-mlp", action="store_true", help="only the PINN")
    args = ap.parse_args()
    steps, repeat = (200, 5) if args.quick else (args.steps, args.repeat)
    x, w0 = qb.linspace(0.05, 0.95, 8), qb.array(2.5)

    # Correctness first: 300 steps from w = 2.5 each.
    tr, _ = quabla_trainer(x, w0)
    tr.fit(300, progress=False)
    box, lstep = quabla_loop(x, w0)
    for _ in range(300):
        lstep()
    finals = {"Trainer": tr.params.item(), "loop": box[0].item()}

    rows = []
    tr, step = quabla_trainer(x, w0)
    rows.append(("Quabla Trainer.step()", blocks(step, steps, repeat)))
    _, lstep = quabla_loop(x, w0)
    rows.append(("Quabla jit(value_and_grad) + opt.update", blocks(lstep, max(steps // 10, 20), repeat)))
    if "mlx" in qb.devices():
        # The same step program on the mlx executor (state resident in MLX; the loss is read
        # back once per block, which evaluates MLX's lazy graph).
        tr_m, _ = quabla_trainer(x, w0, "mlx")
        tr_m.fit(300, progress=False)
        finals["Trainer (mlx)"] = tr_m.params.item()
        tr_m, mstep = quabla_trainer(x, w0, "mlx")
        rows.append(("Quabla Trainer.step() on mlx", blocks(mstep, max(steps // 10, 20), repeat, lambda: tr_m.loss())))
    if jax is not None:
        jstep = jax_step()
        xj = jnp.linspace(0.05, 0.95, 8)
        z = jnp.zeros(())
        s = [(jnp.asarray(2.5), z, z, z)]
        for _ in range(300):
            s[0], _v = jstep(s[0], xj)
        finals["JAX"] = float(s[0][0])
        s = [(jnp.asarray(2.5), z, z, z)]

        def jrun():
            s[0], _ = jstep(s[0], xj)

        rows.append(("JAX jit(value_and_grad + Adam)", blocks(jrun, steps, repeat, lambda: jax.block_until_ready(s[0]))))
    else:
        print("(JAX not importable: its row is skipped)", file=sys.stderr)

    show(f"README PINN training step, 8 points, float64, Adam(lr={LR}); {repeat} blocks of {steps} steps; us/step", rows)
    print("w after 300 steps: " + ", ".join(f"{k} {v:.6f}" for k, v in finals.items()))
    if not args.no_mlp:
        show(f"\nMLP 8 -> 64 -> 1, tanh, batch 256, float32, Adam(1e-3); us/step", mlp_rows(max(steps // 4, 50), repeat))


if __name__ == "__main__":
    main()
