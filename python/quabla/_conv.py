"""Convolutions, pooling and cumulative reductions, on the ``convolution`` and
``reduce_window`` dialect ops.

``conv_general_dilated`` and ``conv`` follow ``jax.lax``; ``convolve`` and ``correlate``
follow ``jax.numpy`` (1-D, NumPy modes); ``max_pool`` and ``avg_pool`` follow Flax's
``linen.max_pool``/``avg_pool`` (inputs ``(batch, spatial..., features)``, a window over the
spatial dims); ``reduce_window`` follows ``jax.lax.reduce_window`` for the add/max/min
monoids; ``cumsum``/``cumprod`` follow ``jax.numpy`` (plus ``reverse=``) and
``cummax``/``cummin``/``cumlogsumexp`` follow ``jax.lax``.
"""

import builtins
import math

import numpy as np

from . import _ops
from . import dtypes as _dt
from ._trace import bind
from .errors import ArgumentTypeError, DTypeError, ShapeError, UnsupportedOperationError

__all__ = [
    "conv_general_dilated",
    "conv_transpose",
    "conv",
    "convolve",
    "correlate",
    "reduce_window",
    "max_pool",
    "avg_pool",
    "cumsum",
    "cumprod",
    "cummax",
    "cummin",
    "cumlogsumexp",
]


def _ints(name, arg, v, n, default=1):
    if v is None:
        return (default,) * n
    if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
        return (int(v),) * n
    v = _ops._ints_arg(name, arg, v)
    if len(v) != n:
        raise ShapeError(f"{name}: {arg} needs {n} entries (one per spatial dimension), got {v}")
    return v


