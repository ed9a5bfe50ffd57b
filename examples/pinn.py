"""The README PINN (reference §2.4, "v0.2"): learn w in u(x) = sin(w x) so that u'' = -pi^2
sin(pi x) on (0, 1). u_xx is the exact second derivative per collocation point, vmapped over
the points; the loss is differentiated in w by one compiled program per step.

    python examples/pinn.py                  # prints w = 3.141593, loss = ...
    python examples/pinn.py --plot pinn.png  # also draws the trained u against the exact one
    python examples/pinn.py --smoke          # a few seconds: fewer steps, the loss as it falls
    python examples/pinn.py --device cuda    # the same on a GPU (tests/gpu/run.sh)
    python examples/pinn.py --trainer        # the same training through qb.optim.Trainer
"""
import argparse
import math

import quabla as qb


def u(x, w):  # one collocation point, scalar x
    return qb.sin(x * w)


u_xx = qb.vmap(qb.grad(qb.grad(u)), in_axes=(0, None))  # exact d2u/dx2 per point


def loss(w, x):
    return qb.mean((u_xx(x, w) + math.pi**2 * qb.sin(math.pi * x)) ** 2)


def plot(path, w, w0):
    """The trained u(x) = sin(w x), the untrained start and the exact sin(pi x) on [0, 1]."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    xs = np.linspace(0.0, 1.0, 200)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(xs, np.sin(math.pi * xs), "k-", lw=3, alpha=0.35, label="exact: sin(pi x)")
    ax.plot(xs, np.asarray(u(qb.asarray(xs), qb.array(w))), "C0--", lw=2, label=f"trained: sin({w:.6f} x)")
    ax.plot(xs, np.sin(w0 * xs), "C3:", lw=1.5, label=f"start: sin({w0} x)")
    ax.set_xlabel("x")
    ax.set_ylabel("u(x)")
    ax.set_title("PINN for u'' = -pi^2 sin(pi x)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plot", metavar="PNG", help="write a picture of the solution to this file")
    ap.add_argument("--smoke", action="store_true", help="a few seconds: 60 steps, printing the loss")
    ap.add_argument("--device", default=None, help="compile the step for this device (qb.devices(); default the CPU)")
    ap.add_argument("--trainer", action="store_true", help="train with qb.optim.Trainer (one resident step program)")
    args = ap.parse_args()
    steps = 60 if args.smoke else 300
    w0 = 2.5
    x, w = qb.linspace(0.05, 0.95, 8), qb.array(w0)
    if args.trainer:
        # Loss, gradient and Adam update compiled into one program; w and the moments stay
        # in it between steps (fit shows a tqdm bar when tqdm is installed).
        trainer = qb.optim.Trainer(loss, w, qb.optim.Adam(learning_rate=0.05), x)
        trainer.fit(steps, progress=args.smoke)
        w, value = trainer.params, trainer.loss()
        print(f"w = {w.item():.6f}, loss = {value.item():.1e}")
        if args.plot:
            plot(args.plot, w.item(), w0)
            print(f"wrote {args.plot}")
        return
    opt = qb.optim.Adam(learning_rate=0.05)
    state = opt.init(w)
    step = qb.jit(qb.value_and_grad(loss), device=args.device)  # traced and compiled on first call
    for i in range(steps):
        value, g = step(w, x)
        w, state = opt.update(w, g, state)
        if args.smoke and (i % 20 == 0 or i == steps - 1):
            print(f"step {i:3d}  loss {value.item():.4e}")
    print(f"w = {w.item():.6f}, loss = {value.item():.1e}")
    if args.plot:
        plot(args.plot, w.item(), w0)
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
