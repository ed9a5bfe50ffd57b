"""Exports of `qb.cond` (`stablehlo.if`) and of its derivatives verify with jaxlib, run on XLA
and IREE, and equal Quabla's JIT, for both branches; also a vmap with a batched predicate
(both branches and a select) and a gradient through `qb.stop_gradient`."""
import numpy as np

import quabla as qb

import harness as h

_check = h.check_fn


def _f(x, w):
    return qb.sum(qb.cond(qb.sum(x * w) > 0.0, lambda y: qb.sin(y) * w, lambda y: y * y + w, x) ** 2)


def test_export_cond_and_its_gradients_on_both_branches():
    w = np.array([0.5, -1.5, 2.0])
    for x in (np.array([1.0, 0.2, 0.7]), np.array([-1.0, 0.2, -0.7])):
        text = _check(_f, x, w)
        assert "stablehlo.if" in text
        text = _check(qb.grad(_f, argnums=(0, 1)), x, w)
        assert "stablehlo.if" in text
        _check(qb.grad(lambda x, w: qb.sum(qb.grad(_f)(x, w) ** 2)), x, w)


def test_export_vmap_of_cond_with_a_batched_predicate_and_stop_gradient():
    xs = np.array([[1.0, 0.2], [-1.0, 0.5], [0.3, -2.0]], dtype=np.float32)
    f = qb.vmap(lambda x: qb.cond(x[0] > 0.0, lambda y: qb.exp(y), lambda y: -y, x))
    text = _check(f, xs)
    assert "stablehlo.select" in text
    _check(qb.grad(lambda x: qb.sum(x * qb.stop_gradient(qb.sin(x)))), xs)