def _pads(name, padding, in_shape, window, strides):
    """Explicit (lo, hi) pairs for ``padding`` ('SAME', 'SAME_LOWER', 'VALID' or pairs)."""
    n = len(in_shape)
    if isinstance(padding, str):
        p = padding.upper()
        if p == "VALID":
            return ((0, 0),) * n
        if p in ("SAME", "SAME_LOWER"):
            out = []
            for x, k, s in zip(in_shape, window, strides):
                o = -(-x // s)
                total = builtins.max((o - 1) * s + k - x, 0)
                lo = total // 2 if p == "SAME" else total - total // 2
                out.append((lo, total - lo))
            return tuple(out)
        raise ShapeError(f"{name}: padding must be 'SAME', 'SAME_LOWER', 'VALID' or a sequence of (low, high) pairs, got {padding!r}")
    if isinstance(padding, (int, np.integer)) and not isinstance(padding, (bool, np.bool_)):
        return ((int(padding), int(padding)),) * n
    if not isinstance(padding, (tuple, list)):
        raise ArgumentTypeError(f"{name}: padding must be 'SAME', 'VALID' or a sequence of (low, high) pairs, got {type(padding).__name__}")
    pairs = tuple(_ops._ints_arg(name, "each (low, high) pair of padding", p) for p in padding)
    if builtins.any(len(p) != 2 for p in pairs):
        raise ShapeError(f"{name}: padding must be a sequence of (low, high) pairs, got {padding!r}")
    if len(pairs) != n:
        raise ShapeError(f"{name}: padding needs {n} (low, high) pairs, got {len(pairs)}")
    return pairs


def _dilate(n, d):
    return 0 if n == 0 else (n - 1) * d + 1


def _specs(name, dimension_numbers, lhs_rank):
    """(lhs_spec, rhs_spec, out_spec) as JAX's ConvDimensionNumbers: (batch, feature,
    spatial...), (out feature, in feature, spatial...), (batch, feature, spatial...)."""
    if dimension_numbers is None:
        s = tuple(range(lhs_rank))
        return s, s, s
    if len(dimension_numbers) != 3:
        raise ShapeError(f"{name}: dimension_numbers must be a triple (lhs, rhs, out), got {dimension_numbers!r}")
    lhs, rhs, out = dimension_numbers
    if all(isinstance(x, str) for x in (lhs, rhs, out)):
        if not (len(lhs) == len(rhs) == len(out) == lhs_rank):
            raise ShapeError(f"{name}: dimension_numbers {dimension_numbers!r} must each have {lhs_rank} letters (the lhs rank)")
        if sorted(lhs[i] for i in range(len(lhs)) if lhs[i] not in "NC") != sorted(c for c in rhs if c not in "OI") or sorted(c for c in out if c not in "NC") != sorted(c for c in rhs if c not in "OI"):
            raise ShapeError(f"{name}: the spatial letters of dimension_numbers {dimension_numbers!r} must agree")

        def perm(spec, pair, sort):
            if pair[0] not in spec or pair[1] not in spec or len(set(spec)) != len(spec):
                raise ShapeError(f"{name}: dimension_numbers spec {spec!r} needs one {pair[0]!r} and one {pair[1]!r} and distinct letters")
            sp = [i for i, c in enumerate(spec) if c not in pair]
            if sort:
                sp = sorted(sp, key=lambda i: rhs.index(spec[i]))
            return (spec.index(pair[0]), spec.index(pair[1])) + tuple(sp)

        return perm(lhs, "NC", True), perm(rhs, "OI", False), perm(out, "NC", True)
    try:
        return tuple(tuple(int(i) for i in s) for s in (lhs, rhs, out))
    except TypeError:
        raise ShapeError(f"{name}: dimension_numbers must be None, three layout strings or three tuples of ints, got {dimension_numbers!r}") from None


def _conv_op(strides, pads, lhs_dil, rhs_dil, specs, fgc, bgc):
    lhs, rhs, out = specs
    return _ops._op(
        "convolution",
        window_strides=tuple(strides),
        padding=tuple(p for pair in pads for p in pair),
        lhs_dilation=tuple(lhs_dil),
        rhs_dilation=tuple(rhs_dil),
        input_batch_dimension=lhs[0],
        input_feature_dimension=lhs[1],
        input_spatial_dimensions=tuple(lhs[2:]),
        kernel_input_feature_dimension=rhs[1],
        kernel_output_feature_dimension=rhs[0],
        kernel_spatial_dimensions=tuple(rhs[2:]),
        output_batch_dimension=out[0],
        output_feature_dimension=out[1],
        output_spatial_dimensions=tuple(out[2:]),
        feature_group_count=int(fgc),
        batch_group_count=int(bgc),
    )


def _same_float(name, lhs, rhs):
    lhs, rhs = _ops._to_array(lhs), _ops._to_array(rhs)
    if lhs.dtype != rhs.dtype:
        raise DTypeError(f"{name}: lhs and rhs must have the same dtype, got {lhs.dtype.name} of shape {lhs.shape} and {rhs.dtype.name} of shape {rhs.shape}")
    return lhs, rhs


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None, dimension_numbers=None, feature_group_count=1, batch_group_count=1, precision=None, preferred_element_type=None):
    """General n-d convolution (``jax.lax.conv_general_dilated``, StableHLO semantics).

    Args:
        lhs: input, rank n+2.
        rhs: kernel, rank n+2.
        window_strides: n strides.
        padding: 'SAME', 'SAME_LOWER', 'VALID' or n (low, high) pairs (may be negative).
        lhs_dilation: n input dilations (transposed convolutions), default 1.
        rhs_dilation: n kernel dilations (atrous convolutions), default 1.
        dimension_numbers: None (NCH.../OIH.../NCH...), three layout strings such as
            ('NHWC', 'HWIO', 'NHWC'), or three tuples of dims (JAX's ConvDimensionNumbers).
        feature_group_count, batch_group_count: grouped convolutions.
        precision, preferred_element_type: accepted for JAX compatibility; must be None
            (Quabla computes in the operands' dtype).

    Returns:
        The convolution (correlation, no kernel flip) in the output layout.

    Example:
        >>> x = qb.ones((1, 1, 5)); w = qb.ones((1, 1, 3))
        >>> qb.conv_general_dilated(x, w, (1,), "VALID").tolist()
        [[[3.0, 3.0, 3.0]]]
    """
    name = "conv_general_dilated"
    if precision is not None or preferred_element_type is not None:
        raise UnsupportedOperationError(f"{name}: precision and preferred_element_type are not supported (Quabla computes in the operands' dtype)")
    lhs, rhs = _same_float(name, lhs, rhs)
    if lhs.ndim < 3 or lhs.ndim != rhs.ndim:
        raise ShapeError(f"{name}: lhs and rhs need the same rank >= 3, got shapes {lhs.shape} and {rhs.shape}")
    n = lhs.ndim - 2
    specs = _specs(name, dimension_numbers, lhs.ndim)
    strides = _ints(name, "window_strides", window_strides, n)
    lhs_dil = _ints(name, "lhs_dilation", lhs_dilation, n)
    rhs_dil = _ints(name, "rhs_dilation", rhs_dilation, n)
    if isinstance(padding, str):
        in_sp = [lhs.shape[d] for d in specs[0][2:]]
        k_sp = [_dilate(rhs.shape[d], r) for d, r in zip(specs[1][2:], rhs_dil)]
        pads = _pads(name, padding, in_sp, k_sp, strides)
    else:
        pads = _pads(name, padding, [0] * n, None, None)
    return bind(_conv_op(strides, pads, lhs_dil, rhs_dil, specs, feature_group_count, batch_group_count), lhs, rhs)


