"""``qb.nn``: the activation and normalisation helpers of ``jax.nn``, with its names and
signatures, built from Quabla ops (differentiable, batchable, traceable).

Owns: relu, relu6, gelu (exact and tanh), silu/swish, elu, celu, selu, leaky_relu, softplus,
soft_sign, sigmoid, log_sigmoid, hard_tanh, hard_sigmoid, hard_silu, softmax, log_softmax,
one_hot, logsumexp, standardize, identity, tanh, glu, mish, squareplus, sparse_plus,
sparse_sigmoid, log1mexp, logmeanexp, dot_product_attention. Gradients at the kinks follow JAX (relu'(0) = 0,
relu6'(0) = relu6'(6) = 0).

Example:
    >>> qb.nn.relu(qb.array([-1.0, 2.0])).tolist()
    [0.0, 2.0]
"""

import math

import numpy as np

from . import _initializers as initializers  # noqa: F401 - qb.nn.initializers, as jax.nn.initializers
from . import _ops as _o
from ._control import stop_gradient as _stop_gradient
from ._conv import avg_pool, max_pool  # noqa: F401 - pooling lives with the convolutions
from ._custom import custom_jvp as _custom_jvp
from ._ops import _floatify, _norm_axis, _shape_str, _to_array, where
from .dtypes import float32, float64
from .errors import DTypeError, ShapeError, UnsupportedOperationError

