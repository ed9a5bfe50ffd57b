"""Cross-entropy HVP over 64x1024 logits and an MLP loss+grad step, Quabla against JAX in the
same run (both jitted, float32), per-call time: min and median over repeats of timeit-style
batches; ratios are Quabla / JAX (below 1: Quabla faster).

    python bench/ce_hvp.py [--repeat 7] [--json out.json]

* ce_hvp: ``jvp(grad(loss), (z,), (v,))`` with ``loss(z) = -mean(log_softmax(z)[i, y_i])``
  over 64 x 1024 logits, labels a runtime argument (the label pick is a gather; its VJP was a 64 x 65536 one-hot
  contraction before the scatter family, and is a scatter_add over 64 updates now);
* mlp: ``value_and_grad`` of a 784-256-1024 tanh MLP's mean cross-entropy over a batch of 64
  (labels a runtime argument).

The label pick is ``take(ravel(z), arange(n) * V + y)``, which older builds have too, so the
same script measures the build before this change (``PYTHONPATH=<old python dir>``).
"""
import argparse
import json
import statistics
import timeit

import numpy as np

import quabla as qb

import jax
import jax.numpy as jnp

jax.config.update("jax_platforms", "cpu")


def per_call(fn, repeat):
    fn()
    number = 1
    while timeit.timeit(fn, number=number) < 0.05 and number < 10000:
        number *= 2
    ts = [timeit.timeit(fn, number=number) / number for _ in range(repeat)]
    return min(ts), statistics.median(ts)


def ce(m, z, y):
    """Mean cross-entropy: the label's entry of log_softmax(z), picked by a gather."""
    n, v = z.shape
    zmax = m.max(z, axis=1, keepdims=True)
    logp = z - zmax - m.log(m.sum(m.exp(z - zmax), axis=1, keepdims=True))
    return -m.mean(m.take(m.ravel(logp), np.arange(n) * v + y))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--json")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    out = []

    n, vocab = 64, 1024
    z = rng.standard_normal((n, vocab)).astype(np.float32)
    t = rng.standard_normal((n, vocab)).astype(np.float32)
    y = rng.integers(0, vocab, n)

    def hvp(m, jvp, grad):
        return lambda z, t, y: jvp(lambda z: grad(lambda z: ce(m, z, y))(z), (z,), (t,))[1]

    fq = qb.jit(hvp(qb, qb.jvp, qb.grad))
    fj = jax.jit(hvp(jnp, jax.jvp, jax.grad))
    zq, tq, yq = qb.array(z), qb.array(t), qb.array(y)
    np.testing.assert_allclose(np.asarray(fq(zq, tq, yq)), np.asarray(fj(z, t, y)), rtol=1e-3, atol=1e-6)
    out.append(("ce_hvp_64x1024", per_call(lambda: fq(zq, tq, yq), args.repeat), per_call(lambda: fj(z, t, y).block_until_ready(), args.repeat)))

    d_in, d_h = 784, 256
    params = {"w1": (rng.standard_normal((d_in, d_h)) / 28).astype(np.float32), "w2": (rng.standard_normal((d_h, vocab)) / 16).astype(np.float32)}
    xb = rng.standard_normal((n, d_in)).astype(np.float32)

    def mlp_loss(m):
        return lambda p, x, y: ce(m, m.tanh(x @ p["w1"]) @ p["w2"], y)

    gq = qb.jit(qb.value_and_grad(mlp_loss(qb)))
    gj = jax.jit(jax.value_and_grad(mlp_loss(jnp)))
    pq = {k: qb.array(v) for k, v in params.items()}
    xq = qb.array(xb)
    lq, _ = gq(pq, xq, yq)
    lj, _ = gj(params, xb, y)
    np.testing.assert_allclose(float(np.asarray(lq)), float(lj), rtol=1e-4)
    out.append(("mlp_loss_grad_64x784x256x1024", per_call(lambda: gq(pq, xq, yq), args.repeat), per_call(lambda: jax.block_until_ready(gj(params, xb, y)), args.repeat)))

    rows = []
    for name, (qmin, qmed), (jmin, jmed) in out:
        row = {"bench": name, "quabla_min_us": qmin * 1e6, "quabla_median_us": qmed * 1e6, "jax_min_us": jmin * 1e6, "jax_median_us": jmed * 1e6, "ratio_min": qmin / jmin, "ratio_median": qmed / jmed}
        rows.append(row)
        print(json.dumps(row))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
