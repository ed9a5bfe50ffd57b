"""``qb.nn``: the activation and normalisation helpers of ``jax.nn``, with its names and
signatures, built from Quabla ops (differentiable, batchable, traceable).

Owns: relu, relu6, gelu (exact and tanh), silu/swish, elu, celu, selu, leaky_relu, softplus,
soft_sign, sigmoid, log_sigmoid, hard_tanh, hard_sigmoid, hard_silu, softmax, log_softmax,
one_hot, logsumexp, standardize. Gradients at the kinks follow JAX (relu'(0) = 0,
relu6'(0) = relu6'(6) = 0).

Example:
    >>> qb.nn.relu(qb.array([-1.0, 2.0])).tolist()
    [0.0, 2.0]
"""

import math

import numpy as np

from . import _ops as _o
from ._control import stop_gradient as _stop_gradient
from ._conv import avg_pool, max_pool  # noqa: F401 - pooling lives with the convolutions
from ._ops import _floatify, _to_array, where
from .dtypes import float64
from .errors import ShapeError

__all__ = [
    "relu", "relu6", "gelu", "silu", "swish", "elu", "celu", "selu", "leaky_relu", "softplus", "soft_sign",
    "sigmoid", "log_sigmoid", "hard_tanh", "hard_sigmoid", "hard_silu", "hard_swish", "softmax", "log_softmax",
    "one_hot", "logsumexp", "standardize", "max_pool", "avg_pool",
]


def _f(x):
    return _floatify(_to_array(x))


def relu(x):
    """max(x, 0), with derivative 0 at x = 0 (as jax.nn.relu).

    Example:
        >>> qb.nn.relu(qb.array([-1.0, 0.0, 2.0])).tolist()
        [0.0, 0.0, 2.0]
    """
    x = _to_array(x)
    return where(x > 0, x, 0)


def relu6(x):
    """min(max(x, 0), 6), derivative 0 at both kinks.

    Example:
        >>> qb.nn.relu6(qb.array([-1.0, 3.0, 7.0])).tolist()
        [0.0, 3.0, 6.0]
    """
    x = _to_array(x)
    return where(x >= 6, 6, where(x > 0, x, 0))


def sigmoid(x):
    """1 / (1 + exp(-x)).

    Example:
        >>> qb.nn.sigmoid(qb.array([0.0])).tolist()
        [0.5]
    """
    return _o.sigmoid(x)


def log_sigmoid(x):
    """log(sigmoid(x)) = -softplus(-x), stable for large |x|.

    Example:
        >>> round(qb.nn.log_sigmoid(qb.array(0.0)).item(), 6)
        -0.693147
    """
    return -softplus(-_f(x))


def softplus(x):
    """log(1 + exp(x)) computed stably (jax.nn.softplus is logaddexp(x, 0)).

    Example:
        >>> round(qb.nn.softplus(qb.array(0.0)).item(), 6)
        0.693147
    """
    return _o.logaddexp(_f(x), 0.0)


def soft_sign(x):
    """x / (|x| + 1).

    Example:
        >>> qb.nn.soft_sign(qb.array([1.0])).tolist()
        [0.5]
    """
    x = _f(x)
    return x / (_o.abs(x) + 1)


def silu(x):
    """x * sigmoid(x) (also ``swish``).

    Example:
        >>> qb.nn.silu(qb.array([0.0])).tolist()
        [0.0]
    """
    x = _f(x)
    return x * _o.sigmoid(x)


swish = silu


def gelu(x, approximate=True):
    """Gaussian error linear unit: the tanh approximation by default (as jax.nn.gelu), the exact
    x * (1 + erf(x / sqrt(2))) / 2 with ``approximate=False``.

    Example:
        >>> round(qb.nn.gelu(qb.array(1.0), approximate=False).item(), 6)
        0.841345
    """
    x = _f(x)
    if approximate:
        c = math.sqrt(2.0 / math.pi)
        return 0.5 * x * (1.0 + _o.tanh(c * (x + 0.044715 * (x * x * x))))
    return 0.5 * x * (1.0 + _o.erf(x * (1.0 / math.sqrt(2.0))))


def elu(x, alpha=1.0):
    """x for x > 0, alpha * expm1(x) otherwise.

    Example:
        >>> qb.nn.elu(qb.array([1.0, 0.0])).tolist()
        [1.0, 0.0]
    """
    x = _f(x)
    safe = where(x > 0, 0.0, x)
    return where(x > 0, x, alpha * _o.expm1(safe))


def celu(x, alpha=1.0):
    """max(x, 0) + alpha * min(expm1(x / alpha), 0).

    Example:
        >>> qb.nn.celu(qb.array([2.0])).tolist()
        [2.0]
    """
    x = _f(x)
    safe = where(x > 0, 0.0, x)
    return where(x > 0, x, alpha * _o.expm1(safe / alpha))


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(x):
    """scale * elu(x, alpha) with the self-normalising constants of jax.nn.selu.

    Example:
        >>> qb.nn.selu(qb.array([0.0])).tolist()
        [0.0]
    """
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def leaky_relu(x, negative_slope=0.01):
    """x for x >= 0, negative_slope * x otherwise.

    Example:
        >>> qb.nn.leaky_relu(qb.array([-1.0, 2.0])).tolist()
        [-0.01, 2.0]
    """
    x = _f(x)
    return where(x >= 0, x, negative_slope * x)