__all__ = [
    "relu", "relu6", "gelu", "silu", "swish", "elu", "celu", "selu", "leaky_relu", "softplus", "soft_sign",
    "sigmoid", "log_sigmoid", "hard_tanh", "hard_sigmoid", "hard_silu", "hard_swish", "softmax", "log_softmax",
    "one_hot", "logsumexp", "standardize", "max_pool", "avg_pool", "identity", "tanh", "glu", "mish", "squareplus",
    "sparse_plus", "sparse_sigmoid", "log1mexp", "logmeanexp", "dot_product_attention",
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



def identity(x):
    """``x`` itself (as jax.nn.identity).

    Example:
        >>> qb.nn.identity(qb.array([1.0, -2.0])).tolist()
        [1.0, -2.0]
    """
    return _to_array(x)


def tanh(x, /):
    """Elementwise hyperbolic tangent (jax.nn's name for ``qb.tanh``).

    Example:
        >>> qb.nn.tanh(qb.array([0.0])).tolist()
        [0.0]
    """
    return _o.tanh(_f(x))


def glu(x, axis=-1):
    """The gated linear unit: ``x`` split in two halves along ``axis``, the first times the
    sigmoid of the second (as jax.nn.glu; the axis must have even length).

    Example:
        >>> qb.nn.glu(qb.array([2.0, 0.0])).tolist()
        [1.0]
    """
    x = _f(x)
    ax = _norm_axis("glu", axis, x.ndim, x.shape)
    n = x.shape[ax]
    if n % 2:
        raise ShapeError(f"glu: axis {ax} of shape {_shape_str(x.shape)} has odd length {n}; it is split in two halves")
    a, b = _o.split(x, 2, axis=ax)
    return a * sigmoid(b)


def mish(x):
    """``x * tanh(softplus(x))`` (as jax.nn.mish).

    Example:
        >>> round(qb.nn.mish(qb.array(1.0)).item(), 6)
        0.865098
    """
    x = _f(x)
    return x * _o.tanh(softplus(x))


def squareplus(x, b=4):
    """``(x + sqrt(x^2 + b)) / 2``, a smooth relu (as jax.nn.squareplus).

    Example:
        >>> qb.nn.squareplus(qb.array([0.0]), b=4).tolist()
        [1.0]
    """
    x = _f(x)
    return (x + _o.sqrt(x * x + b)) / 2


def sparse_plus(x):
    """0 below -1, ``x`` above 1 and ``(x + 1)^2 / 4`` between (as jax.nn.sparse_plus).

    Example:
        >>> qb.nn.sparse_plus(qb.array([-2.0, 0.0, 2.0])).tolist()
        [0.0, 0.25, 2.0]
    """
    x = _f(x)
    return where(x <= -1.0, 0.0, where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparse_sigmoid(x):
    """``clip((x + 1) / 2, 0, 1)``, the derivative of sparse_plus (as jax.nn.sparse_sigmoid).

    Example:
        >>> qb.nn.sparse_sigmoid(qb.array([-2.0, 0.0, 2.0])).tolist()
        [0.0, 0.5, 1.0]
    """
    return 0.5 * _o.clip(_f(x) + 1.0, 0.0, 2.0)


@_custom_jvp
def _log1mexp(x):
    # log(-expm1(-x)) is accurate for small x, log1p(-exp(-x)) for large (Maechler 2012).
    return where(x < math.log(2.0), _o.log(-_o.expm1(-x)), _o.log1p(-_o.exp(-x)))


_log1mexp.defjvps(lambda g, ans, x: g / _o.expm1(x))


def log1mexp(x):
    """``log(1 - exp(-x))`` for ``x >= 0``, accurate for small and large ``x`` (as
    jax.nn.log1mexp; its derivative is ``1 / expm1(x)``).

    Example:
        >>> round(qb.nn.log1mexp(qb.array(1.0)).item(), 6)
        -0.458675
    """
    return _log1mexp(_f(x))


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """``log(mean(exp(x)))`` over ``axis``, stable: logsumexp less the log of the count of
    the entries (``where`` masks entries out), as jax.nn.logmeanexp.

    Example:
        >>> round(qb.nn.logmeanexp(qb.array([0.0, 0.0])).item(), 6)
        0.0
    """
    x = _f(x)
    lse = _o.logsumexp(x, axis, keepdims=keepdims, where=where)
    ones = _o.ones(x.shape, x.dtype) if where is None else _o.astype(_o.broadcast_to(_to_array(where), x.shape), x.dtype)
    return lse - _o.log(_o.sum(ones, axis, keepdims=keepdims))


def _as_4d(name, t):
    t = _to_array(t)
    if t.ndim > 4:
        raise ShapeError(f"dot_product_attention: {name} has rank {t.ndim} (shape {_shape_str(t.shape)}); at most 4 (BTNH)")
    return _o.reshape(t, (1,) * (4 - t.ndim) + t.shape)


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None, is_causal=False, query_seq_lengths=None,
                          key_value_seq_lengths=None, local_window_size=None, implementation=None, return_residual=False):
    """Scaled dot-product attention as jax.nn.dot_product_attention (its ``"xla"``
    implementation): ``softmax(q k^T * scale + bias, masked) v`` for ``query`` of shape
    ``(B, T, N, H)`` and ``key``/``value`` of ``(B, S, K, H)`` (leading axes may be left out),
    with grouped heads (``N`` a multiple of ``K``). ``scale`` defaults to ``1/sqrt(H)``;
    ``mask`` (bool, broadcast to ``(B, N, T, S)``), ``is_causal``, ``local_window_size``
    (``w`` or ``(left, right)``) and the per-batch ``query_seq_lengths`` /
    ``key_value_seq_lengths`` mask logits with a large negative value; the softmax runs in
    float32 as JAX's; ``return_residual`` also returns the logsumexp of each row ``(B, T, N)``.
    ``implementation="cudnn"`` is an UnsupportedOperationError.

    Example:
        >>> q = qb.ones((1, 2, 1, 4))
        >>> qb.nn.dot_product_attention(q, q, q * 3.0).shape
        (1, 2, 1, 4)
    """
    if implementation not in (None, "xla"):
        raise UnsupportedOperationError(f"dot_product_attention: implementation {implementation!r} is not available (only 'xla' / None)", op="dot_product_attention")
    out_shape = _to_array(query).shape
    q, k, v = _as_4d("query", query), _as_4d("key", key), _as_4d("value", value)
    B, S, K, H = k.shape
    _, T, N, Hq = q.shape
    if v.shape != k.shape:
        raise ShapeError(f"dot_product_attention: value has shape {_shape_str(v.shape)}, key {_shape_str(k.shape)}; they must be equal")
    if q.shape[0] != B or Hq != H:
        raise ShapeError(f"dot_product_attention: query shape {_shape_str(q.shape)} does not match key shape {_shape_str(k.shape)} (B, _, _, H)")
    if not (q.dtype is k.dtype is v.dtype) or not q.dtype.is_float:
        raise DTypeError(f"dot_product_attention: query, key and value need one float dtype, got {q.dtype.name}, {k.dtype.name}, {v.dtype.name}")
    if N % K:
        raise ShapeError(f"dot_product_attention: query heads ({N}) must be a multiple of key/value heads ({K})")
    G = N // K
    scale = 1.0 / math.sqrt(H) if scale is None else scale
    logits = _o.einsum("BTKGH,BSKH->BKGTS", _o.reshape(q, (B, T, K, G, H)), k)
    logits = _o.reshape(logits, (B, N, T, S)) * scale
    if bias is not None:
        logits = logits + _as_4d("bias", bias)
    keep = None

    def both(m):
        return m if keep is None else _o.logical_and(keep, m)

    if mask is not None:
        m = _as_4d("mask", mask)
        if not m.dtype.is_bool:
            raise DTypeError(f"dot_product_attention: mask must be bool, got {m.dtype.name}")
        keep = both(m)
    qi = _o.reshape(_o.arange(T), (T, 1))
    ki = _o.reshape(_o.arange(S), (1, S))
    if is_causal:
        keep = both(_o.reshape(ki <= qi, (1, 1, T, S)))
    if local_window_size is not None:
        left, right = (local_window_size, local_window_size) if isinstance(local_window_size, int) else local_window_size
        keep = both(_o.reshape(_o.logical_and(qi <= ki + left, qi >= ki - right), (1, 1, T, S)))
    qlen = None if query_seq_lengths is None else _o.reshape(_to_array(query_seq_lengths), (B, 1, 1, 1))
    if qlen is not None:
        keep = both(_o.reshape(qi, (1, 1, T, 1)) < qlen)
    if key_value_seq_lengths is not None:
        keep = both(_o.reshape(ki, (1, 1, 1, S)) < _o.reshape(_to_array(key_value_seq_lengths), (B, 1, 1, 1)))
    if keep is not None:
        big = 0.7 * float(np.finfo(np.float32).max)
        logits = where(_o.broadcast_to(keep, logits.shape), logits, -big)
    rows = _o.astype(logits, float32)
    probs = _o.astype(softmax(rows, axis=-1), k.dtype)
    out = _o.einsum("BKGTS,BSKH->BTKGH", _o.reshape(probs, (B, K, G, T, S)), v)
    out = _o.reshape(out, (B, T, N, H))
    if qlen is not None:
        out = out * _o.astype(_o.reshape(_o.reshape(qi, (1, T)) < _o.reshape(qlen, (B, 1)), (B, T, 1, 1)), out.dtype)
    out = _o.reshape(out, out_shape)
    if not return_residual:
        return out
    lse = _o.astype(_o.logsumexp(rows, axis=-1), k.dtype)
    lse = _stop_gradient(_o.transpose(lse, (0, 2, 1)))
    return out, _o.reshape(lse, out_shape[:-1])
