"""Data-parallel training of an MLP on scikit-learn's digits (8x8 images, 10 classes; shipped
with the package) over 8 XLA CPU devices.

Each step's batch is split over the devices (``P("batch")``), the parameters are replicated;
``qb.distributed.value_and_grad`` computes each device's loss and gradient and XLA averages
them with an all-reduce. The whole SGD step is one ``qb.jit`` on the xla executor with
``resident=True``: parameters and momentum stay on the devices between steps, only the
batches travel. Prints the mean training loss per epoch, then the test accuracy.

    python examples/dp_digits.py              # 20 epochs, about 96% test accuracy
    python examples/dp_digits.py --smoke      # 2 epochs, and checks the first step against the CPU JIT
"""
import argparse
import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")  # before XLA starts

import numpy as np  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402

import quabla as qb  # noqa: E402
from quabla.sharding import NamedSharding, PartitionSpec as P, make_mesh  # noqa: E402


def init(rng, sizes=(64, 128, 10)):
    return [
        {"w": (rng.normal(size=(a, b)) * np.sqrt(2.0 / a)).astype(np.float32), "b": np.zeros((b,), np.float32)}
        for a, b in zip(sizes[:-1], sizes[1:])
    ]


def logits(params, x):
    h = x
    for layer in params[:-1]:
        h = qb.relu(h @ layer["w"] + layer["b"])
    return h @ params[-1]["w"] + params[-1]["b"]


def loss(params, x, y1h):  # softmax cross-entropy
    return -qb.mean(qb.sum(y1h * qb.nn.log_softmax(logits(params, x), axis=1), axis=1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--smoke", action="store_true", help="2 epochs, plus a check of the first step against the CPU JIT")
    args = ap.parse_args()
    epochs = 2 if args.smoke else args.epochs

    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y1h = np.eye(10, dtype=np.float32)[digits.target]
    rng = np.random.default_rng(0)
    perm = rng.permutation(len(x))
    n_test = len(x) // 5
    test, train = perm[:n_test], perm[n_test:]

    n = qb.sharding.device_count()
    mesh = make_mesh((n,), ("batch",))
    rep, bat = NamedSharding(mesh, P()), NamedSharding(mesh, P("batch"))
    vg = qb.distributed.value_and_grad(loss, devices=mesh, shard_argnums=(1, 2))

    def sgd_step(params, mom, xb, yb):
        value, grads = vg(params, xb, yb)  # traced into this step: the same sharded program
        mom = qb.tree.map(lambda m, g: 0.9 * m + g, mom, grads)
        params = qb.tree.map(lambda p, m: p - args.lr * m, params, mom)
        return params, mom, value

    step = qb.jit(sgd_step, in_shardings=(rep, rep, bat, bat), out_shardings=rep, resident=True)

    params = init(rng)
    mom = qb.tree.map(np.zeros_like, params)
    if args.smoke:  # the first step on 8 devices equals the same step on Quabla's CPU JIT
        xb, yb = x[train[: args.batch]], y1h[train[: args.batch]]
        got = qb.tree.leaves(step(params, mom, xb, yb))
        ref = qb.tree.leaves(qb.jit(sgd_step)(params, mom, xb, yb))
        diff = max(float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) for a, b in zip(got, ref))
        print(f"first step on {n} devices vs CPU JIT: max |diff| = {diff:.2e}")
        assert diff < 1e-5, diff
    params = [{k: qb.sharding.device_put(v, rep) for k, v in layer.items()} for layer in params]
    mom = qb.tree.map(lambda m: qb.sharding.device_put(m, rep), mom)
    steps = len(train) // args.batch
    print(f"{n} XLA devices, {len(train)} training images, {steps} steps of batch {args.batch} per epoch")
    for epoch in range(epochs):
        order = rng.permutation(train)
        losses = []
        for s in range(steps):
            idx = order[s * args.batch : (s + 1) * args.batch]
            params, mom, value = step(params, mom, qb.sharding.device_put(x[idx], bat), qb.sharding.device_put(y1h[idx], bat))
            losses.append(value)  # stays on the devices until the epoch ends
        print(f"epoch {epoch + 1:2d}: loss {np.mean([float(np.asarray(v)) for v in losses]):.4f}")
    host = qb.tree.map(np.asarray, params)
    pred = np.argmax(np.asarray(qb.jit(logits)(host, x[test])), axis=1)
    print(f"test accuracy: {np.mean(pred == digits.target[test]):.3f}")


if __name__ == "__main__":
    main()