def hard_tanh(x):
    """x clipped to [-1, 1].

    Example:
        >>> qb.nn.hard_tanh(qb.array([-2.0, 0.5])).tolist()
        [-1.0, 0.5]
    """
    x = _f(x)
    return where(x > 1, 1.0, where(x < -1, -1.0, x))


def hard_sigmoid(x):
    """relu6(x + 3) / 6.

    Example:
        >>> qb.nn.hard_sigmoid(qb.array([0.0])).tolist()
        [0.5]
    """
    return relu6(_f(x) + 3.0) / 6.0


def hard_silu(x):
    """x * hard_sigmoid(x) (also ``hard_swish``).

    Example:
        >>> qb.nn.hard_silu(qb.array([3.0])).tolist()
        [3.0]
    """
    x = _f(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def _mask_fill(x, where_, fill):
    if where_ is None:
        return x
    return _o.where(where_, x, fill)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))) over ``axis``, stable, as jax.nn.logsumexp (``b`` weights,
    ``return_sign`` gives (log|s|, sign(s)), ``where`` masks elements out).

    Example:
        >>> round(qb.nn.logsumexp(qb.array([0.0, 0.0])).item(), 6)
        0.693147
    """
    return _o.logsumexp(a, axis, b=b, keepdims=keepdims, return_sign=return_sign, where=where)


def softmax(x, axis=-1, where=None, initial=None):
    """exp(x - max) / sum(exp(x - max)) along ``axis``; masked-out entries (``where``) are 0.
    ``initial`` is accepted for jax.nn's signature and ignored.

    Example:
        >>> qb.nn.softmax(qb.array([1.0, 1.0])).tolist()
        [0.5, 0.5]
    """
    x = _f(x)
    xm = _mask_fill(x, where, -math.inf)
    m = _o.max(xm, axis, keepdims=True)
    m = _o.where(_o.abs(m) < math.inf, m, 0.0)
    m = _stop_gradient(m)
    e = _o.exp(xm - m)
    e = _mask_fill(e, where, 0.0)
    return e / _o.sum(e, axis, keepdims=True)


def log_softmax(x, axis=-1, where=None, initial=None):
    """x - logsumexp(x) along ``axis`` (masked-out entries are -inf).

    Example:
        >>> round(qb.nn.log_softmax(qb.array([0.0, 0.0])).tolist()[0], 6)
        -0.693147
    """
    x = _f(x)
    xm = _mask_fill(x, where, -math.inf)
    m = _o.max(xm, axis, keepdims=True)
    m = _o.where(_o.abs(m) < math.inf, m, 0.0)
    m = _stop_gradient(m)
    sh = xm - m
    e = _mask_fill(_o.exp(sh), where, 0.0)
    r = sh - _o.log(_o.sum(e, axis, keepdims=True))
    return _mask_fill(r, where, -math.inf)


def one_hot(x, num_classes, *, dtype=float64, axis=-1):
    """One-hot encoding of integer ``x`` with ``num_classes`` classes along a new ``axis``
    (out-of-range and negative indices give all-zero rows, as jax.nn.one_hot).

    Example:
        >>> qb.nn.one_hot(qb.array([0, 2]), 3).tolist()
        [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    """
    x = _to_array(x)
    n = int(num_classes)
    if n <= 0:
        raise ShapeError(f"one_hot: num_classes must be positive, got {num_classes}")
    nd = x.ndim + 1
    ax = axis + nd if axis < 0 else axis
    if not 0 <= ax < nd:
        raise ShapeError(f"one_hot: axis {axis} is out of bounds for a result of rank {nd}")
    shape = [1] * nd
    shape[ax] = n
    classes = _o._from_numpy(np.arange(n, dtype=np.int64).reshape(shape))
    xe = _o.expand_dims(x, ax)
    if xe.dtype.is_float:
        classes = _o.astype(classes, xe.dtype)
    elif xe.dtype is not classes.dtype:
        xe = _o.astype(xe, classes.dtype)
    return _o.astype(_o.equal(xe, classes), dtype)


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None):
    """(x - mean) / sqrt(variance + epsilon) along ``axis`` (mean and variance computed when
    not given; variance as mean(x^2) - mean(x)^2, as jax.nn.standardize).

    Example:
        >>> qb.nn.standardize(qb.array([1.0, 3.0]), epsilon=0.0).tolist()
        [-1.0, 1.0]
    """
    x = _f(x)
    if mean is None:
        mean = _o.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        variance = _o.mean(x * x, axis, keepdims=True, where=where) - mean * mean
    return (x - mean) * _o.rsqrt(variance + epsilon)

