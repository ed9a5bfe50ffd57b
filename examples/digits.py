"""What the digits examples share (mlp_digits.py, cnn_digits.py): scikit-learn's digits split
80/20 with a fixed seed, and training with Adam on shuffled mini-batches by one compiled
``value_and_grad`` step, with a tqdm progress bar over the batches when tqdm is installed
(``pip install quabla[examples]``), then the test accuracy."""
import time

import numpy as np
from sklearn.datasets import load_digits

import quabla as qb

try:
    from tqdm import tqdm
except ImportError:  # optional extra
    tqdm = None


def load(images, seed=0):
    """(x, y, train indices, test indices, rng): pixels in [0, 1] as float32, ``(n, 8, 8, 1)``
    images when ``images`` else ``(n, 64)`` rows; a fifth of the data is the test set."""
    digits = load_digits()
    x = (digits.images[..., None] if images else digits.data) / 16.0
    y = digits.target
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(y))
    n_test = len(y) // 5
    return x.astype(np.float32), y, perm[n_test:], perm[:n_test], rng


def fit(loss, logits, params, data, epochs, batch, lr):
    """Trains ``params`` on ``data`` (from :func:`load`); prints each epoch's mean training loss
    and the test accuracy; returns the trained parameters and the accuracy."""
    x, y, train, test, rng = data
    onehot = np.eye(10, dtype=np.float32)
    opt = qb.optim.Adam(learning_rate=lr)
    state = opt.init(params)
    step = qb.jit(qb.value_and_grad(loss))
    predict = qb.jit(lambda p, x: qb.argmax(logits(p, x), axis=1))
    t0 = time.perf_counter()
    nb = len(train) // batch
    for epoch in range(epochs):
        order = rng.permutation(train)
        total = 0.0
        batches = range(nb) if tqdm is None else tqdm(range(nb), desc=f"epoch {epoch + 1}/{epochs}", leave=False, mininterval=0.5)
        for i in batches:
            idx = order[i * batch:(i + 1) * batch]
            value, g = step(params, x[idx], onehot[y[idx]])
            params, state = opt.update(params, g, state)
            total += value.item()
        print(f"epoch {epoch + 1:3d}  train loss {total / nb:.4f}")
    acc = float(np.mean(np.asarray(predict(params, x[test])) == y[test]))
    print(f"test accuracy {acc:.4f} ({len(test)} images, {time.perf_counter() - t0:.1f} s)")
    return params, acc
