"""Fits the parameters of an ODE through an RK4 integrator written with ``qb.fori_loop``:
a damped, driven oscillator ``x'' = -k x - c x' + a sin(t)`` observed at a few times. The
loss (squared error of the simulated positions against the observations) is differentiated
by reverse mode through every RK4 step (the loops have static trip counts), and Adam fits
(k, c, a) from a wrong start.

    python examples/rk4.py                 # fast default: prints a falling loss
    python examples/rk4.py --iters 400 --steps 40
    python examples/rk4.py --smoke         # a few seconds (CI)
"""
import argparse

import numpy as np

import quabla as qb


def rhs(t, y, theta):
    k, c, a = theta[0], theta[1], theta[2]
    x, v = y[0], y[1]
    return qb.stack([v, -k * x - c * v + a * qb.sin(t)])


def rk4_segment(y, t0, dt, n, theta):
    """``n`` RK4 steps of size ``dt`` from ``(t0, y)``, one ``fori_loop``."""

    def step(i, y):
        t = t0 + dt * i.astype(qb.float64)
        k1 = rhs(t, y, theta)
        k2 = rhs(t + dt / 2, y + dt / 2 * k1, theta)
        k3 = rhs(t + dt / 2, y + dt / 2 * k2, theta)
        k4 = rhs(t + dt, y + dt * k3, theta)
        return y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

    return qb.fori_loop(0, n, step, y)


def simulate(theta, y0, segments, steps, dt):
    """Positions at the end of each of ``segments`` segments of ``steps`` RK4 steps."""
    ys, y = [], y0
    for s in range(segments):
        y = rk4_segment(y, s * steps * dt, dt, steps, theta)
        ys.append(y[0])
    return qb.stack(ys)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--iters", type=int, default=150)
    p.add_argument("--segments", type=int, default=6)
    p.add_argument("--steps", type=int, default=20, help="RK4 steps per observation")
    p.add_argument("--smoke", action="store_true", help="a few seconds: 30 iterations of 3 segments")
    args = p.parse_args()
    if args.smoke:
        args.iters, args.segments, args.steps = 30, 3, 10
    dt = 0.05
    y0 = qb.array([1.0, 0.0])
    true = qb.array([2.0, 0.3, 0.8])
    obs = simulate(true, y0, args.segments, args.steps, dt)

    def loss(theta):
        return qb.mean((simulate(theta, y0, args.segments, args.steps, dt) - obs) ** 2)

    step = qb.jit(qb.value_and_grad(loss))
    theta = qb.array([1.0, 0.8, 0.0])
    opt = qb.optim.Adam(learning_rate=0.05)
    state = opt.init(theta)
    for it in range(args.iters):
        value, g = step(theta)
        theta, state = opt.update(theta, g, state)
        if it % max(args.iters // 10, 1) == 0 or it == args.iters - 1:
            print(f"iter {it:4d}  loss {value.item():.3e}  theta {np.round(theta.numpy(), 4).tolist()}")
    print(f"true theta {true.numpy().tolist()}")


if __name__ == "__main__":
    main()
