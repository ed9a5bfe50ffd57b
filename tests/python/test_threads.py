"""Thread safety: Python threads calling the same jitted function (including its first,
tracing call), different jitted functions, and eager ops concurrently get correct results;
compiled code on one and two OpenMP threads (QUABLA_NUM_THREADS) matches NumPy and itself."""

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


_PARALLEL_PROGRAM = r"""
import numpy as np, quabla as qb
rng = np.random.default_rng(5)
a = rng.standard_normal((300, 520)).astype(np.float32)
b = rng.standard_normal((520, 270)).astype(np.float32)
x = rng.standard_normal((1100, 1000)).astype(np.float32)
mm = qb.jit(lambda a, b: a @ b)(qb.array(a), qb.array(b)).numpy()
np.testing.assert_allclose(mm, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)
ew, rows = qb.jit(lambda x: (qb.tanh(2 * x + 1) * qb.exp(-x), qb.sum(qb.exp(x) * x, axis=1)))(qb.array(x))
np.testing.assert_allclose(ew.numpy(), np.tanh(2 * x + 1) * np.exp(-x), rtol=2e-6, atol=1e-6)
np.testing.assert_allclose(rows.numpy(), (np.exp(x.astype(np.float64)) * x).sum(1), rtol=1e-4, atol=1e-3)
np.save(OUT, np.concatenate([mm.ravel(), ew.numpy().ravel()]))
"""


def test_large_programs_on_one_and_two_compiled_threads(tmp_path):
    # QUABLA_NUM_THREADS is read once per process: one subprocess per thread count. Large
    # matmuls and loops run as OpenMP loops on two threads; every result matches NumPy and
    # the matmul and elementwise results are the same bytes on one and two threads.
    import os
    import subprocess
    import sys

    outs = []
    for n in ("1", "2"):
        out = tmp_path / f"t{n}.npy"
        env = dict(os.environ, QUABLA_NUM_THREADS=n, QUABLA_CACHE="0")
        r = subprocess.run([sys.executable, "-c", f"OUT = {str(out)!r}\n" + _PARALLEL_PROGRAM], env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        outs.append(np.load(out))
    assert outs[0].tobytes() == outs[1].tobytes()


def test_parallel_programs_are_valid_ir_after_every_pass(tmp_path):
    # QUABLA_VERIFY_EACH verifies the IR after every upstream pass: the OpenMP lowering's
    # per-thread scopes must stay valid between passes (they did not while the control flow
    # was lowered before the memrefs), on loops, row reductions fused through their keepdims
    # reshapes and the runtime product.
    import os
    import subprocess
    import sys

    code = f"OUT = {str(tmp_path / 'v.npy')!r}\n" + _PARALLEL_PROGRAM + r'''
w = rng.standard_normal((256, 1024)).astype(np.float32)
s = rng.standard_normal((256, 1024)).astype(np.float32)
loss, g = qb.jit(qb.value_and_grad(lambda s, w: qb.sum(qb.nn.softmax(s, axis=-1) * w)))(qb.array(s), qb.array(w))
p = np.exp(s - s.max(1, keepdims=True)); p /= p.sum(1, keepdims=True)
np.testing.assert_allclose(g.numpy(), p * (w - (p * w).sum(1, keepdims=True)), rtol=1e-4, atol=1e-5)
'''
    env = dict(os.environ, QUABLA_NUM_THREADS="2", QUABLA_VERIFY_EACH="1", QUABLA_CACHE="0")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr


def test_bad_thread_count_warns_and_uses_the_default():
    import os
    import subprocess
    import sys

    env = dict(os.environ, QUABLA_NUM_THREADS="zero")
    code = "import quabla as qb, numpy as np; print(qb.jit(lambda x: x @ x)(qb.array(np.eye(300, dtype=np.float32))).numpy().trace())"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "QUABLA_NUM_THREADS" in r.stderr and float(r.stdout) == 300.0
