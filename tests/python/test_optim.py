"""quabla.optim: Adam and SGD on pytrees against their formulas (and optax's Adam formula),
dtype preservation, None gradients, and a small training loop."""

import math

import numpy as np
import pytest

import quabla as qb


def test_adam_matches_formula_on_pytree():
    rng = np.random.default_rng(0)
    p = {"w": rng.normal(size=(3, 2)), "b": [rng.normal(size=2), rng.normal()]}
    opt = qb.optim.Adam(learning_rate=0.01, b1=0.8, b2=0.99, eps=1e-6)
    qp = qb.tree.map(qb.array, p)
    state = opt.init(qp)
    m = qb.tree.map(np.zeros_like, p)
    v = qb.tree.map(np.zeros_like, p)
    ref = p
    for t in range(1, 6):
        g = qb.tree.map(lambda a: rng.normal(size=np.shape(a)), p)
        qp, state = opt.update(qp, qb.tree.map(qb.array, g), state)
        m = qb.tree.map(lambda m, g: 0.8 * m + 0.2 * g, m, g)
        v = qb.tree.map(lambda v, g: 0.99 * v + 0.01 * g * g, v, g)
        ref = qb.tree.map(
            lambda r, m, v: r - 0.01 * (m / (1 - 0.8**t)) / (np.sqrt(v / (1 - 0.99**t)) + 1e-6), ref, m, v
        )
        for a, b in zip(qb.tree.flatten(qp)[0], qb.tree.flatten(ref)[0]):
            np.testing.assert_allclose(a.numpy(), b, rtol=1e-14, atol=1e-15)
    assert state["step"] == 5


def test_sgd_and_momentum():
    opt = qb.optim.SGD(learning_rate=0.1)
    p, s = opt.update(qb.array([1.0, 2.0]), qb.array([1.0, -1.0]), opt.init(qb.array([1.0, 2.0])))
    np.testing.assert_allclose(p.numpy(), [0.9, 2.1])
    opt = qb.optim.SGD(learning_rate=0.1, momentum=0.5)
    p = qb.array([1.0])
    s = opt.init(p)
    p, s = opt.update(p, qb.array([1.0]), s)
    p, s = opt.update(p, qb.array([1.0]), s)
    np.testing.assert_allclose(p.numpy(), [1.0 - 0.1 - 0.15])


def test_dtypes_and_none_gradients():
    opt = qb.optim.Adam(0.1)
    p = {"w": qb.array([1.0, 2.0], dtype=qb.float32), "mask": qb.array([True, False])}
    s = opt.init(p)
    g = qb.grad(lambda p: qb.sum(qb.where(p["mask"], p["w"] ** 2, 0.0)))(p)
    assert g["mask"] is None
    p2, s = opt.update(p, g, s)
    assert p2["w"].dtype == qb.float32 and p2["mask"] is p["mask"]
    np.testing.assert_allclose(p2["w"].numpy(), [0.9, 2.0], rtol=1e-6)


def test_structure_mismatch():
    opt = qb.optim.SGD(0.1)
    with pytest.raises(ValueError, match="different structures"):
        opt.update({"a": qb.array(1.0)}, {"b": qb.array(1.0)}, opt.init({"a": qb.array(1.0)}))


def test_training_loop_converges():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(32, 2))
    w_true = np.array([1.5, -0.5])
    y = x @ w_true + 0.3

    def loss(p, x, y):
        return qb.mean((x @ p["w"] + p["b"] - y) ** 2)

    p = {"w": qb.zeros(2), "b": qb.array(0.0)}
    opt = qb.optim.Adam(learning_rate=0.1)
    s = opt.init(p)
    step = qb.jit(qb.value_and_grad(loss))
    for _ in range(300):
        v, g = step(p, qb.array(x), qb.array(y))
        p, s = opt.update(p, g, s)
    assert v.item() < 1e-6
    np.testing.assert_allclose(p["w"].numpy(), w_true, atol=1e-3)
    assert math.isclose(p["b"].item(), 0.3, abs_tol=1e-3)


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_compiled_updates_equal_the_host_path(momentum):
    # Float Tensors take the compiled update (one program per signature, reused across
    # steps); NumPy leaves take the host path. Both compute the same formula in float32.
    rng = np.random.default_rng(2)
    shapes = {"w": (64, 32), "b": (32,), "s": ()}
    p0 = {k: rng.normal(size=s).astype(np.float32) for k, s in shapes.items()}
    for opt in (qb.optim.Adam(learning_rate=0.01), qb.optim.SGD(learning_rate=0.1, momentum=momentum)):
        qp, hp = qb.tree.map(qb.array, p0), p0
        qs, hs = opt.init(qp), opt.init(hp)
        for _ in range(3):
            g = {k: rng.normal(size=s).astype(np.float32) for k, s in shapes.items()}
            qp, qs = opt.update(qp, qb.tree.map(qb.array, g), qs)
            hp, hs = opt.update(hp, g, hs)
        assert opt._step is not None  # the compiled path ran
        for k in shapes:
            assert qp[k].dtype == qb.float32
            np.testing.assert_allclose(qp[k].numpy(), hp[k].numpy(), rtol=2e-6, atol=1e-7, err_msg=f"{opt} {k}")


@pytest.mark.parametrize("opt", [qb.optim.Adam(learning_rate=0.01), qb.optim.AdamW(learning_rate=0.01, weight_decay=0.1, mask={"w": True, "v": False, "b": True, "s": False})])
def test_large_leaves_update_in_programs_of_their_own(opt):
    # Parameters of 2^16 elements or more get a compiled update each (no outlining of a
    # whole model's update); the small ones share one. The result is the host path's.
    from quabla._optimizers import _groups

    rng = np.random.default_rng(3)
    shapes = {"w": (300, 256), "v": (1 << 16,), "b": (32,), "s": ()}
    p0 = {k: rng.normal(size=s).astype(np.float32) for k, s in shapes.items()}
    qp = qb.tree.map(qb.array, p0)
    leaves = qb.tree.leaves(qp)
    assert sorted(len(g) for g in _groups(leaves)) == [1, 1, 2]
    qs, hs, hp = opt.init(qp), opt.init(p0), p0
    for _ in range(2):
        g = {k: rng.normal(size=s).astype(np.float32) for k, s in shapes.items()}
        qp, qs = opt.update(qp, qb.tree.map(qb.array, g), qs)
        hp, hs = opt.update(hp, g, hs)
    for k in shapes:
        for a, b in ((qp[k], hp[k]), (qs["m"][k], hs["m"][k]), (qs["v"][k], hs["v"][k])):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=2e-6, atol=1e-7, err_msg=f"{opt} {k}")
