"""qb.optim.Trainer (one compiled step program with resident state), AdamW, SGD momentum /
nesterov and qb.optim.schedules: the Trainer's loss curve against the pure
``jit(value_and_grad)`` + ``opt.update`` loop step by step, the optimizers against NumPy
implementations of optax's formulas, the schedules against their formulas (and optax when it
is importable), and the Trainer's typed errors."""

import io
import math
import sys

import numpy as np
import pytest

import quabla as qb
from quabla.optim import schedules as S

# --- the README PINN ------------------------------------------------------------------------


def _u(x, w):
    return qb.sin(x * w)


_u_xx = qb.vmap(qb.grad(qb.grad(_u)), in_axes=(0, None))


def pinn_loss(w, x):
    return qb.mean((_u_xx(x, w) + math.pi**2 * qb.sin(math.pi * x)) ** 2)


def test_pinn_trains_to_pi_with_the_loop_curve():
    x, w0 = qb.linspace(0.05, 0.95, 8), qb.array(2.5)
    tr = qb.optim.Trainer(pinn_loss, w0, qb.optim.Adam(learning_rate=0.05), x)
    opt = qb.optim.Adam(learning_rate=0.05)
    w, st = w0, opt.init(w0)
    vg = qb.jit(qb.value_and_grad(pinn_loss))
    for i in range(300):
        v, g = vg(w, x)
        w, st = opt.update(w, g, st)
        assert tr.step() is None
        np.testing.assert_allclose(tr.loss().item(), v.item(), rtol=1e-12, atol=1e-300, err_msg=f"step {i}")
    assert f"{tr.params.item():.6f}" == "3.141593"
    np.testing.assert_allclose(tr.params.item(), w.item(), rtol=1e-12)
    assert tr.steps == 300 and tr.opt_state["step"] == 300 == st["step"]
    np.testing.assert_allclose(tr.opt_state["m"].item(), st["m"].item(), rtol=1e-9, atol=1e-18)


# --- a small MLP -----------------------------------------------------------------------------


def mlp_loss(p, x, y):
    h = qb.tanh(x @ p["w1"] + p["b1"])
    out = h @ p["w2"] + p["b2"]
    return qb.mean((out - y) ** 2)


def _mlp(dtype=np.float32, n=32, seed=0):
    rng = np.random.default_rng(seed)
    p = {
        "w1": qb.array((rng.normal(size=(3, 16)) * 0.5).astype(dtype)),
        "b1": qb.array(np.zeros(16, dtype)),
        "w2": qb.array((rng.normal(size=(16, 1)) * 0.5).astype(dtype)),
        "b2": qb.array(np.zeros(1, dtype)),
    }
    xs = [rng.normal(size=(n, 3)).astype(dtype) for _ in range(4)]
    ys = [np.sin(x.sum(axis=1, keepdims=True)).astype(dtype) for x in xs]
    return p, xs, ys


OPTIMIZERS = [
    lambda: qb.optim.Adam(learning_rate=0.01),
    lambda: qb.optim.AdamW(learning_rate=S.warmup_cosine_decay_schedule(0.0, 0.02, 5, 40), weight_decay=0.1),
    lambda: qb.optim.SGD(learning_rate=0.05, momentum=0.9),
    lambda: qb.optim.SGD(learning_rate=S.exponential_decay(0.05, 10, 0.5), momentum=0.9, nesterov=True),
]


def _close(a, b, dtype, scale=1e-3):
    """Equal to float rounding: the two programs fuse differently (reduction order), so
    float32 results differ in the last bits, and parameters near zero by ulps of their
    neighbours (``scale`` times rtol absolute)."""
    rtol = 2e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * scale)