def _transpose_pads(k, s, padding):
    """(lo, hi) padding of the dilated input of a transposed convolution with a (dilated)
    window of ``k`` and stride ``s`` (``jax.lax.conv_transpose``'s 'SAME' and 'VALID')."""
    if padding == "SAME":
        total = k + s - 2
        lo = k - 1 if s > k - 1 else -(-total // 2)
    else:
        total = k + s - 2 + builtins.max(k - s, 0)
        lo = k - 1
    return lo, total - lo


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None, transpose_kernel=False, precision=None, preferred_element_type=None):
    """Transposed convolution (``jax.lax.conv_transpose``): the input dilated by ``strides``
    and convolved with the kernel, as a decoder's upsampling layer.

    Args:
        lhs: input, rank n+2.
        rhs: kernel, rank n+2.
        strides: n strides (the input's dilation).
        padding: 'SAME', 'VALID' or n (low, high) pairs of the dilated input.
        rhs_dilation: n kernel dilations, default 1.
        dimension_numbers: as ``conv_general_dilated``; None is JAX's default for the rank
            (('NC', 'IO', 'NC'), ('NHC', 'HIO', 'NHC'), ('NHWC', 'HWIO', 'NHWC'),
            ('NHWDC', 'HWDIO', 'NHWDC')).
        transpose_kernel: flip the kernel's spatial dims and swap its input and output
            features (the gradient of ``conv_general_dilated`` with respect to its input).
        precision, preferred_element_type: must be None, as for ``conv_general_dilated``.

    Returns:
        The transposed convolution in the output layout.

    Example:
        >>> y = qb.conv_transpose(qb.ones((1, 4, 4, 3)), qb.ones((3, 3, 3, 8)), (2, 2), "SAME")
        >>> y.shape
        (1, 8, 8, 8)
    """
    name = "conv_transpose"
    lhs, rhs = _same_float(name, lhs, rhs)
    if lhs.ndim < 2 or lhs.ndim != rhs.ndim:
        raise ShapeError(f"{name}: lhs and rhs need the same rank >= 2, got shapes {lhs.shape} and {rhs.shape}")
    n = lhs.ndim - 2
    if dimension_numbers is None:
        defaults = {0: ("NC", "IO", "NC"), 1: ("NHC", "HIO", "NHC"), 2: ("NHWC", "HWIO", "NHWC"), 3: ("NHWDC", "HWDIO", "NHWDC")}
        if n not in defaults:
            raise ShapeError(f"{name}: no default dimension_numbers for rank {lhs.ndim}; pass them")
        dimension_numbers = defaults[n]
    specs = _specs(name, dimension_numbers, lhs.ndim)
    strides = _ints(name, "strides", strides, n)
    rhs_dil = _ints(name, "rhs_dilation", rhs_dilation, n)
    if isinstance(padding, str):
        p = padding.upper()
        if p not in ("SAME", "VALID"):
            raise ShapeError(f"{name}: padding must be 'SAME', 'VALID' or a sequence of (low, high) pairs, got {padding!r}")
        pads = tuple(_transpose_pads(_dilate(rhs.shape[d], r), s, p) for d, r, s in zip(specs[1][2:], rhs_dil, strides))
    else:
        pads = padding
    if transpose_kernel:
        for d in specs[1][2:]:
            rhs = _flip_axis(rhs, d)
        rhs = _ops.swapaxes(rhs, specs[1][0], specs[1][1])
    return conv_general_dilated(lhs, rhs, (1,) * n, pads, lhs_dilation=strides, rhs_dilation=rhs_dil, dimension_numbers=specs, precision=precision, preferred_element_type=preferred_element_type)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """Convolution with NCH.../OIH... layouts and no dilation (``jax.lax.conv``).

    Example:
        >>> qb.conv(qb.ones((1, 2, 4, 4)), qb.ones((3, 2, 3, 3)), (1, 1), "SAME").shape
        (1, 3, 4, 4)
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision, preferred_element_type=preferred_element_type)


def _flip(x):
    n = x.shape[0]
    return x if n == 1 else _ops.take(x, np.arange(n - 1, -1, -1), axis=0)


def _conv1d(name, x, y, mode, flip):
    x, y = _ops._to_array(x), _ops._to_array(y)
    if x.ndim != 1 or y.ndim != 1:
        raise ShapeError(f"{name}() only supports 1-dimensional inputs, got shapes {x.shape} and {y.shape}")
    # JAX's dtype: the operands' common dtype made inexact (int64 -> float64; bool, uint8,
    # uint32, int32 -> float32).
    d = _dt.to_inexact(_dt.result_type(name, x.dtype, y.dtype))
    x, y = _ops.astype(x, d), _ops.astype(y, d)
    reverse_out = False
    if x.shape[0] < y.shape[0]:
        x, y = y, x
        reverse_out = not flip
    if flip:
        y = _flip(y)
    k = y.shape[0]
    if not isinstance(mode, str):
        raise ArgumentTypeError(f"{name}: mode must be 'full', 'same' or 'valid', got {type(mode).__name__}")
    if mode == "valid":
        pad = ((0, 0),)
    elif mode == "same":
        pad = ((k // 2, k - k // 2 - 1),)
    elif mode == "full":
        pad = ((k - 1, k - 1),)
    else:
        raise ShapeError(f"{name}: mode must be 'full', 'same' or 'valid', got {mode!r}")
    r = conv_general_dilated(_ops.reshape(x, (1, 1, -1)), _ops.reshape(y, (1, 1, -1)), (1,), pad)
    r = _ops.reshape(r, (-1,))
    return _flip(r) if reverse_out else r


def _conv_result(name, r, preferred_element_type):
    """The result of convolve/correlate as ``preferred_element_type`` (which may not be
    narrower than the computed dtype, as JAX's)."""
    if preferred_element_type is None:
        return r
    want = _dt.dtype(preferred_element_type, name)
    if want is r.dtype:
        return r
    if not want.is_float or want.itemsize < r.dtype.itemsize:
        raise DTypeError(f"{name}: preferred_element_type {want.name} must not be narrower than the computed dtype {r.dtype.name}")
    return _ops.astype(r, want)


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """Discrete linear convolution of two 1-D arrays (``jax.numpy.convolve``): integer and
    bool inputs compute in their inexact dtype (int64 -> float64; bool, uint8, uint32, int32
    -> float32, as JAX). ``precision`` is accepted and ignored (the host computes in the
    dtype's full precision).

    Example:
        >>> qb.convolve(qb.array([1.0, 2.0, 3.0]), qb.array([0.0, 1.0, 0.5])).tolist()
        [0.0, 1.0, 2.5, 4.0, 1.5]
    """
    return _conv_result("convolve", _conv1d("convolve", a, v, mode, True), preferred_element_type)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """Cross-correlation of two 1-D arrays (``jax.numpy.correlate``; dtypes as
    :func:`convolve`; ``precision`` is accepted and ignored).

    Example:
        >>> qb.correlate(qb.array([1.0, 2.0, 3.0]), qb.array([0.0, 1.0, 0.5])).tolist()
        [3.5]
    """
    return _conv_result("correlate", _conv1d("correlate", a, v, mode, False), preferred_element_type)


# ---------------------------------------------------------------------------------------------
# Windowed reductions


def _window_op(kind, operand, dims, strides, pads, base, wdil):
    return bind(
        _ops._op(
            kind,
            window_dimensions=tuple(dims),
            window_strides=tuple(strides),
            base_dilations=tuple(base),
            window_dilations=tuple(wdil),
            padding=tuple(p for pair in pads for p in pair),
        ),
        operand,
    )


def _monoid(name, computation):
    # `computation == "add"` only for a string: an array compares elementwise.
    word = computation if isinstance(computation, str) else None
    if computation is _ops.add or word == "add":
        return "reduce_window_sum"
    if computation is _ops.maximum or word == "max":
        return "reduce_window_max"
    if computation is _ops.minimum or word == "min":
        return "reduce_window_min"
    if computation is _ops.multiply or word == "mul":
        return "reduce_window_prod"
    raise UnsupportedOperationError(
        f"{name}: computation must be qb.add, qb.maximum, qb.minimum or qb.multiply (or 'add'/'max'/'min'/'mul'), got {computation!r}"
    )


def reduce_window(operand, init_value, computation, window_dimensions, window_strides, padding, base_dilation=None, window_dilation=None):
    """Windowed reduction (``jax.lax.reduce_window``) for the add, max, min and multiply
    monoids.

    ``init_value`` must be the monoid's identity (0, -inf, +inf or 1; the integer minimum or
    maximum): Quabla's op always starts from it. Products are differentiable on cumulative
    windows (``cumprod``'s) only.

    Example:
        >>> qb.reduce_window(qb.arange(5.0), -float("inf"), qb.maximum, (2,), (1,), "VALID").tolist()
        [1.0, 2.0, 3.0, 4.0]
    """
    name = "reduce_window"
    kind = _monoid(name, computation)
    x = _ops._to_array(operand)
    iv = np.asarray(init_value) if isinstance(init_value, (int, float, np.number, np.ndarray)) or hasattr(init_value, "__array__") else None
    if iv is None or iv.shape != () or iv.dtype.kind not in "biuf":
        raise ArgumentTypeError(f"{name}: init_value must be a real scalar, got {init_value!r}")
    iv = float(iv)
    ident = {"reduce_window_sum": 0.0, "reduce_window_max": -math.inf, "reduce_window_min": math.inf, "reduce_window_prod": 1.0}[kind]
    if not x.dtype.is_float and kind in ("reduce_window_max", "reduce_window_min"):
        info = np.iinfo(x.dtype.np)
        ident = float(info.min if kind == "reduce_window_max" else info.max)
    if iv != ident:
        raise UnsupportedOperationError(f"{name}: init_value must be the identity of {kind[14:]} ({ident}), got {init_value!r}")
    r = x.ndim
    dims = _ints(name, "window_dimensions", window_dimensions, r)
    strides = _ints(name, "window_strides", window_strides, r)
    base = _ints(name, "base_dilation", base_dilation, r)
    wdil = _ints(name, "window_dilation", window_dilation, r)
    if isinstance(padding, str):
        pads = _pads(name, padding, [_dilate(s, b) for s, b in zip(x.shape, base)], [_dilate(k, w) for k, w in zip(dims, wdil)], strides)
    else:
        pads = _pads(name, padding, [0] * r, None, None)
    return _window_op(kind, x, dims, strides, pads, base, wdil)


def _pool(name, kind, inputs, window_shape, strides, padding):
    x = _ops._to_array(inputs)
    window_shape = _ops._ints_arg(name, "window_shape", window_shape)
    k = len(window_shape)
    strides = (1,) * k if strides is None else _ops._ints_arg(name, "strides", strides)
    if len(strides) != k:
        raise ShapeError(f"{name}: strides {strides} must have one entry per window dim {window_shape}")
    if x.ndim not in (k + 1, k + 2):
        raise ShapeError(f"{name}: inputs of shape {tuple(x.shape)} need {k + 1} or {k + 2} dims for window {window_shape} (batch, spatial..., features)")
    unbatched = x.ndim == k + 1
    if unbatched:
        x = _ops.expand_dims(x, 0)
    dims = (1,) + window_shape + (1,)
    st = (1,) + strides + (1,)
    if isinstance(padding, str):
        pads = _pads(name, padding, x.shape, dims, st)
    else:
        pads = ((0, 0),) + _pads(name, padding, [0] * k, None, None) + ((0, 0),)
    y = _window_op(kind, x, dims, st, pads, (1,) * x.ndim, (1,) * x.ndim)
    return y, x, dims, st, pads, unbatched


def max_pool(inputs, window_shape, strides=None, padding="VALID"):
    """Max pooling over the spatial dims of ``(batch, spatial..., features)`` inputs (Flax's
    ``linen.max_pool``; inputs without the batch dim are accepted).

    Example:
        >>> qb.max_pool(qb.arange(8.0).reshape(1, 4, 2), (2,), strides=(2,)).tolist()
        [[[2.0, 3.0], [6.0, 7.0]]]
    """
    y, _, _, _, _, unbatched = _pool("max_pool", "reduce_window_max", inputs, window_shape, strides, padding)
    return _ops.squeeze(y, 0) if unbatched else y


def avg_pool(inputs, window_shape, strides=None, padding="VALID", count_include_pad=True):
    """Average pooling (Flax's ``linen.avg_pool``): the window sum over the window size, or
    over the number of non-padding elements when ``count_include_pad`` is False.

    Example:
        >>> qb.avg_pool(qb.arange(8.0).reshape(1, 4, 2), (2,), strides=(2,)).tolist()
        [[[1.0, 2.0], [5.0, 6.0]]]
    """
    x0 = _ops._to_array(inputs)
    if not x0.dtype.is_float:
        raise DTypeError(f"avg_pool: inputs must be floating point, got {x0.dtype.name}")
    y, x, dims, st, pads, unbatched = _pool("avg_pool", "reduce_window_sum", x0, window_shape, strides, padding)
    if count_include_pad:
        y = y / float(np.prod(dims))
    else:
        ones = _ops.ones(x.shape, dtype=x.dtype)
        cnt = _window_op("reduce_window_sum", ones, dims, st, pads, (1,) * x.ndim, (1,) * x.ndim)
        y = y / cnt
    return _ops.squeeze(y, 0) if unbatched else y


# ---------------------------------------------------------------------------------------------
# Cumulative reductions


def _axis(name, x, axis):
    if x.ndim == 0:
        raise ShapeError(f"{name}: the operand must have at least one dimension")
    return _ops._norm_axis(name, axis, x.ndim, x.shape)


def _cum_window(kind, x, a, reverse):
    reverse = _ops._bool_arg("cum" + kind.removeprefix("reduce_window_"), "reverse", reverse)
    n = x.shape[a]
    dims = [1] * x.ndim
    dims[a] = n
    pads = [(0, 0)] * x.ndim
    pads[a] = (0, n - 1) if reverse else (n - 1, 0)
    return _window_op(kind, x, dims, [1] * x.ndim, pads, [1] * x.ndim, [1] * x.ndim)


def _prepare(name, x, axis, dtype):
    x = _ops._to_array(x)
    if axis is None:
        x = _ops.ravel(x)
        axis = 0
    if dtype is not None:
        x = _ops.astype(x, dtype)
    elif x.dtype.is_bool:
        x = _ops.astype(x, _dt.int64)
    return x, _axis(name, x, axis)


def cumsum(a, axis=None, dtype=None, out=None, *, reverse=False):
    """Cumulative sum along ``axis`` (None: of the flattened array), as ``jax.numpy.cumsum``;
    ``reverse=True`` sums from the end (``jax.lax.cumsum``'s ``reverse``). ``dtype=bool`` is
    a cumulative logical or (of the values converted to bool), as JAX's.

    Example:
        >>> qb.cumsum(qb.array([1, 2, 3])).tolist()
        [1, 3, 6]
    """
    _ops._no_out("cumsum", out)
    x, ax = _prepare("cumsum", a, axis, dtype)
    if x.dtype.is_bool:  # dtype=bool: a cumulative or, as JAX's
        return _cum_bool("reduce_window_max", x, ax, reverse)
    return _cum_window("reduce_window_sum", x, ax, reverse)


def _cum_bool(kind, x, ax, reverse):
    """A cumulative or (max) / and (min) of a bool array, through uint8."""
    return _ops.astype(_cum_window(kind, _ops.astype(x, _dt.uint8), ax, reverse), _dt.bool_)


def _flip_axis(x, a):
    n = x.shape[a]
    return x if n == 1 else _ops.take(x, np.arange(n - 1, -1, -1), axis=a)


def _scan(name, x, a, combine, identity, reverse):
    """Inclusive prefix combination along ``a`` by recursive doubling (log2(n) steps of
    shift-and-combine; ``combine`` associative), for op ``name``."""
    reverse = _ops._bool_arg(name, "reverse", reverse)
    if reverse:
        x = _flip_axis(x, a)
    n = x.shape[a]
    y = x
    shift = 1
    while shift < n:
        fill_shape = list(y.shape)
        fill_shape[a] = shift
        head = _ops.full(tuple(fill_shape), identity, dtype=y.dtype)
        body = _ops._slice_axis(y, a, 0, n - shift, 1)
        y = combine(y, _ops.concatenate([head, body], axis=a))
        shift *= 2
    return _flip_axis(y, a) if reverse else y


def cumprod(a, axis=None, dtype=None, out=None, *, reverse=False):
    """Cumulative product along ``axis`` (None: flattened), as ``jax.numpy.cumprod``;
    ``dtype=bool`` is a cumulative logical and, as JAX's.

    Example:
        >>> qb.cumprod(qb.array([1.0, 2.0, 3.0])).tolist()
        [1.0, 2.0, 6.0]
    """
    _ops._no_out("cumprod", out)
    x, ax = _prepare("cumprod", a, axis, dtype)
    if x.dtype.is_bool:  # dtype=bool: a cumulative and, as JAX's
        return _cum_bool("reduce_window_min", x, ax, reverse)
    return _cum_window("reduce_window_prod", x, ax, reverse)


def cummax(operand, axis=0, reverse=False):
    """Cumulative maximum along ``axis`` (``jax.lax.cummax``).

    Example:
        >>> qb.cummax(qb.array([1.0, 3.0, 2.0])).tolist()
        [1.0, 3.0, 3.0]
    """
    x = _ops._to_array(operand)
    return _cum_window("reduce_window_max", x, _axis("cummax", x, axis), reverse)


def cummin(operand, axis=0, reverse=False):
    """Cumulative minimum along ``axis`` (``jax.lax.cummin``).

    Example:
        >>> qb.cummin(qb.array([3.0, 1.0, 2.0])).tolist()
        [3.0, 1.0, 1.0]
    """
    x = _ops._to_array(operand)
    return _cum_window("reduce_window_min", x, _axis("cummin", x, axis), reverse)


def cumlogsumexp(operand, axis=0, reverse=False):
    """Cumulative ``log(sum(exp(x)))`` along ``axis`` (``jax.lax.cumlogsumexp``), by
    recursive doubling with ``logaddexp``.

    Example:
        >>> [round(v, 4) for v in qb.cumlogsumexp(qb.array([0.0, 0.0])).tolist()]
        [0.0, 0.6931]
    """
    x = _ops._to_array(operand)
    if not x.dtype.is_float:
        raise DTypeError(f"cumlogsumexp: operand must be floating point, got {x.dtype.name}")
    return _scan("cumlogsumexp", x, _axis("cumlogsumexp", x, axis), _ops.logaddexp, -math.inf, reverse)
