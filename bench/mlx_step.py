"""The MLP loss+grad step (and the README PINN step) on Quabla's ``mlx`` executor against
MLX's own ``mx.compile(mx.value_and_grad(loss))`` of the same model, and against Quabla's
``cpu`` executor, in the same run.

    python bench/mlx_step.py [--batch 32] [--repeat 15] [--json out.json]

Model: 784-512-512-10, tanh hidden layers, softmax cross-entropy, float32. Every variant
computes the loss and the gradients of all six parameter arrays and waits for them
(``mx.eval`` for MLX; Quabla's ``mlx`` executor evaluates its outputs before returning).
Quabla's ``mlx`` call gets parameters that are already MLX-resident (outputs of an earlier
``mlx`` program, so they go in without a copy) and a host batch (copied into MLX per call);
MLX's own step gets ``mx.array``s. Per call: timeit-style (a repeat runs ``number`` calls),
min and median over repeats; ratios are Quabla / MLX (below 1: Quabla faster).
"""
import argparse
import json
import math
import os
import statistics
import sys
import timeit

# This file is named mlx.py: keep its own folder off the path so `import mlx` finds MLX.
_here = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != _here]

import numpy as np  # noqa: E402

import quabla as qb  # noqa: E402
import mlx.core as mx  # noqa: E402

SIZES = (784, 512, 512, 10)


def per_call(fn, repeat):
    fn()
    fn()
    number = 1
    while True:
        t = timeit.timeit(fn, number=number)
        if t >= 0.05:
            break
        number *= 2
    ts = [t / number for t in timeit.repeat(fn, number=number, repeat=repeat)]
    return min(ts), statistics.median(ts)


def data(batch):
    r = np.random.default_rng(0)
    params = [((r.standard_normal((a, b)) / math.sqrt(a)).astype(np.float32), np.zeros(b, np.float32)) for a, b in zip(SIZES[:-1], SIZES[1:])]
    x = r.standard_normal((batch, SIZES[0])).astype(np.float32)
    y = np.eye(SIZES[-1], dtype=np.float32)[r.integers(0, SIZES[-1], batch)]
    return params, x, y


def qb_loss(params, x, y):
    (w1, b1), (w2, b2), (w3, b3) = params
    h = qb.tanh(x @ w1 + b1)
    h = qb.tanh(h @ w2 + b2)
    return -qb.mean(qb.sum(qb.nn.log_softmax(h @ w3 + b3) * y, axis=-1))


def mx_loss(params, x, y):
    (w1, b1), (w2, b2), (w3, b3) = params
    h = mx.tanh(x @ w1 + b1)
    h = mx.tanh(h @ w2 + b2)
    logits = h @ w3 + b3
    return -mx.mean(mx.sum((logits - mx.logsumexp(logits, axis=-1, keepdims=True)) * y, axis=-1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    params, x, y = data(args.batch)

    qp = [(qb.array(w), qb.array(b)) for w, b in params]
    qx, qy = qb.array(x), qb.array(y)
    step_mlx = qb.jit(qb.value_and_grad(qb_loss), device="mlx")
    step_cpu = qb.jit(qb.value_and_grad(qb_loss))
    resident = qb.jit(lambda p: p, device="mlx")(qp)  # parameters as MLX arrays
    assert resident[0][0]._device == "mlx"

    mp = [(mx.array(w), mx.array(b)) for w, b in params]
    mxx, mxy = mx.array(x), mx.array(y)
    mx_step = mx.compile(mx.value_and_grad(mx_loss))

    def run_mx():
        loss, grads = mx_step(mp, mxx, mxy)
        mx.eval(loss, grads)
        return loss

    # Same numbers first.
    lq, gq = step_mlx(resident, qx, qy)
    lm = run_mx()
    lc, _ = step_cpu(qp, qx, qy)
    np.testing.assert_allclose(float(lq), lm.item(), rtol=1e-4)
    np.testing.assert_allclose(float(lq), float(lc), rtol=1e-4)

    rows = {
        "quabla mlx (resident params)": per_call(lambda: step_mlx(resident, qx, qy), args.repeat),
        "quabla mlx (host params)": per_call(lambda: step_mlx(qp, qx, qy), args.repeat),
        "mlx mx.compile(value_and_grad)": per_call(run_mx, args.repeat),
        "quabla cpu": per_call(lambda: step_cpu(qp, qx, qy), args.repeat),
    }
    base = rows["mlx mx.compile(value_and_grad)"]
    out = []
    print(f"MLP {'-'.join(map(str, SIZES))} loss+grad, batch {args.batch}, float32 (mlx {mx.__version__}, {mx.default_device()})")
    for name, (lo, med) in rows.items():
        print(f"  {name:32s} min {lo * 1e6:9.1f} us  median {med * 1e6:9.1f} us  ratio to MLX (min) {lo / base[0]:5.2f}")
        out.append({"bench": "mlx_mlp_step", "variant": name, "batch": args.batch, "min_us": lo * 1e6, "median_us": med * 1e6, "ratio_min_vs_mlx": lo / base[0]})
    # The README PINN step (float64, 8 points): qb.value_and_grad of the loss on mlx and cpu,
    # and MLX's own mx.compile(mx.value_and_grad) of the same loss (u_xx by
    # mx.vmap(mx.grad(mx.grad(u)))).
    import importlib.util

    spec = importlib.util.spec_from_file_location("pinn", os.path.join(os.path.dirname(_here), "examples", "pinn.py"))
    pinn = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pinn)
    px, pw = qb.linspace(0.05, 0.95, 8), qb.array(2.5)
    p_mlx, p_cpu = qb.jit(qb.value_and_grad(pinn.loss), device="mlx"), qb.jit(qb.value_and_grad(pinn.loss))
    pw_res = qb.jit(lambda w: w, device="mlx")(pw)

    def mx_u(x, w):
        return mx.sin(x * w)

    mx_uxx = mx.vmap(mx.grad(mx.grad(mx_u)), in_axes=(0, None))

    def mx_pinn_loss(w, x):
        return mx.mean((mx_uxx(x, w) + math.pi**2 * mx.sin(math.pi * x)) ** 2)

    mx_pstep = mx.compile(mx.value_and_grad(mx_pinn_loss))
    mpx, mpw = mx.array(np.asarray(px), dtype=mx.float64), mx.array(2.5, dtype=mx.float64)

    def run_mx_pinn():
        v, g = mx_pstep(mpw, mpx)
        mx.eval(v, g)

    np.testing.assert_allclose(float(p_mlx(pw_res, px)[0]), float(p_cpu(pw, px)[0]), rtol=1e-10)
    prow = {
        "quabla mlx (resident w)": per_call(lambda: p_mlx(pw_res, px), args.repeat),
        "mlx mx.compile(value_and_grad)": per_call(run_mx_pinn, args.repeat),
        "quabla cpu": per_call(lambda: p_cpu(pw, px), args.repeat),
    }
    pbase = prow["mlx mx.compile(value_and_grad)"]
    print("README PINN loss+grad (float64, 8 points)")
    for name, (lo, med) in prow.items():
        print(f"  {name:32s} min {lo * 1e6:9.1f} us  median {med * 1e6:9.1f} us  ratio to MLX (min) {lo / pbase[0]:5.2f}")
        out.append({"bench": "mlx_pinn_step", "variant": name, "min_us": lo * 1e6, "median_us": med * 1e6, "ratio_min_vs_mlx": lo / pbase[0]})
    if args.json:
        with open(args.json, "w") as f:
            for r in out:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