@pytest.mark.parametrize("make_opt", OPTIMIZERS, ids=["adam", "adamw-warmup-cosine", "sgd-momentum", "sgd-nesterov-exp"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mlp_loss_curve_equals_the_loop(make_opt, dtype):
    p0, xs, ys = _mlp(dtype)
    x, y = qb.array(xs[0]), qb.array(ys[0])
    tr = qb.optim.Trainer(mlp_loss, p0, make_opt(), x, y)
    opt = make_opt()
    p, st = p0, opt.init(p0)
    vg = qb.jit(qb.value_and_grad(mlp_loss))
    for i in range(40):
        v, g = vg(p, x, y)
        p, st = opt.update(p, g, st)
        tr.step()
        _close(tr.loss().item(), v.item(), dtype)
    for k in p:
        assert tr.params[k].dtype == p[k].dtype
        _close(tr.params[k].numpy(), p[k].numpy(), dtype, scale=0.1)
    assert tr.opt_state["step"] == st["step"] == 40


def test_mlp_batch_replacement_equals_the_loop():
    p0, xs, ys = _mlp(np.float32)
    make = OPTIMIZERS[0]
    # Batch positions as single Tensors (the direct path), NumPy arrays (flattened in
    # Python) and one pytree argument holding both.
    tr = qb.optim.Trainer(mlp_loss, p0, make(), qb.array(xs[0]), qb.array(ys[0]), batch_argnums=(0, 1))
    tr_np = qb.optim.Trainer(mlp_loss, p0, make(), xs[0], ys[0], batch_argnums=(1, 0))

    def dict_loss(p, batch):
        return mlp_loss(p, batch["x"], batch["y"])

    tr_tree = qb.optim.Trainer(dict_loss, p0, make(), {"x": xs[0], "y": ys[0]}, batch_argnums=0)
    # Fixed x, replaced y only.
    tr_y = qb.optim.Trainer(mlp_loss, p0, make(), qb.array(xs[0]), qb.array(ys[0]), batch_argnums=1)
    opt = make()
    p, st = p0, opt.init(p0)
    q, sq = p0, opt.init(p0)
    vg = qb.jit(qb.value_and_grad(mlp_loss))
    for i in range(24):
        b = i % 4
        v, g = vg(p, qb.array(xs[b]), qb.array(ys[b]))
        p, st = opt.update(p, g, st)
        vy, gy = vg(q, qb.array(xs[0]), qb.array(ys[b]))
        q, sq = opt.update(q, gy, sq)
        tr.step(qb.array(xs[b]), qb.array(ys[b]))
        tr_np.step(ys[b], xs[b])
        tr_tree.step({"x": xs[b], "y": ys[b]})
        tr_y.step(qb.array(ys[b]))
        for t in (tr, tr_np, tr_tree):
            _close(t.loss().item(), v.item(), np.float32)
        _close(tr_y.loss().item(), vy.item(), np.float32)
    # step() without arguments reuses the last batch.
    v, _ = vg(p, qb.array(xs[3]), qb.array(ys[3]))
    tr.step()
    _close(tr.loss().item(), v.item(), np.float32)


def test_has_aux_returns_the_last_steps_aux_and_trains_as_without():
    """has_aux=True: the same curve as the plain Trainer and as value_and_grad(has_aux=True)
    + update; aux() is the last step's aux pytree, read back as Tensors."""
    p0, xs, ys = _mlp(np.float64)
    x, y = qb.array(xs[0]), qb.array(ys[0])

    def loss_aux(p, x, y):
        pred = qb.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
        err = pred - y
        return mlp_loss(p, x, y), {"max_err": qb.max(qb.abs(err)), "pred": pred}

    make = OPTIMIZERS[0]
    tr = qb.optim.Trainer(loss_aux, p0, make(), x, y, has_aux=True)
    plain = qb.optim.Trainer(mlp_loss, p0, make(), x, y)
    opt = make()
    p, st = p0, opt.init(p0)
    vg = qb.jit(qb.value_and_grad(loss_aux, has_aux=True))
    with pytest.raises(qb.errors.InvalidArgumentError, match="no step has run yet"):
        tr.aux()
    for i in range(10):
        (v, aux), g = vg(p, x, y)
        p, st = opt.update(p, g, st)
        tr.step()
        plain.step()
        _close(tr.loss().item(), v.item(), np.float64)
        _close(tr.loss().item(), plain.loss().item(), np.float64)
        got = tr.aux()
        assert sorted(got) == ["max_err", "pred"]
        _close(got["max_err"].item(), aux["max_err"].item(), np.float64)
        _close(got["pred"].numpy(), aux["pred"].numpy(), np.float64, scale=0.1)
    with pytest.raises(qb.errors.InvalidArgumentError, match="without has_aux"):
        plain.aux()
    with pytest.raises(qb.errors.ArgumentTypeError, match="has_aux must be a bool"):
        qb.optim.Trainer(loss_aux, p0, make(), x, y, has_aux=1)
    with pytest.raises(qb.errors.QuablaError, match="pair"):
        qb.optim.Trainer(mlp_loss, p0, make(), x, y, has_aux=True)


def test_no_argument_step_runs_no_python():
    tr = qb.optim.Trainer(pinn_loss, qb.array(2.5), qb.optim.Adam(0.05), qb.linspace(0.05, 0.95, 8))
    tr.step()
    calls = []

    def prof(frame, event, arg):
        if event == "call":
            calls.append(frame.f_code.co_name)

    sys.setprofile(prof)
    try:
        tr.step()
        tr.step()
    finally:
        sys.setprofile(None)
    assert calls == []
    # Readback of the parameters returns the resident buffers themselves, not copies.
    a, b = tr.params, tr.params
    assert a._shares_storage(b)


def test_fit_with_batches_and_progress(monkeypatch, capsys):
    p0, xs, ys = _mlp(np.float32)
    tr = qb.optim.Trainer(mlp_loss, p0, qb.optim.Adam(0.01), xs[0], ys[0], batch_argnums=(0, 1))
    ref = qb.optim.Trainer(mlp_loss, p0, qb.optim.Adam(0.01), xs[0], ys[0], batch_argnums=(0, 1))
    batches = [(xs[i % 4], ys[i % 4]) for i in range(10)]
    assert tr.fit(batches=batches, progress=False) is None
    for b in batches:
        ref.step(*b)
    assert tr.steps == 10
    assert tr.loss().item() == ref.loss().item()
    tr.fit(5, batches=iter(batches), progress=False)  # stops after 5 of the 10
    assert tr.steps == 15
    # One batch position: the elements are the argument itself (here a pytree) or a 1-tuple.
    one = qb.optim.Trainer(lambda p, b: mlp_loss(p, *b), p0, qb.optim.Adam(0.01), (xs[0], ys[0]), batch_argnums=0)
    one_ref = qb.optim.Trainer(lambda p, b: mlp_loss(p, *b), p0, qb.optim.Adam(0.01), (xs[0], ys[0]), batch_argnums=0)
    one.fit(batches=[(xs[1], ys[1]), ((xs[2], ys[2]),)], progress=False)
    one_ref.step((xs[1], ys[1]))
    one_ref.step((xs[2], ys[2]))
    assert one.steps == 2 and one.loss().item() == one_ref.loss().item()
    # Without tqdm: a plain line on stderr.
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    tr.fit(3)
    err = capsys.readouterr().err
    assert "step 3/3" in err and "loss" in err and "steps/s" in err
    assert tr.steps == 18


def test_fit_with_tqdm(capsys):
    pytest.importorskip("tqdm")
    tr = qb.optim.Trainer(pinn_loss, qb.array(2.5), qb.optim.Adam(0.05), qb.linspace(0.05, 0.95, 8))
    tr.fit(300)
    err = capsys.readouterr().err
    assert "300/300" in err and "loss=" in err and "step/s" in err
    assert f"{tr.params.item():.6f}" == "3.141593"


def test_params_and_opt_state_setters():
    p0, xs, ys = _mlp(np.float64)
    tr = qb.optim.Trainer(mlp_loss, p0, qb.optim.Adam(0.01), xs[0], ys[0])
    tr.fit(5, progress=False)
    saved_p, saved_s = tr.params, tr.opt_state
    tr.fit(5, progress=False)
    after = tr.loss().item()
    tr.params, tr.opt_state = saved_p, saved_s
    assert tr.opt_state["step"] == 5
    tr.fit(5, progress=False)
    assert tr.loss().item() == after
    with pytest.raises(qb.errors.InvalidArgumentError, match="structure"):
        tr.params = {"w1": saved_p["w1"]}
    with pytest.raises(qb.errors.ShapeError, match=r"params\['b1'\]"):
        tr.params = dict(saved_p, b1=qb.zeros(3, dtype=qb.float64))
    with pytest.raises(qb.errors.DTypeError):
        tr.params = dict(saved_p, b1=qb.zeros(16, dtype=qb.float32))


def test_pinn_example_with_trainer():
    import os
    import subprocess

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    r = subprocess.run([sys.executable, os.path.join(root, "examples", "pinn.py"), "--trainer"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("w = 3.141593"), r.stdout


# --- errors ----------------------------------------------------------------------------------


def test_errors():
    x = qb.linspace(0.05, 0.95, 8)
    tr = qb.optim.Trainer(pinn_loss, qb.array(2.5), qb.optim.Adam(0.05), x, batch_argnums=0)
    with pytest.raises(qb.errors.InvalidArgumentError, match="no step"):
        tr.loss()
    with pytest.raises(qb.errors.ShapeError, match=r"data\[0\].*tensor<9xf64>"):
        tr.step(qb.linspace(0.0, 1.0, 9))
    with pytest.raises(qb.errors.DTypeError, match=r"data\[0\]"):
        tr.step(qb.linspace(0.0, 1.0, 8, dtype=qb.float32))
    with pytest.raises(qb.errors.InvalidArgumentError, match="batch argument"):
        tr.step(x, x)
    with pytest.raises(qb.errors.ArgumentTypeError):
        tr.step("x")
    assert tr.steps == 0  # failed steps change nothing
    tr.step(x)
    assert tr.steps == 1
    with pytest.raises(qb.errors.ShapeError, match="scalar"):
        qb.optim.Trainer(lambda w, x: (w * x) ** 2, qb.array(1.0), qb.optim.SGD(0.1), x)
    with pytest.raises(qb.errors.UnsupportedOperationError, match="nosuch"):
        qb.optim.Trainer(pinn_loss, qb.array(2.5), qb.optim.Adam(0.05), x, device="nosuch")
    if "xla" in qb.devices():
        with pytest.raises(qb.errors.UnsupportedOperationError, match="Python"):
            qb.optim.Trainer(pinn_loss, qb.array(2.5), qb.optim.Adam(0.05), x, device="xla")
    with pytest.raises(qb.errors.InvalidArgumentError, match="out of range"):
        qb.optim.Trainer(pinn_loss, qb.array(2.5), qb.optim.Adam(0.05), x, batch_argnums=1)
    with pytest.raises(qb.errors.DTypeError, match="float"):
        qb.optim.Trainer(pinn_loss, qb.array(2), qb.optim.Adam(0.05), x)
    with pytest.raises(qb.errors.ArgumentTypeError, match="optimizer"):
        qb.optim.Trainer(pinn_loss, qb.array(2.5), "adam", x)
    tr2 = qb.optim.Trainer(lambda p, b: pinn_loss(p, b["x"]), qb.array(2.5), qb.optim.Adam(0.05), {"x": x}, batch_argnums=0)
    with pytest.raises(qb.errors.InvalidArgumentError, match="structure"):
        tr2.step({"y": x})


# --- optimizers against NumPy ----------------------------------------------------------------


def _np_adamw(p, grads, lr, b1, b2, eps, wd, mask=None):
    """optax.adamw's formula in NumPy float64 over a list of steps' gradients."""
    p = {k: v.copy() for k, v in p.items()}
    m = {k: np.zeros_like(v) for k, v in p.items()}
    v = {k: np.zeros_like(x) for k, x in p.items()}
    for t, g in enumerate(grads, start=1):
        rate = lr(t - 1) if callable(lr) else lr
        for k in p:
            m[k] = b1 * m[k] + (1 - b1) * g[k]
            v[k] = b2 * v[k] + (1 - b2) * g[k] ** 2
            u = (m[k] / (1 - b1**t)) / (np.sqrt(v[k] / (1 - b2**t)) + eps)
            if mask is None or mask[k]:
                u = u + wd * p[k]
            p[k] = p[k] - rate * u
    return p


def _np_sgd(p, grads, lr, mu, nesterov):
    p = {k: v.copy() for k, v in p.items()}
    tr = {k: np.zeros_like(v) for k, v in p.items()}
    for t, g in enumerate(grads):
        rate = lr(t) if callable(lr) else lr
        for k in p:
            tr[k] = g[k] + mu * tr[k]
            u = g[k] + mu * tr[k] if nesterov else tr[k]
            p[k] = p[k] - rate * u
    return p


def _grads(rng, shapes, n):
    return [{k: rng.normal(size=s) for k, s in shapes.items()} for _ in range(n)]


@pytest.mark.parametrize("host", [False, True], ids=["compiled", "numpy-leaves"])
def test_adamw_and_sgd_equal_numpy(host):
    rng = np.random.default_rng(3)
    shapes = {"w": (4, 3), "b": (3,), "s": ()}
    p0 = {k: rng.normal(size=s) for k, s in shapes.items()}
    grads = _grads(rng, shapes, 6)
    conv = (lambda t: t) if host else (lambda t: qb.tree.map(qb.array, t))
    sched = S.cosine_decay_schedule(0.05, 4, alpha=0.1)
    cases = [
        (qb.optim.AdamW(learning_rate=0.01, b1=0.8, b2=0.95, eps=1e-6, weight_decay=0.3),
         _np_adamw(p0, grads, 0.01, 0.8, 0.95, 1e-6, 0.3)),
        (qb.optim.AdamW(learning_rate=sched, weight_decay=0.05, mask={"w": True, "b": False, "s": True}),
         _np_adamw(p0, grads, sched, 0.9, 0.999, 1e-8, 0.05, {"w": True, "b": False, "s": True})),
        (qb.optim.AdamW(learning_rate=0.01, weight_decay=0.05, mask=lambda p: {k: k != "s" for k in p}),
         _np_adamw(p0, grads, 0.01, 0.9, 0.999, 1e-8, 0.05, {"w": True, "b": True, "s": False})),
        (qb.optim.SGD(learning_rate=0.1, momentum=0.9), _np_sgd(p0, grads, 0.1, 0.9, False)),
        (qb.optim.SGD(learning_rate=sched, momentum=0.5, nesterov=True), _np_sgd(p0, grads, sched, 0.5, True)),
        (qb.optim.SGD(learning_rate=0.1), _np_sgd(p0, grads, 0.1, 0.0, False)),
    ]
    for opt, ref in cases:
        p, st = conv(p0), opt.init(conv(p0))
        for g in grads:
            p, st = opt.update(p, conv(g), st)
        assert st["step"] == len(grads)
        for k in shapes:
            np.testing.assert_allclose(np.asarray(p[k]), ref[k], rtol=1e-13, atol=1e-15, err_msg=f"{opt} {k}")


def test_float32_updates_follow_optax_float32_counts():
    # float32 parameters: the count, schedule and bias corrections are float32 (as optax's
    # int32 count with float32 arithmetic); the compiled and NumPy paths agree.
    rng = np.random.default_rng(4)
    p0 = {"w": rng.normal(size=(8,)).astype(np.float32)}
    grads = [{"w": rng.normal(size=(8,)).astype(np.float32)} for _ in range(5)]
    opt = qb.optim.AdamW(learning_rate=S.linear_schedule(0.1, 0.01, 5), weight_decay=0.01)
    qp, qs = qb.tree.map(qb.array, p0), opt.init(p0)
    hp, hs = p0, opt.init(p0)
    for g in grads:
        qp, qs = opt.update(qp, qb.tree.map(qb.array, g), qs)
        hp, hs = opt.update(hp, g, hs)
    assert qp["w"].dtype == qb.float32
    np.testing.assert_allclose(qp["w"].numpy(), hp["w"].numpy(), rtol=2e-6, atol=1e-7)
    ref = _np_adamw({"w": p0["w"].astype(np.float64)}, [{"w": g["w"].astype(np.float64)} for g in grads],
                    S.linear_schedule(0.1, 0.01, 5), 0.9, 0.999, 1e-8, 0.01)
    np.testing.assert_allclose(qp["w"].numpy(), ref["w"], rtol=1e-5, atol=1e-6)


# --- schedules ---------------------------------------------------------------------------------


def _formulas():
    """(schedule, independent formula of the count) pairs."""

    def poly(c, init, end, power, steps, begin=0):
        k = min(max(c - begin, 0), steps)
        return (init - end) * (1 - k / steps) ** power + end

    def cosine(c, init, steps, alpha=0.0, exponent=1.0):
        k = min(c, steps)
        return init * ((1 - alpha) * (0.5 * (1 + math.cos(math.pi * k / steps))) ** exponent + alpha)

    def warmup_cos(c, init, peak, warm, decay, end=0.0):
        if c < warm:
            return poly(c, init, peak, 1, warm)
        return cosine(c - warm, peak, decay - warm, alpha=end / peak)

    def expo(c, init, steps, rate, begin=0, staircase=False, end=None):
        d = c - begin
        if d <= 0:
            v = init
        else:
            v = init * rate ** (math.floor(d / steps) if staircase else d / steps)
        if end is not None:
            v = max(v, end) if rate < 1 else min(v, end)
        return v

    def piecewise(c, init, bs):
        v = init
        for b in sorted(bs):
            if c >= b:
                v *= bs[b]
        return v

    return [
        ("constant", S.constant_schedule(0.3), lambda c: 0.3),
        ("linear", S.linear_schedule(1.0, 0.1, 10, transition_begin=3), lambda c: poly(c, 1.0, 0.1, 1, 10, 3)),
        ("polynomial", S.polynomial_schedule(0.5, 0.0, 2.0, 8), lambda c: poly(c, 0.5, 0.0, 2.0, 8)),
        ("cosine", S.cosine_decay_schedule(0.2, 12, alpha=0.05, exponent=2.0), lambda c: cosine(c, 0.2, 12, 0.05, 2.0)),
        ("warmup_cosine", S.warmup_cosine_decay_schedule(0.01, 1.0, 5, 20, end_value=0.1),
         lambda c: warmup_cos(c, 0.01, 1.0, 5, 20, 0.1)),
        ("exponential", S.exponential_decay(1.0, 4, 0.5, transition_begin=2), lambda c: expo(c, 1.0, 4, 0.5, 2)),
        ("exponential_staircase", S.exponential_decay(2.0, 3, 0.7, staircase=True, end_value=0.8),
         lambda c: expo(c, 2.0, 3, 0.7, 0, True, 0.8)),
        ("exponential_growth", S.exponential_decay(1.0, 5, 1.5, end_value=3.0), lambda c: expo(c, 1.0, 5, 1.5, 0, False, 3.0)),
        ("piecewise", S.piecewise_constant_schedule(0.1, {4: 0.5, 10: 0.1, 7: 2.0}), lambda c: piecewise(c, 0.1, {4: 0.5, 10: 0.1, 7: 2.0})),
    ]


COUNTS = list(range(0, 26))


@pytest.mark.parametrize("name,sched,formula", _formulas(), ids=[f[0] for f in _formulas()])
def test_schedules_equal_their_formulas_on_host_and_traced(name, sched, formula):
    want = np.array([formula(c) for c in COUNTS])
    host = np.array([sched(c) for c in COUNTS])
    assert all(type(sched(c)) is float for c in (0, np.int64(3)))
    np.testing.assert_allclose(host, want, rtol=1e-14, atol=1e-15)
    f = qb.jit(sched)
    for dt, rtol in ((qb.float64, 1e-14), (qb.float32, 2e-6)):
        traced = np.array([f(qb.array(c, dtype=dt)).item() for c in COUNTS])
        np.testing.assert_allclose(traced, want, rtol=rtol, atol=rtol * 1e-2, err_msg=str(dt))
    # The whole range at once (an array of counts), eagerly.
    np.testing.assert_allclose(np.asarray(sched(qb.array(np.array(COUNTS, dtype=np.float64)))) * np.ones(len(COUNTS)), want, rtol=1e-14, atol=1e-15)


def test_schedule_argument_errors():
    with pytest.raises(qb.errors.InvalidArgumentError):
        S.cosine_decay_schedule(0.1, 0)
    with pytest.raises(qb.errors.InvalidArgumentError):
        S.piecewise_constant_schedule(0.1, {3: -1.0})
    assert S.linear_schedule(0.4, 0.0, 0)(5) == 0.4  # optax: a constant schedule
    assert S.exponential_decay(0.4, 0, 0.5)(5) == 0.4
    with pytest.raises(qb.errors.ArgumentTypeError):
        qb.optim.Adam(learning_rate="fast")


def test_schedules_equal_optax():
    optax = pytest.importorskip("optax")
    ours = {n: s for n, s, _ in _formulas()}
    theirs = {
        "constant": optax.constant_schedule(0.3),
        "linear": optax.linear_schedule(1.0, 0.1, 10, transition_begin=3),
        "polynomial": optax.polynomial_schedule(0.5, 0.0, 2.0, 8),
        "cosine": optax.cosine_decay_schedule(0.2, 12, alpha=0.05, exponent=2.0),
        "warmup_cosine": optax.warmup_cosine_decay_schedule(0.01, 1.0, 5, 20, end_value=0.1),
        "exponential": optax.exponential_decay(1.0, 4, 0.5, transition_begin=2),
        "exponential_staircase": optax.exponential_decay(2.0, 3, 0.7, staircase=True, end_value=0.8),
        "exponential_growth": optax.exponential_decay(1.0, 5, 1.5, end_value=3.0),
        "piecewise": optax.piecewise_constant_schedule(0.1, {4: 0.5, 10: 0.1, 7: 2.0}),
    }
    for n, s in theirs.items():
        np.testing.assert_allclose([ours[n](c) for c in COUNTS], [float(s(c)) for c in COUNTS], rtol=1e-6, err_msg=n)


# --- the docstring examples of quabla.optim (tests/python/test_docs.py covers other modules) --

def _doctests():
    import doctest

    from quabla import _optimizers, _schedules, _trainer

    return [t for m in (_optimizers, _schedules, _trainer) for t in doctest.DocTestFinder().find(m) if t.examples]


@pytest.mark.parametrize("test", _doctests(), ids=lambda t: t.name)
def test_docstring_example(test):
    import builtins
    import doctest

    test.globs = {"qb": qb, "round": builtins.round}
    out = []
    r = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    r.run(test, out=out.append)
    assert r.failures == 0, "".join(out)


# --- on the mlx executor ---------------------------------------------------------------------

needs_mlx = pytest.mark.skipif("mlx" not in qb.devices(), reason="mlx is not installed (pip install 'mlx[cpu]')")


@needs_mlx
def test_pinn_on_mlx_trains_to_pi_with_the_loop_curve():
    """The step program runs on MLX with its state resident there (MLX arrays fed back each
    step); the loss curve is the CPU loop's to float64 rounding of MLX's kernels."""
    x, w0 = qb.linspace(0.05, 0.95, 8), qb.array(2.5)
    tr = qb.optim.Trainer(pinn_loss, w0, qb.optim.Adam(learning_rate=0.05), x, device="mlx")
    opt = qb.optim.Adam(learning_rate=0.05)
    w, st = w0, opt.init(w0)
    vg = qb.jit(qb.value_and_grad(pinn_loss))
    from quabla import _mlx

    for i in range(300):
        v, g = vg(w, x)
        w, st = opt.update(w, g, st)
        before = _mlx.stats["host_inputs"]
        tr.step()
        # The parameters, the Adam state and the fixed data live in MLX: no step copies
        # anything from the host.
        assert _mlx.stats["host_inputs"] == before, f"step {i} copied host inputs into MLX"
        np.testing.assert_allclose(tr.loss().item(), v.item(), rtol=1e-6, atol=1e-12, err_msg=f"step {i}")
    assert f"{tr.params.item():.6f}" == "3.141593"
    np.testing.assert_allclose(tr.params.item(), w.item(), rtol=1e-12)


@needs_mlx
@pytest.mark.parametrize("make_opt", [OPTIMIZERS[0], OPTIMIZERS[3]], ids=["adam", "sgd-nesterov-exp"])
def test_mlp_on_mlx_with_batch_replacement_equals_the_loop(make_opt):
    p0, xs, ys = _mlp(np.float32)
    tr = qb.optim.Trainer(mlp_loss, p0, make_opt(), qb.array(xs[0]), qb.array(ys[0]), batch_argnums=(0, 1), device="mlx")
    fixed = qb.optim.Trainer(mlp_loss, p0, make_opt(), qb.array(xs[0]), qb.array(ys[0]), device="mlx")
    opt = make_opt()
    p, st = p0, opt.init(p0)
    q, sq = p0, opt.init(p0)
    vg = qb.jit(qb.value_and_grad(mlp_loss))
    for i in range(24):
        b = i % 4
        v, g = vg(p, qb.array(xs[b]), qb.array(ys[b]))
        p, st = opt.update(p, g, st)
        vq, gq = vg(q, qb.array(xs[0]), qb.array(ys[0]))
        q, sq = opt.update(q, gq, sq)
        tr.step(qb.array(xs[b]), qb.array(ys[b]))
        fixed.step()
        np.testing.assert_allclose(tr.loss().item(), v.item(), rtol=1e-5, err_msg=f"step {i}")
        np.testing.assert_allclose(fixed.loss().item(), vq.item(), rtol=1e-5, err_msg=f"step {i}")
    for k in p:
        np.testing.assert_allclose(tr.params[k].numpy(), p[k].numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(fixed.params[k].numpy(), q[k].numpy(), rtol=1e-5, atol=1e-6)
