"""An MLP on scikit-learn's digits (8x8 grey images, 10 classes; the data ships with
scikit-learn, no download): 64 -> 128 -> 64 -> 10 with gelu, trained with Adam on mini-batches
by one compiled ``value_and_grad`` step, with a tqdm progress bar over the batches (plain
output when tqdm is not installed: ``pip install quabla[examples]``). Prints the test accuracy.

    python examples/mlp_digits.py            # 30 epochs, about 97-98% test accuracy
    python examples/mlp_digits.py --smoke    # a few seconds: 2 epochs
"""
import argparse

import numpy as np

import digits  # examples/digits.py: the data split and the training loop
import quabla as qb

SIZES = (64, 128, 64, 10)


def init(rng, sizes=SIZES):
    """Glorot-uniform weights and zero biases, as a list of (w, b) layers."""
    layers = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        lim = np.sqrt(6.0 / (n_in + n_out))
        w = rng.uniform(-lim, lim, size=(n_in, n_out)).astype(np.float32)
        layers.append((qb.array(w), qb.zeros((n_out,), dtype=qb.float32)))
    return layers


def logits(params, x):
    for w, b in params[:-1]:
        x = qb.nn.gelu(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss(params, x, y1h):
    """Mean softmax cross-entropy."""
    return -qb.mean(qb.sum(y1h * qb.nn.log_softmax(logits(params, x)), axis=1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--smoke", action="store_true", help="a few seconds: 2 epochs")
    args = ap.parse_args()
    if args.smoke:
        args.epochs = 2
    data = digits.load(images=False)
    digits.fit(loss, logits, init(data[4]), data, args.epochs, args.batch, args.lr)


if __name__ == "__main__":
    main()
