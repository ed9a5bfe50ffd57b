"""Gaussian-process regression: an RBF kernel's length scale, signal and noise variances are
fitted by gradient descent on the exact negative log marginal likelihood, computed through a
Cholesky factorisation (``qb.linalg.cholesky``, ``qb.scipy.linalg.cho_solve``); the fitted GP
then predicts held-out points.

    python examples/gp.py [--n 60] [--steps 150]
    python examples/gp.py --smoke       # a few seconds (CI)

Prints the falling loss, the fitted hyperparameters and the test RMSE (which beats the data's
noise level once fitted).
"""
import argparse
import math

import numpy as np

import quabla as qb


def kernel(x1, x2, params):
    """RBF kernel sf2 * exp(-|x1 - x2|^2 / (2 ell^2)) with params = log(ell, sf2, sn2)."""
    ell2 = qb.exp(2.0 * params[0])
    d = x1[:, None] - x2[None, :]
    return qb.exp(params[1]) * qb.exp(-0.5 * d * d / ell2)


def nll(params, x, y):
    """-log p(y | x, params) = y.K^-1.y / 2 + log det K / 2 + n log(2 pi) / 2, K = k(x, x) + sn2 I."""
    n = x.shape[0]
    k = kernel(x, x, params) + (qb.exp(params[2]) + 1e-8) * qb.eye(n)
    c = qb.scipy.linalg.cho_factor(k, lower=True)
    alpha = qb.scipy.linalg.cho_solve(c, y)
    logdet = 2.0 * qb.sum(qb.log(qb.sum(c[0] * qb.eye(n), axis=1)))
    return 0.5 * qb.sum(y * alpha) + 0.5 * logdet + 0.5 * n * math.log(2 * math.pi)


def predict(params, x, y, xs):
    """Posterior mean at xs."""
    n = x.shape[0]
    k = kernel(x, x, params) + (qb.exp(params[2]) + 1e-8) * qb.eye(n)
    alpha = qb.scipy.linalg.cho_solve(qb.scipy.linalg.cho_factor(k, lower=True), y)
    return kernel(xs, x, params) @ alpha


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=60)
    p.add_argument("--steps", type=int, default=150)
    p.add_argument("--smoke", action="store_true", help="a few seconds: 20 points, 30 steps")
    args = p.parse_args()
    if args.smoke:
        args.n, args.steps = 20, 30
    rng = np.random.RandomState(0)
    noise = 0.1
    f = lambda t: np.sin(3 * t) + 0.3 * np.cos(7 * t)
    x = np.sort(rng.uniform(-2, 2, args.n))
    y = f(x) + noise * rng.randn(args.n)
    xt = np.linspace(-1.9, 1.9, 200)

    params = qb.array([0.0, 0.0, 0.0])  # log ell, log sf2, log sn2
    opt = qb.optim.Adam(learning_rate=0.05)
    state = opt.init(params)
    step = qb.jit(qb.value_and_grad(nll))
    xq, yq = qb.asarray(x), qb.asarray(y)
    for i in range(args.steps):
        value, g = step(params, xq, yq)
        params, state = opt.update(params, g, state)
        if i % max(1, args.steps // 6) == 0 or i == args.steps - 1:
            print(f"step {i:4d}  nll {value.item():10.4f}")
    ell, sf2, sn2 = np.exp(np.asarray(params))
    print(f"length scale {ell:.3f}, signal variance {sf2:.3f}, noise std {math.sqrt(sn2):.3f} (true {noise})")
    mean = np.asarray(qb.jit(predict)(params, xq, yq, qb.asarray(xt)))
    rmse = float(np.sqrt(np.mean((mean - f(xt)) ** 2)))
    print(f"test RMSE of the posterior mean: {rmse:.4f}")


if __name__ == "__main__":
    main()
