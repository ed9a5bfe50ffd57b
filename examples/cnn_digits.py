"""A small CNN on scikit-learn's digits (8x8 grey images, 10 classes; shipped with the
package, no download): conv 3x3 (1 -> 16 channels, SAME) + relu, 2x2 max pool, conv 3x3
(16 -> 32, SAME) + relu, 2x2 max pool, a dense softmax layer. Trained with Adam on
mini-batches by one compiled `value_and_grad` step (NHWC layout); prints the test accuracy.

    python examples/cnn_digits.py            # 8 epochs, about 97% test accuracy
    python examples/cnn_digits.py --epochs 2
    python examples/cnn_digits.py --smoke    # a few seconds (CI)
"""
import argparse

import numpy as np

import digits  # examples/digits.py: the data split and the training loop
import quabla as qb

DN = ("NHWC", "HWIO", "NHWC")


def init(rng):
    def he(shape, fan_in):
        return qb.array((rng.normal(size=shape) * np.sqrt(2.0 / fan_in)).astype(np.float32))

    return {
        "c1": he((3, 3, 1, 16), 9), "b1": qb.zeros((16,), dtype=qb.float32),
        "c2": he((3, 3, 16, 32), 9 * 16), "b2": qb.zeros((32,), dtype=qb.float32),
        "w": he((2 * 2 * 32, 10), 128), "b": qb.zeros((10,), dtype=qb.float32),
    }


def logits(p, x):
    h = qb.relu(qb.conv_general_dilated(x, p["c1"], (1, 1), "SAME", dimension_numbers=DN) + p["b1"])
    h = qb.max_pool(h, (2, 2), strides=(2, 2))  # 8x8 -> 4x4
    h = qb.relu(qb.conv_general_dilated(h, p["c2"], (1, 1), "SAME", dimension_numbers=DN) + p["b2"])
    h = qb.max_pool(h, (2, 2), strides=(2, 2))  # 4x4 -> 2x2
    return qb.reshape(h, (h.shape[0], -1)) @ p["w"] + p["b"]


def loss(p, x, y1h):
    z = logits(p, x)
    return -qb.mean(qb.sum(y1h * (z - qb.logsumexp(z, axis=1, keepdims=True)), axis=1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--smoke", action="store_true", help="a few seconds: 2 epochs on 400 training images")
    args = ap.parse_args()
    x, y, train, test, rng = digits.load(images=True)  # (n, 8, 8, 1)
    if args.smoke:
        args.epochs, train = 2, train[:400]
    digits.fit(loss, logits, init(rng), (x, y, train, test, rng), args.epochs, args.batch, 3e-3)


if __name__ == "__main__":
    main()
