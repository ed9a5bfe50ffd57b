"""Exports of loops (`stablehlo.while`) and of their gradients verify with jaxlib, run on XLA
and IREE, and equal Quabla's JIT: cond, a while_loop with a runtime bound (and its JVP),
scan (forward, reverse, pytree carries, the gradient with its stacking forward loop and
reversed backward loop, second order), fori_loop with static bounds and its hessian, nested
loops, a vmap of a scan, and dynamic_slice / dynamic_update_slice with traced starts."""
import numpy as np

import quabla as qb

import harness as h

_check = h.check_fn


RNG = np.random.default_rng(3)
W = RNG.normal(size=(3, 3)) * 0.5
XS = RNG.normal(size=(5, 3))
H0 = RNG.normal(size=(3,))


def _rnn(w, h0, xs):
    def cell(h, x):
        h2 = qb.tanh(w @ h + x)
        return h2, qb.sum(h2 * x)

    h, ys = qb.scan(cell, h0, xs)
    return qb.sum(h * h) + qb.sum(ys)


def test_export_cond():
    f = lambda x: qb.cond(qb.sum(x) > 0.0, lambda y: qb.sin(y), lambda y: y * y, x)  # noqa: E731
    for x in (np.array([1.0, 0.5]), np.array([-1.0, 0.5])):
        assert "stablehlo.if" in _check(f, x)
        _check(qb.grad(lambda x: qb.sum(f(x))), x)


def test_export_while_loop_with_a_runtime_bound_and_its_jvp():
    def f(x, n):
        return qb.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, qb.sin(c[1]) * 1.5), (0, x))[1]

    x, n = np.array([0.3, -0.8]), np.array(4)
    assert "stablehlo.while" in _check(f, x, n)
    _check(lambda x, n: qb.jvp(lambda x: f(x, n), (x,), (qb.ones(2),)), x, n)


def test_export_scan_and_its_gradients():
    text = _check(_rnn, W, H0, XS)
    assert "stablehlo.while" in text and "stablehlo.dynamic_slice" in text
    text = _check(qb.grad(_rnn, argnums=(0, 1, 2)), W, H0, XS)
    assert text.count("stablehlo.while") == 2 and "stablehlo.dynamic_update_slice" in text
    _check(qb.grad(lambda h: qb.sum(qb.grad(_rnn)(W, h, XS) ** 2)), H0)


def test_export_scan_reverse_pytrees_and_vmap():
    def f(a, xs):
        (c, k), ys = qb.scan(lambda c, x: ((c[0] * x + c[1], c[1] + 1.0), {"y": c[0] * c[1]}), (a, qb.array(0.5)), xs, reverse=True, unroll=2)
        return c + k, ys["y"]

    a, xs = np.array([0.1, 0.2, 0.3]), RNG.normal(size=(5, 3))
    _check(f, a, xs)
    _check(qb.grad(lambda a, xs: qb.sum(f(a, xs)[1])), a, xs)
    _check(qb.vmap(_rnn, in_axes=(None, None, 0)), W, H0, RNG.normal(size=(2, 5, 3)))


def test_export_fori_loop_hessian_and_nested_loops():
    def f(x):
        return qb.sum(qb.fori_loop(0, 4, lambda i, c: qb.sin(c) * x + c * 0.5, x))

    x = np.array([0.4, -0.2])
    _check(qb.hessian(f), x)

    def g(a, xs):
        return qb.scan(lambda c, x: (qb.fori_loop(0, 3, lambda i, h: qb.tanh(h * a + x), c), c), qb.array(0.2), xs)[0]

    _check(qb.grad(g, argnums=(0, 1)), np.array(0.7), RNG.normal(size=(4,)))


def test_export_dynamic_slicing_with_traced_starts():
    def f(x, u, i):
        y = qb.dynamic_update_slice(x, u, (i, i - 1))
        return qb.dynamic_slice(y, (i + 1, 0), (2, 4))

    x, u = RNG.normal(size=(5, 4)), RNG.normal(size=(2, 3))
    for i in (0, 2, 7):
        _check(f, x, u, np.array(i))
        _check(qb.grad(lambda x, u, i: qb.sum(f(x, u, i) ** 2), argnums=(0, 1)), x, u, np.array(i))
