"""The differential check of the CUDA executor from Python (for machines without Rust/LLVM,
such as the lent H200: tests/gpu/run.sh runs it there from the installed wheel). Each case is
compiled for cuda and for the reference interpreter and compared: float64 within 1e-12 and
float32 within 1e-5, relative to the magnitude of the result (reductions and products:
the summands), integers and bools exactly. Ops the CUDA path does not lower yet raise
UnsupportedOperationError and are listed as gaps, not failures.

    python tests/gpu/diff.py            # exit 1 on any mismatch or error other than a gap
    QUABLA_GPU_DIFF_DEVICE=cpu python tests/gpu/diff.py   # the same cases on the CPU JIT (a dry run)
"""
import os
import sys

import numpy as np

import quabla as qb

rng = np.random.default_rng(0)
DEVICE = os.environ.get("QUABLA_GPU_DIFF_DEVICE", "cuda")


def arr(shape, dtype, lo=-2.0, hi=2.0):
    if np.dtype(dtype).kind == "f":
        return qb.array(rng.uniform(lo, hi, shape).astype(dtype))
    if np.dtype(dtype).kind == "b":
        return qb.array(rng.random(shape) < 0.5)
    return qb.array(rng.integers(-9, 10, shape).astype(dtype))


def cases():
    for dt in (np.float32, np.float64):
        x, y = arr((33, 70), dt), arr((33, 70), dt)
        pos = arr((33, 70), dt, 0.1, 3.0)
        m, w = arr((64, 48), dt), arr((48, 40), dt)
        b3, c3 = arr((3, 16, 24), dt), arr((3, 24, 8), dt)
        d = np.dtype(dt).name
        for name in ["exp", "log", "sin", "cos", "tanh", "sqrt", "abs", "floor", "expm1", "log1p", "erf", "sigmoid"]:
            f = getattr(qb, name, None) or getattr(qb.nn, name)
            yield f"{name} {d}", (lambda f: lambda a: f(a))(f), [pos if name in ("log", "sqrt", "log1p") else x]
        yield f"add mul div {d}", lambda a, b: (a + b) * a / (b * b + 1.0), [x, y]
        yield f"pow maximum where {d}", lambda a, b: qb.where(a > b, qb.maximum(a, b) ** 2, a - b), [x, y]
        yield f"broadcast {d}", lambda a, v: a * v[None, :] + v[None, :], [x, arr((70,), dt)]
        yield f"sum rows {d}", lambda a: qb.sum(a, axis=1), [x]
        yield f"sum columns {d}", lambda a: qb.sum(a, axis=0), [x]
        yield f"sum all {d}", lambda a: qb.sum(a), [x]
        yield f"max min prod {d}", lambda a: (qb.max(a, axis=0), qb.min(a), qb.prod(a[:4, :4], axis=1)), [x]
        yield f"mean var {d}", lambda a: (qb.mean(a), qb.var(a, axis=1)), [x]
        yield f"argmax {d}", lambda a: (qb.argmax(a, axis=1), qb.argmin(a, axis=0)), [x]
        yield f"matmul {d}", lambda a, b: a @ b, [m, w]
        yield f"matmul transposed {d}", lambda a, b: a.T @ a + b @ b.T, [m, w]
        yield f"batched matmul {d}", lambda a, b: qb.matmul(a, b), [b3, c3]
        yield f"transpose reshape {d}", lambda a: qb.reshape(a.T, (70 * 33,))[::3], [x]
        yield f"concatenate pad {d}", lambda a, b: qb.concatenate([a, b[:5]], axis=0), [x, y]
        yield f"take {d}", lambda a, i: qb.take(a, i, axis=0), [x, qb.array(rng.integers(0, 33, 17))]
        yield f"softmax {d}", lambda a: qb.nn.softmax(a, axis=-1), [x]
        yield f"grad of a loss {d}", qb.grad(lambda a, b: qb.sum(qb.tanh(a @ b) ** 2)), [m, w]
        yield f"scalar chain {d}", lambda s: qb.exp(s * s) - s, [qb.array(np.asarray(0.7, dt))]
    yield "integers", lambda a, b: (a * b + 3, a // (qb.abs(b) + 1), qb.sum(a, axis=0)), [arr((9, 7), np.int64), arr((9, 7), np.int64)]
    yield "int32 bool", lambda a, b: ((a > b) & (a != 0), qb.maximum(a, b)), [arr((9, 7), np.int32), arr((9, 7), np.int32)]
    yield "convert", lambda a: (a.astype(qb.int32), a.astype(qb.float32)), [arr((9, 7), np.float64)]
    yield "conv", lambda a, k: qb.conv_general_dilated(a, k, (1, 1), "SAME"), [arr((2, 3, 12, 12), np.float32), arr((4, 3, 3, 3), np.float32)]
    yield "max_pool", lambda a: qb.max_pool(a, (2, 2), (2, 2)), [arr((2, 3, 12, 12), np.float32)]
    yield "cumsum", lambda a: qb.cumsum(a, axis=1), [arr((9, 7), np.float64)]
    yield "fori_loop (gap?)", lambda a: qb.fori_loop(0, 3, lambda i, c: c * 2.0, a), [arr((4,), np.float64)]
    for dt in (np.float32, np.float64):
        d = np.dtype(dt).name
        x = arr((9, 7), dt)
        yield f"sort argsort {d}", lambda a: (qb.sort(a, axis=1), qb.argsort(a, axis=0), qb.sort(a, axis=0, descending=True)), [x]
        yield f"scatter add set {d}", lambda a, i, u: (a.at[i].add(u), a.at[i].set(u), a.at[i].max(u)), [x, qb.array(rng.integers(0, 9, 5)), arr((5, 7), dt)]
        yield f"dynamic slice and update {d}", lambda a, i: (qb.dynamic_slice(a, (i, 2), (3, 4)), qb.dynamic_update_slice(a, a[:2, :3] * 2.0, (i, i))), [x, qb.array(np.int32(4))]
        yield f"cond switch {d}", lambda p, k, a: (qb.cond(p, lambda v: qb.sin(v), lambda v: v * 3.0, a), qb.switch(k, [lambda v: v + 1.0, lambda v: -v, lambda v: v * v], a)), [qb.array(True), qb.array(np.int32(1)), x]
        spd = qb.array((lambda r: (r @ r.T + 7 * np.eye(7)).astype(dt))(rng.uniform(-1, 1, (7, 7))))
        yield f"cholesky solve_triangular {d}", lambda s, b: (qb.linalg.cholesky(s), qb.linalg.solve_triangular(qb.linalg.cholesky(s), b, lower=True)), [spd, arr((7, 3), dt)]
        yield f"lu qr {d}", lambda a: (qb.linalg.lu_factor(a), qb.linalg.qr(a)), [arr((7, 7), dt)]
        yield f"eigh svd {d}", lambda s, a: (qb.linalg.eigh(s), qb.linalg.svd(a, full_matrices=False)), [spd, x]


def compare(name, got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (name, got.shape, want.shape, got.dtype, want.dtype)
    if want.dtype.kind != "f":
        assert np.array_equal(got, want), name
        return 0.0
    tol = 1e-5 if want.dtype == np.float32 else 1e-12
    scale = max(1.0, float(np.max(np.abs(want))) if want.size else 1.0)
    err = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))) / scale if want.size else 0.0
    assert err <= tol, f"{name}: max error {err:.3e} relative to {scale:.3g} (tolerance {tol})"
    return err


def main():
    if DEVICE not in qb.devices() and qb._quabla.canonical_device(DEVICE) not in qb.devices():
        print(f"device {DEVICE!r} is not available here (qb.devices() = {qb.devices()}): this check needs a GPU and its driver")
        return 1
    ok, gaps, bad = 0, [], []
    for name, f, args in cases():
        try:
            low = qb.jit(f).lower(*args)
            ref = low.program.compile(interpret=True)(list(args))
            try:
                exe = low.program.compile(device=DEVICE)
            except qb.UnsupportedOperationError as e:
                gaps.append(f"{name}: {e}")
                continue
            got = exe(list(args))
            errs = [compare(name, g.numpy(), w.numpy()) for g, w in zip(got, ref)]
            ok += 1
            print(f"ok   {name}  (max rel. error {max(errs or [0.0]):.2e})")
        except Exception as e:  # noqa: BLE001 - every failure is reported
            bad.append(f"{name}: {type(e).__name__}: {e}")
            print(f"FAIL {name}: {type(e).__name__}: {e}")
    for g in gaps:
        print(f"gap  {g}")
    print(f"{ok} passed, {len(bad)} failed, {len(gaps)} skipped")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
