"""The README PINN (reference §2.4, "v0.2"): learn w in u(x) = sin(w x) so that u'' = -pi^2
sin(pi x) on (0, 1). u_xx is the exact second derivative per collocation point, vmapped over
the points; the loss is differentiated in w by one compiled program per step.

    python examples/pinn.py    # prints w = 3.141593, loss = ...
"""
import math

import quabla as qb


def u(x, w):  # one collocation point, scalar x
    return qb.sin(x * w)


u_xx = qb.vmap(qb.grad(qb.grad(u)), in_axes=(0, None))  # exact d2u/dx2 per point


def loss(w, x):
    return qb.mean((u_xx(x, w) + math.pi**2 * qb.sin(math.pi * x)) ** 2)


x, w = qb.linspace(0.05, 0.95, 8), qb.array(2.5)
opt = qb.optim.Adam(learning_rate=0.05)
state = opt.init(w)
step = qb.jit(qb.value_and_grad(loss))  # traced and compiled on first call
for _ in range(300):
    value, g = step(w, x)
    w, state = opt.update(w, g, state)
print(f"w = {w.item():.6f}, loss = {value.item():.1e}")
