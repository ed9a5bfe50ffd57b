"""Exports of `qb.switch` (`stablehlo.case`) and of its derivatives verify with jaxlib, run on
XLA and IREE, and equal Quabla's JIT for every branch and clamped indices (int32 and int64);
also custom_jvp / custom_vjp gradients (exported as the rules' ops)."""
import numpy as np

import quabla as qb

import harness as h

_check = h.check_fn


def _f(i, x, w):
    branches = [lambda y: qb.sin(y) * w, lambda y: y * y + w, lambda y: qb.exp(-y) * w * w]
    return qb.sum(qb.switch(i, branches, x) ** 2)


def test_export_switch_and_its_gradients_on_every_branch():
    w = np.array([0.5, -1.5, 2.0])
    x = np.array([1.0, 0.2, 0.7])
    for i in (np.int32(0), np.int32(1), np.int32(2), np.int32(5), np.int64(-3), np.int64(1)):
        text = _check(_f, i, x, w)
        assert "stablehlo.case" in text
        text = _check(qb.grad(_f, argnums=(1, 2)), i, x, w)
        assert "stablehlo.case" in text


def test_export_custom_derivatives():
    @qb.custom_jvp
    def log1pexp(x):
        return qb.log(1.0 + qb.exp(x))

    log1pexp.defjvp(lambda p, t: (log1pexp(p[0]), t[0] * (1.0 - 1.0 / (1.0 + qb.exp(p[0])))))

    @qb.custom_vjp
    def clip_gradient(lo, hi, x):
        return x

    clip_gradient.defvjp(lambda lo, hi, x: (x, (lo, hi)), lambda res, g: (None, None, qb.clip(g, res[0], res[1])))
    xs = np.array([-2.0, 0.3, 5.0, 100.0])
    _check(qb.vmap(qb.grad(log1pexp)), xs)
    _check(qb.grad(lambda x: qb.sum(qb.sin(clip_gradient(-0.75, 0.75, x)))), xs)
