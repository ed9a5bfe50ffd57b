"""Thread safety: Python threads calling the same jitted function (including its first,
tracing call), different jitted functions, and eager ops concurrently get correct results."""

import threading

import numpy as np

import quabla as qb

N_THREADS = 8
ITERS = 200


def _run(workers):
    errors = []

    def wrap(fn):
        def go():
            try:
                fn()
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        return go

    barrier = threading.Barrier(len(workers))
    threads = [threading.Thread(target=wrap(lambda w=w: (barrier.wait(), w()))) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def test_same_jitted_function_concurrently():
    f = qb.jit(lambda x, y: qb.sum(x * y, axis=-1) + 1.0)

    def worker(k):
        def w():
            rng = np.random.default_rng(k)
            for i in range(ITERS):
                n = 2 + (i + k) % 3  # several signatures, traced concurrently on first use
                a, b = rng.random((3, n)), rng.random((3, n))
                np.testing.assert_allclose(f(qb.array(a), qb.array(b)).numpy(), (a * b).sum(-1) + 1.0, rtol=1e-12)

        return w

    _run([worker(k) for k in range(N_THREADS)])


def test_different_functions_and_eager_concurrently():
    fs = [qb.jit(lambda x, k=k: qb.tanh(x) * k + x @ x.T) for k in range(N_THREADS)]

    def worker(k):
        def w():
            rng = np.random.default_rng(100 + k)
            for _ in range(ITERS // 2):
                a = rng.random((4, 4))
                want = np.tanh(a) * k + a @ a.T
                np.testing.assert_allclose(fs[k](qb.array(a)).numpy(), want, rtol=1e-12)
                x = qb.array(a)
                np.testing.assert_allclose((qb.exp(x) + x[0]).numpy(), np.exp(a) + a[0], rtol=1e-12)

        return w

    _run([worker(k) for k in range(N_THREADS)])


def test_large_inputs_release_the_gil():
    f = qb.jit(lambda x: qb.sum(x * x))
    a = np.random.default_rng(7).random(1 << 16)
    want = (a * a).sum()
    x = qb.array(a)

    def w():
        for _ in range(20):
            np.testing.assert_allclose(f(x).item(), want, rtol=1e-10)

    _run([w] * 4)
