"""Exports of convolutions (`stablehlo.convolution`), pooling (`stablehlo.reduce_window`; the
variadic `reduce_window` that selects and the `stablehlo.scatter` behind the max-pool
gradient) and of their gradients and vmaps verify with jaxlib, run on XLA and IREE, and equal
Quabla's JIT (f64 within 1e-12)."""
import numpy as np

import quabla as qb

import harness as h

_check = h.check_fn


RNG = np.random.default_rng(0)
X2 = RNG.normal(size=(2, 4, 7, 6))
W2 = RNG.normal(size=(6, 2, 3, 2))


def _conv2d(x, w):
    return qb.conv_general_dilated(x, w, (2, 1), ((1, 1), (0, 1)), rhs_dilation=(1, 2), feature_group_count=2)


def test_export_conv_and_its_gradients():
    text = _check(_conv2d, X2, W2)
    assert "stablehlo.convolution" in text
    f = lambda x, w: qb.sum(qb.tanh(_conv2d(x, w)))  # noqa: E731
    text = _check(qb.grad(f, argnums=(0, 1)), X2, W2)
    assert text.count("stablehlo.convolution") >= 3


def test_export_conv_layouts_and_groups():
    x = RNG.normal(size=(4, 6, 5, 3))
    w = RNG.normal(size=(2, 2, 3, 4))
    _check(lambda x, w: qb.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")), x, w)
    xb = RNG.normal(size=(4, 3, 6))
    wb = RNG.normal(size=(4, 3, 2))
    _check(qb.grad(lambda x, w: qb.sum(qb.conv_general_dilated(x, w, (1,), ((0, 1),), lhs_dilation=(2,), batch_group_count=2) ** 2), argnums=(0, 1)), xb, wb)
    x3 = RNG.normal(size=(1, 2, 4, 5, 4)).astype(np.float32)
    w3 = RNG.normal(size=(3, 2, 2, 2, 2)).astype(np.float32)
    _check(lambda x, w: qb.conv(x, w, (1, 2, 1), "VALID"), x3, w3)


def test_export_vmap_of_conv():
    xs = RNG.normal(size=(3, 1, 2, 8))
    ws = RNG.normal(size=(3, 4, 2, 3))
    _check(qb.vmap(lambda x, w: qb.conv(x, w, (1,), "SAME")), xs, ws)


def test_export_pools_and_their_derivatives():
    x = RNG.normal(size=(2, 6, 7, 3))
    pool = lambda a: qb.max_pool(a, (2, 3), strides=(2, 2), padding="SAME")  # noqa: E731
    text = _check(pool, x)
    assert "stablehlo.reduce_window" in text
    text = _check(qb.grad(lambda a: qb.sum(pool(a) ** 2)), x)
    assert "stablehlo.scatter" in text
    v = RNG.normal(size=x.shape)
    _check(lambda a, t: qb.jvp(pool, (a,), (t,))[1], x, v)
    _check(qb.grad(lambda a: qb.sum(qb.avg_pool(a, (3, 3), padding="SAME", count_include_pad=False) ** 2)), x)
    _check(lambda a: qb.cumsum(a, axis=1), x)
    _check(qb.grad(lambda a: qb.sum(qb.sin(qb.cummin(a, axis=2, reverse=True)))), x)
