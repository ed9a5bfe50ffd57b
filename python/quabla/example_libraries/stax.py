"""``jax.example_libraries.stax`` over Quabla: neural-network layers as
``(init_fun, apply_fun)`` pairs.

* ``init_fun(rng, input_shape) -> (output_shape, params)``: ``input_shape`` is a tuple of ints
  (the batch extent may be -1, as in JAX's examples) and the parameters are drawn from ``rng``
  with JAX's key usage (so the same key gives JAX's parameters);
* ``apply_fun(params, inputs, **kwargs) -> outputs``; layers that need randomness
  (:func:`Dropout`) take ``rng=key``.

Combinators (:func:`serial`, :func:`parallel`, :func:`shape_dependent`) build networks from
layers; the constructors' names, arguments, defaults, parameter shapes and output shapes are
JAX's (``Conv`` is ``GeneralConv`` with ``('NHWC', 'HWIO', 'NHWC')``).

Departures from JAX: parameters default to float64 (the initializers' default dtype, JAX's
with x64 enabled); :func:`Dense` and the convolution layers convert inputs and parameters of
different dtypes to their promoted dtype (as ``jnp.dot`` does; JAX's convolutions would
raise), so float32 data runs through float64 parameters; pooling accepts string padding or
one (low, high) pair per input dim. As in JAX, a pooling layer's ``init_fun`` gives a batch
extent of -1 as 0 (JAX's shape rule clamps it).

Example:
    >>> from quabla.example_libraries import stax
    >>> init, apply = stax.serial(stax.Conv(4, (3, 3), padding="SAME"), stax.Relu, stax.Flatten, stax.Dense(2))
    >>> out_shape, params = init(qb.random.key(0), (-1, 5, 5, 1))
    >>> out_shape, apply(params, qb.ones((3, 5, 5, 1))).shape
    ((-1, 2), (3, 2))
"""

import functools
import math

import numpy as np

from .. import _conv
from .. import _ops as _o
from .. import _initializers as _init
from .. import nn as _nn
from .. import random as _random
from .._math import _join
from .._ops import _to_array
from .._trace import is_array
from ..errors import ArgumentTypeError, InvalidArgumentError, ShapeError

relu = _nn.relu
log_softmax = _nn.log_softmax
softmax = _nn.softmax
softplus = _nn.softplus
sigmoid = _nn.sigmoid
elu = _nn.elu
leaky_relu = _nn.leaky_relu
selu = _nn.selu
gelu = _nn.gelu
standardize = _nn.standardize
glorot_normal = _init.glorot_normal
normal = _init.normal
ones = _init.ones
zeros = _init.zeros

# JAX's aliases
glorot = glorot_normal
randn = normal
logsoftmax = log_softmax

__all__ = [
    "Dense", "GeneralConv", "Conv", "GeneralConvTranspose", "Conv1DTranspose", "ConvTranspose", "BatchNorm",
    "elementwise", "Tanh", "Relu", "Exp", "LogSoftmax", "Softmax", "Softplus", "Sigmoid", "Elu", "LeakyRelu",
    "Selu", "Gelu", "MaxPool", "SumPool", "AvgPool", "Flatten", "Identity", "FanOut", "FanInSum", "FanInConcat",
    "Dropout", "serial", "parallel", "shape_dependent",
    "relu", "log_softmax", "softmax", "softplus", "sigmoid", "elu", "leaky_relu", "selu", "gelu", "standardize",
    "glorot_normal", "normal", "ones", "zeros", "glorot", "randn", "logsoftmax",
]  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Argument checks and shape arithmetic (JAX's lax shape rules)


def _int(name, arg, v, positive=True):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise ArgumentTypeError(f"{name}: {arg} must be an int, got {type(v).__name__}")
    if positive and int(v) <= 0:
        raise ShapeError(f"{name}: {arg} must be positive, got {int(v)}")
    return int(v)


def _ints(name, arg, v):
    if not isinstance(v, (tuple, list)):
        raise ArgumentTypeError(f"{name}: {arg} must be a tuple of ints, got {type(v).__name__}")
    return tuple(_int(name, arg, x) for x in v)


def _in_shape(name, input_shape, rank=None):
    """``input_shape`` as a tuple of ints (-1 allowed, for an unknown batch extent)."""
    if not isinstance(input_shape, (tuple, list)):
        raise ArgumentTypeError(f"{name}: input_shape must be a tuple of ints, got {type(input_shape).__name__}")
    out = tuple(_int(name, "input_shape", d, positive=False) for d in input_shape)
    if rank is not None and len(out) != rank:
        raise ShapeError(f"{name}: input_shape {out} must have {rank} dims")
    return out


def _padding(name, padding):
    if isinstance(padding, str):
        if padding.upper() not in ("SAME", "SAME_LOWER", "VALID"):
            raise ShapeError(f"{name}: padding must be 'SAME', 'SAME_LOWER', 'VALID' or a sequence of (low, high) pairs, got {padding!r}")
        return padding.upper()
    if not isinstance(padding, (tuple, list)):
        raise ArgumentTypeError(f"{name}: padding must be a string or a sequence of (low, high) pairs, got {type(padding).__name__}")
    pairs = []
    for p in padding:
        if not isinstance(p, (tuple, list)) or len(p) != 2:
            raise ShapeError(f"{name}: padding must be a sequence of (low, high) pairs, got {padding!r}")
        pairs.append((_int(name, "padding", p[0], False), _int(name, "padding", p[1], False)))
    return tuple(pairs)


def _specs(name, dimension_numbers, n):
    if not isinstance(dimension_numbers, (tuple, list)) or len(dimension_numbers) != 3 or not all(isinstance(s, str) for s in dimension_numbers):
        raise ArgumentTypeError(f"{name}: dimension_numbers must be three layout strings such as ('NHWC', 'HWIO', 'NHWC'), got {dimension_numbers!r}")
    lhs, rhs, out = dimension_numbers
    for spec, pair in ((lhs, "NC"), (rhs, "OI"), (out, "NC")):
        if spec.count(pair[0]) != 1 or spec.count(pair[1]) != 1 or len(set(spec)) != len(spec):
            raise ShapeError(f"{name}: dimension_numbers spec {spec!r} needs one {pair[0]!r}, one {pair[1]!r} and distinct letters")
    if not set(lhs) - set("NC") == set(rhs) - set("OI") == set(out) - set("NC"):
        raise ShapeError(f"{name}: the spatial letters of dimension_numbers {dimension_numbers!r} must agree")
    if n is not None and len(rhs) != n + 2:
        raise ShapeError(f"{name}: filter_shape has {n} dims, but dimension_numbers {dimension_numbers!r} have {len(rhs) - 2} spatial dims")
    return lhs, rhs, out


def _perms(specs):
    """JAX's conv_general_permutations: (batch, feature, spatial...) orders of lhs, rhs, out,
    the spatial dims in the kernel's order."""
    lhs, rhs, out = specs

    def perm(spec, pair):
        sp = [i for i, c in enumerate(spec) if c not in pair]
        if spec is not rhs:
            sp = sorted(sp, key=lambda i: rhs.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(sp)

    return perm(lhs, "NC"), perm(rhs, "OI"), perm(out, "NC")


def _stride_dim(d, k, s):
    return max((d - k) // s + 1, 0)


def _same_pads(in_shape, window, strides, padding):
    """JAX's lax.padtype_to_pads."""
    if padding == "VALID":
        return [(0, 0)] * len(in_shape)
    out = []
    for x, k, s in zip(in_shape, window, strides):
        total = max((-(-x // s) - 1) * s + k - x, 0)
        lo = total // 2 if padding == "SAME" else total - total // 2
        out.append((lo, total - lo))
    return out


def _unpermute(trans, out_perm):
    shape = [0] * len(trans)
    for pos, d in zip(out_perm, trans):
        shape[pos] = d
    return tuple(int(d) for d in shape)


def _conv_out_shape(name, lhs_shape, rhs_shape, strides, padding, specs):
    lp, rp, op = _perms(specs)
    lhs = [lhs_shape[i] for i in lp]
    rhs = [rhs_shape[i] for i in rp]
    pads = _same_pads(lhs[2:], rhs[2:], strides, padding) if isinstance(padding, str) else list(padding)
    if len(pads) != len(lhs) - 2:
        raise ShapeError(f"{name}: padding needs {len(lhs) - 2} (low, high) pairs, got {len(pads)}")
    padded = [x + lo + hi for x, (lo, hi) in zip(lhs[2:], pads)]
    if any(p < 0 for p in padded):
        raise ShapeError(f"{name}: negative padding {pads} is larger than the input's spatial dims {lhs[2:]}")
    space = [_stride_dim(p, k, s) for p, k, s in zip(padded, rhs[2:], strides)]
    return _unpermute([lhs[0], rhs[0]] + space, op)


def _conv_transpose_out_shape(name, lhs_shape, rhs_shape, strides, padding, specs):
    lp, rp, op = _perms(specs)
    lhs = [lhs_shape[i] for i in lp]
    rhs = [rhs_shape[i] for i in rp]
    if isinstance(padding, str):
        if padding not in ("SAME", "VALID"):
            raise ShapeError(f"{name}: padding must be 'SAME', 'VALID' or a sequence of (low, high) pairs, got {padding!r}")
        pads = [_conv._transpose_pads(k, s, padding) for k, s in zip(rhs[2:], strides)]
    else:
        pads = list(padding)
    if len(pads) != len(lhs) - 2:
        raise ShapeError(f"{name}: padding needs {len(lhs) - 2} (low, high) pairs, got {len(pads)}")
    space = [(i - 1) * s - k + 2 + lo + hi for i, k, s, (lo, hi) in zip(lhs[2:], rhs[2:], strides, pads)]
    return _unpermute([lhs[0], rhs[0]] + space, op)


def _promote(*xs):
    """The arrays converted to their promoted dtype (JAX's x64 lattice)."""
    xs = [_to_array(x) for x in xs]
    d = xs[0].dtype
    for x in xs[1:]:
        d = _join(d, x.dtype)
    return [x if x.dtype == d else _o.astype(x, d) for x in xs]


def _pair(name, params):
    """``params`` as the (W, b) / (beta, gamma) pair of a layer."""
    if not isinstance(params, (tuple, list)) or len(params) != 2:
        raise ArgumentTypeError(f"{name}: params must be the pair init_fun returned, got {type(params).__name__}")
    return params


def _check_init(name, fn):
    if not callable(fn):
        raise ArgumentTypeError(f"{name}: initializers must be callables (key, shape) -> array, got {type(fn).__name__}")
    return fn


# ---------------------------------------------------------------------------------------------
# Layers with parameters


def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):  # noqa: N802, N803 - JAX's names
    """A dense (fully connected) layer, ``inputs @ W + b`` (``stax.Dense``).

    Args:
        out_dim: the number of output features.
        W_init: the initializer of ``W``, shape ``(in_dim, out_dim)`` (default glorot_normal).
        b_init: the initializer of ``b``, shape ``(out_dim,)`` (default normal(1e-2)).

    Returns:
        ``(init_fun, apply_fun)``; ``init_fun`` splits its key into the keys of ``W`` and ``b``.

    Example:
        >>> from quabla.example_libraries import stax
        >>> init, apply = stax.Dense(3)
        >>> shape, (W, b) = init(qb.random.key(0), (-1, 2))
        >>> shape, W.shape, b.shape
        ((-1, 3), (2, 3), (3,))
    """
    name = "Dense"
    out_dim = _int(name, "out_dim", out_dim)
    _check_init(name, W_init)
    _check_init(name, b_init)

    def init_fun(rng, input_shape):
        input_shape = _in_shape(name, input_shape)
        if not input_shape:
            raise ShapeError(f"{name}: input_shape must have at least one dim")
        k1, k2 = _random.split(rng)
        W, b = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return input_shape[:-1] + (out_dim,), (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = _pair(name, params)
        x, W, b = _promote(inputs, W, b)
        return _o.dot(x, W) + b

    return init_fun, apply_fun


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID", W_init=None, b_init=normal(1e-6)):  # noqa: N802, N803
    """A convolution layer with the given layouts (``stax.GeneralConv``).

    Args:
        dimension_numbers: (lhs, rhs, out) layout strings, e.g. ('NHWC', 'HWIO', 'NHWC').
        out_chan: the number of output channels.
        filter_shape: the kernel's spatial shape.
        strides: the window strides (default 1).
        padding: 'SAME', 'SAME_LOWER', 'VALID' or (low, high) pairs.
        W_init: the kernel initializer (default glorot_normal over the kernel's I and O axes).
        b_init: the bias initializer (default normal(1e-6)); the bias has the output's rank,
            ``out_chan`` on the C axis and 1 elsewhere.

    Returns:
        ``(init_fun, apply_fun)``.

    Example:
        >>> from quabla.example_libraries import stax
        >>> init, apply = stax.GeneralConv(("NCHW", "OIHW", "NCHW"), 4, (3, 3))
        >>> shape, (W, b) = init(qb.random.key(0), (2, 3, 8, 8))
        >>> shape, W.shape, b.shape
        ((2, 4, 6, 6), (4, 3, 3, 3), (1, 4, 1, 1))
    """
    return _conv_layer("GeneralConv", dimension_numbers, out_chan, filter_shape, strides, padding, W_init, b_init, _conv_out_shape,
                       lambda x, W, strides, padding, one, specs: _conv.conv_general_dilated(x, W, strides, padding, one, one, dimension_numbers=specs))


def _conv_layer(name, dimension_numbers, out_chan, filter_shape, strides, padding, W_init, b_init, out_shape, conv):
    """The (init_fun, apply_fun) of a convolution layer: ``out_shape`` gives its output
    shape, ``conv(x, W, strides, padding, ones, specs)`` applies it (plain or transposed)."""
    filter_shape = _ints(name, "filter_shape", filter_shape)
    lhs_spec, rhs_spec, out_spec = specs = _specs(name, dimension_numbers, len(filter_shape))
    out_chan = _int(name, "out_chan", out_chan)
    one = (1,) * len(filter_shape)
    strides = _ints(name, "strides", strides) if strides else one
    if len(strides) != len(filter_shape):
        raise ShapeError(f"{name}: strides {strides} need one entry per filter dim {filter_shape}")
    padding = _padding(name, padding)
    W_init = _check_init(name, W_init) if W_init is not None else glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))
    _check_init(name, b_init)

    def init_fun(rng, input_shape):
        input_shape = _in_shape(name, input_shape, len(lhs_spec))
        it = iter(filter_shape)
        kernel_shape = [out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I" else next(it) for c in rhs_spec]
        output_shape = out_shape(name, input_shape, kernel_shape, strides, padding, specs)
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = _random.split(rng)
        W, b = W_init(k1, kernel_shape), b_init(k2, bias_shape)
        return output_shape, (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = _pair(name, params)
        x, W, b = _promote(inputs, W, b)
        return conv(x, W, strides, padding, one, specs) + b

    return init_fun, apply_fun


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))
Conv.__doc__ = """``GeneralConv`` with ``('NHWC', 'HWIO', 'NHWC')`` layouts (``stax.Conv``):
``Conv(out_chan, filter_shape, strides=None, padding='VALID', W_init=None, b_init=normal(1e-6))``.

Example:
    >>> from quabla.example_libraries import stax
    >>> stax.Conv(8, (3, 3), padding="SAME")[0](qb.random.key(0), (-1, 28, 28, 1))[0]
    (-1, 28, 28, 8)
"""


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID", W_init=None, b_init=normal(1e-6)):  # noqa: N802, N803
    """A transposed-convolution layer with the given layouts (``stax.GeneralConvTranspose``,
    over ``qb.conv_transpose``).

    Args:
        dimension_numbers: (lhs, rhs, out) layout strings, e.g. ('NHWC', 'HWIO', 'NHWC').
        out_chan: the number of output channels.
        filter_shape: the kernel's spatial shape.
        strides: the strides (the input's dilation; default 1).
        padding: 'SAME', 'VALID' or (low, high) pairs.
        W_init: the kernel initializer (default glorot_normal over the kernel's I and O axes).
        b_init: the bias initializer (default normal(1e-6)).

    Returns:
        ``(init_fun, apply_fun)``.

    Example:
        >>> from quabla.example_libraries import stax
        >>> init, apply = stax.ConvTranspose(4, (3, 3), strides=(2, 2), padding="SAME")
        >>> shape, params = init(qb.random.key(0), (1, 5, 5, 2))
        >>> shape, apply(params, qb.ones((1, 5, 5, 2))).shape
        ((1, 10, 10, 4), (1, 10, 10, 4))
    """
    return _conv_layer("GeneralConvTranspose", dimension_numbers, out_chan, filter_shape, strides, padding, W_init, b_init, _conv_transpose_out_shape,
                       lambda x, W, strides, padding, one, specs: _conv.conv_transpose(x, W, strides, padding, dimension_numbers=specs))


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
Conv1DTranspose.__doc__ = """``GeneralConvTranspose`` with ``('NHC', 'HIO', 'NHC')`` layouts (``stax.Conv1DTranspose``).

Example:
    >>> from quabla.example_libraries import stax
    >>> stax.Conv1DTranspose(3, (2,), strides=(2,))[0](qb.random.key(0), (1, 4, 2))[0]
    (1, 8, 3)
"""
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))
ConvTranspose.__doc__ = """``GeneralConvTranspose`` with ``('NHWC', 'HWIO', 'NHWC')`` layouts (``stax.ConvTranspose``).

Example:
    >>> from quabla.example_libraries import stax
    >>> stax.ConvTranspose(3, (2, 2), strides=(2, 2))[0](qb.random.key(0), (1, 4, 4, 2))[0]
    (1, 8, 8, 3)
"""


def _axes_tuple(name, axis):
    if isinstance(axis, (int, np.integer)) and not isinstance(axis, (bool, np.bool_)):
        return (int(axis),)
    if isinstance(axis, (tuple, list)):
        return tuple(_int(name, "axis", a, positive=False) for a in axis)
    raise ArgumentTypeError(f"{name}: axis must be an int or a tuple of ints, got {type(axis).__name__}")


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros, gamma_init=ones):  # noqa: N802
    """Batch normalization over ``axis`` (the statistics of the batch being applied;
    ``stax.BatchNorm``): ``gamma * standardize(x, axis) + beta``.

    Args:
        axis: the axes reduced (default (0, 1, 2), NHWC's batch and spatial axes).
        epsilon: added to the variance.
        center: learn the offset ``beta``.
        scale: learn the scale ``gamma``.
        beta_init, gamma_init: their initializers (zeros, ones), of the input shape without
            ``axis``; a parameter left out is ``()``.

    Returns:
        ``(init_fun, apply_fun)``.

    Example:
        >>> from quabla.example_libraries import stax
        >>> init, apply = stax.BatchNorm(axis=0)
        >>> _, params = init(qb.random.key(0), (4, 2))
        >>> [[round(v, 4) for v in row] for row in apply(params, qb.array([[1.0, 2.0], [3.0, 6.0]])).tolist()]
        [[-1.0, -1.0], [1.0, 1.0]]
    """
    name = "BatchNorm"
    axis = _axes_tuple(name, axis)
    _check_init(name, beta_init)
    _check_init(name, gamma_init)

    def init_fun(rng, input_shape):
        input_shape = _in_shape(name, input_shape)
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = _random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = _pair(name, params)
        x = _to_array(x)
        ed = tuple(None if i in axis else slice(None) for i in range(x.ndim))
        z = standardize(x, axis, epsilon=epsilon)
        if center and scale:
            z, g, b = _promote(z, gamma, beta)
            return g[ed] * z + b[ed]
        if center:
            z, b = _promote(z, beta)
            return z + b[ed]
        if scale:
            z, g = _promote(z, gamma)
            return g[ed] * z
        return z

    return init_fun, apply_fun


# ---------------------------------------------------------------------------------------------
# Elementwise layers


def elementwise(fun, **fun_kwargs):
    """A layer without parameters applying ``fun(inputs, **fun_kwargs)`` (``stax.elementwise``).

    Args:
        fun: the function.
        **fun_kwargs: its keyword arguments.

    Returns:
        ``(init_fun, apply_fun)``; the output shape is the input shape.

    Example:
        >>> from quabla.example_libraries import stax
        >>> init, apply = stax.elementwise(qb.nn.leaky_relu, negative_slope=0.5)
        >>> apply((), qb.array([-2.0, 3.0])).tolist()
        [-1.0, 3.0]
    """
    if not callable(fun):
        raise ArgumentTypeError(f"elementwise: fun must be callable, got {type(fun).__name__}")

    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)

    return init_fun, apply_fun


Tanh = elementwise(_o.tanh)
Relu = elementwise(relu)
Exp = elementwise(_o.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


# ---------------------------------------------------------------------------------------------
# Pooling


def _pooling_layer(kind, doc_name):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):  # noqa: N802
        name = doc_name
        window_shape = _ints(name, "window_shape", window_shape)
        strides = _ints(name, "strides", strides) if strides else (1,) * len(window_shape)
        if len(strides) != len(window_shape):
            raise ShapeError(f"{name}: strides {strides} need one entry per window dim {window_shape}")
        padding = _padding(name, padding)
        if spec is None:
            non_spatial = (0, len(window_shape) + 1)
        else:
            if not isinstance(spec, str) or spec.count("N") != 1 or spec.count("C") != 1 or len(spec) != len(window_shape) + 2:
                raise ShapeError(f"{name}: spec must be a layout string with one 'N', one 'C' and {len(window_shape)} spatial letters, got {spec!r}")
            non_spatial = (spec.index("N"), spec.index("C"))
        spatial_window, spatial_strides = window_shape, strides
        for i in sorted(non_spatial):
            window_shape = window_shape[:i] + (1,) + window_shape[i:]
            strides = strides[:i] + (1,) + strides[i:]
        rank = len(window_shape)
        if not isinstance(padding, str) and len(padding) != rank:
            raise ShapeError(f"{name}: padding needs {rank} (low, high) pairs (one per input dim), got {len(padding)}")

        def init_fun(rng, input_shape):
            input_shape = _in_shape(name, input_shape, rank)
            pads = _same_pads(input_shape, window_shape, strides, padding) if isinstance(padding, str) else padding
            return tuple(_stride_dim(d + lo + hi, k, s) for d, (lo, hi), k, s in zip(input_shape, pads, window_shape, strides)), ()

        def apply_fun(params, inputs, **kwargs):
            x = _to_array(inputs)
            if x.ndim != rank:
                raise ShapeError(f"{name}: inputs of shape {tuple(x.shape)} need {rank} dims for window {spatial_window}")
            if kind == "max":
                init = -math.inf if x.dtype.is_float else int(np.iinfo(x.dtype.np).min)
                return _conv.reduce_window(x, init, "max", window_shape, strides, padding)
            out = _conv.reduce_window(x, 0, "add", window_shape, strides, padding)
            if kind == "sum":
                return out
            spatial = tuple(d for i, d in enumerate(x.shape) if i not in non_spatial)
            if isinstance(padding, str):
                sp_pad = padding
            else:
                sp_pad = tuple(p for i, p in enumerate(padding) if i not in non_spatial)
            sizes = _window_sizes(spatial, spatial_window, spatial_strides, sp_pad)
            for i in sorted(non_spatial):
                sizes = np.expand_dims(sizes, i)
            return out / _o.asarray(sizes.astype(out.dtype.np))

        return init_fun, apply_fun

    PoolingLayer.__name__ = PoolingLayer.__qualname__ = doc_name
    return PoolingLayer


def _window_sizes(spatial, window, strides, padding):
    """The number of input elements (padding excluded) in each window, on the host (as JAX's
    reduce_window of ones)."""
    pads = _same_pads(spatial, window, strides, padding) if isinstance(padding, str) else padding
    counts = []
    for n, k, s, (lo, hi) in zip(spatial, window, strides, pads):
        m = _stride_dim(n + lo + hi, k, s)
        start = np.arange(m) * s - lo
        counts.append(np.clip(start + k, 0, n) - np.clip(start, 0, n))
    out = counts[0].astype(np.float64)
    for c in counts[1:]:
        out = np.multiply.outer(out, c)
    return out


MaxPool = _pooling_layer("max", "MaxPool")
SumPool = _pooling_layer("sum", "SumPool")
AvgPool = _pooling_layer("avg", "AvgPool")
_POOL_DOC = """{what} pooling over the spatial dims (``stax.{name}``, over ``qb.lax.reduce_window``).

    Args:
        window_shape: the window's spatial shape.
        strides: the spatial strides (default 1).
        padding: 'SAME', 'SAME_LOWER', 'VALID' or one (low, high) pair per input dim.
        spec: the input layout (e.g. 'NCHW'); None means batch first, channels last.

    Returns:
        ``(init_fun, apply_fun)``.{extra}

    Example:
        >>> from quabla.example_libraries import stax
        >>> init, apply = stax.{name}((2, 2), strides=(2, 2))
        >>> init(qb.random.key(0), (-1, 4, 4, 3))[0], apply((), qb.ones((1, 4, 4, 3))).shape
        ((0, 2, 2, 3), (1, 2, 2, 3))
"""
MaxPool.__doc__ = _POOL_DOC.format(what="Max", name="MaxPool", extra="")
SumPool.__doc__ = _POOL_DOC.format(what="Sum", name="SumPool", extra="")
AvgPool.__doc__ = _POOL_DOC.format(what="Average", name="AvgPool", extra=" Windows overlapping the padding average over their\n        input elements only.\n\n    As JAX's, ``init_fun`` gives a batch extent of -1 as 0.")


# ---------------------------------------------------------------------------------------------
# Shape layers and combinators


def _flatten():
    def init_fun(rng, input_shape):
        input_shape = _in_shape("Flatten", input_shape)
        if not input_shape:
            raise ShapeError("Flatten: input_shape must have at least one dim")
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params, inputs, **kwargs):
        x = _to_array(inputs)
        if x.ndim == 0:
            raise ShapeError("Flatten: inputs must have at least one dim")
        return _o.reshape(x, (x.shape[0], -1))

    return init_fun, apply_fun


Flatten = _flatten()
"""Flattens all but the leading dim (``stax.Flatten``, a layer, not a constructor)."""


def _identity():
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return inputs

    return init_fun, apply_fun


Identity = _identity()


def FanOut(num):  # noqa: N802
    """A layer copying its input ``num`` times into a list (``stax.FanOut``), to feed
    :func:`parallel`.

    Args:
        num: the number of copies.

    Returns:
        ``(init_fun, apply_fun)``.

    Example:
        >>> from quabla.example_libraries import stax
        >>> stax.FanOut(2)[0](None, (3, 4))
        ([(3, 4), (3, 4)], ())
    """
    num = _int("FanOut", "num", num)
    if num > 2**16:
        raise InvalidArgumentError(f"FanOut: num must be at most 65536 copies, got {num}")

    def init_fun(rng, input_shape):
        return [input_shape] * num, ()

    def apply_fun(params, inputs, **kwargs):
        return [inputs] * num

    return init_fun, apply_fun


def _fan_in_sum():
    def init_fun(rng, input_shape):
        if not isinstance(input_shape, (tuple, list)) or not input_shape:
            raise ArgumentTypeError("FanInSum: input_shape must be a non-empty sequence of the inputs' shapes")
        return input_shape[0], ()

    def apply_fun(params, inputs, **kwargs):
        if not isinstance(inputs, (tuple, list)) or not inputs:
            raise ArgumentTypeError("FanInSum: inputs must be a non-empty sequence of arrays")
        total = inputs[0]
        for x in inputs[1:]:
            total = total + x
        return total

    return init_fun, apply_fun


FanInSum = _fan_in_sum()


def FanInConcat(axis=-1):  # noqa: N802
    """A layer concatenating a list of inputs along ``axis`` (``stax.FanInConcat``).

    Args:
        axis: the concatenation axis.

    Returns:
        ``(init_fun, apply_fun)``.

    Example:
        >>> from quabla.example_libraries import stax
        >>> stax.FanInConcat()[0](None, [(2, 3), (2, 5)])[0]
        (2, 8)
    """
    axis = _int("FanInConcat", "axis", axis, positive=False)

    def init_fun(rng, input_shape):
        if not isinstance(input_shape, (tuple, list)) or not input_shape or not all(isinstance(s, (tuple, list)) and len(s) == len(input_shape[0]) for s in input_shape):
            raise ArgumentTypeError("FanInConcat: input_shape must be a non-empty sequence of shapes of one rank")
        r = len(input_shape[0])
        if not -r <= axis < r:
            raise ShapeError(f"FanInConcat: axis {axis} is out of range for rank {r}")
        ax = axis % r
        size = sum(s[ax] for s in input_shape)
        first = tuple(input_shape[0])
        return first[:ax] + (size,) + first[ax + 1:], ()

    def apply_fun(params, inputs, **kwargs):
        if not isinstance(inputs, (tuple, list)) or not inputs:
            raise ArgumentTypeError(f"FanInConcat: inputs must be a non-empty sequence of arrays, got {type(inputs).__name__}")
        return _o.concatenate(list(inputs), axis)

    return init_fun, apply_fun


def Dropout(rate, mode="train"):  # noqa: N802
    """Dropout (``stax.Dropout``): in 'train' mode each element is kept with probability
    ``rate`` and divided by ``rate`` (as JAX's stax, ``rate`` is the *keep* probability), else
    set to 0; any other mode is the identity.

    Args:
        rate: the keep probability.
        mode: 'train' or anything else (e.g. 'test').

    Returns:
        ``(init_fun, apply_fun)``; ``apply_fun`` needs ``rng=key`` (InvalidArgumentError
        without it, JAX's ValueError).

    Example:
        >>> from quabla.example_libraries import stax
        >>> init, apply = stax.Dropout(0.5)
        >>> y = apply((), qb.ones(1000), rng=qb.random.key(0))
        >>> sorted(set(y.tolist()))
        [0.0, 2.0]
    """
    if not is_array(rate) and (isinstance(rate, (bool, np.bool_)) or not isinstance(rate, (int, float, np.integer, np.floating))):
        raise ArgumentTypeError(f"Dropout: rate must be a number, got {type(rate).__name__}")

    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if rng is None:
            raise InvalidArgumentError(
                "Dropout layer requires apply_fun to be called with a PRNG key argument. That is, instead of "
                "`apply_fun(params, inputs)`, call it like `apply_fun(params, inputs, rng)` where `rng` is a PRNG key "
                "(e.g. from `qb.random.key`)."
            )
        if mode == "train":
            x = _to_array(inputs)
            keep = _random.bernoulli(rng, rate, tuple(x.shape))
            return _o.where(keep, x / rate, 0)
        return inputs

    return init_fun, apply_fun


def _layers(name, layers):
    for i, layer in enumerate(layers):
        if not isinstance(layer, (tuple, list)) or len(layer) != 2 or not all(callable(f) for f in layer):
            raise ArgumentTypeError(f"{name}: layer {i} must be an (init_fun, apply_fun) pair, got {type(layer).__name__}")
    return [lay[0] for lay in layers], [lay[1] for lay in layers]


def _split_rng(rng, n):
    if rng is None:
        return [None] * n
    keys = _random.split(rng, n)
    return [keys[j] for j in range(n)]


def serial(*layers):
    """Composes layers in sequence (``stax.serial``).

    Args:
        *layers: ``(init_fun, apply_fun)`` pairs.

    Returns:
        ``(init_fun, apply_fun)``: ``init_fun`` splits its key once per layer (keeping the
        first half as the next key) and returns the list of the layers' parameters;
        ``apply_fun`` splits ``rng`` (when given) into one key per layer.

    Example:
        >>> from quabla.example_libraries import stax
        >>> init, apply = stax.serial(stax.Dense(3), stax.Tanh)
        >>> shape, params = init(qb.random.key(0), (2, 4))
        >>> shape, len(params), apply(params, qb.ones((2, 4))).shape
        ((2, 3), 2, (2, 3))
    """
    nlayers = len(layers)
    init_funs, apply_funs = _layers("serial", layers)

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = _random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        if not isinstance(params, (tuple, list)) or len(params) != nlayers:
            raise ArgumentTypeError(f"serial: params must be a list of {nlayers} layers' parameters, got {type(params).__name__}")
        for fun, param, r in zip(apply_funs, params, _split_rng(rng, nlayers)):
            inputs = fun(param, inputs, rng=r, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers):
    """Applies layers side by side, the i-th to the i-th of a sequence of inputs
    (``stax.parallel``; used with :func:`FanOut` and :func:`FanInSum`/:func:`FanInConcat`).

    Args:
        *layers: ``(init_fun, apply_fun)`` pairs.

    Returns:
        ``(init_fun, apply_fun)`` taking and returning sequences (one entry per layer).

    Example:
        >>> from quabla.example_libraries import stax
        >>> init, apply = stax.serial(stax.FanOut(2), stax.parallel(stax.Dense(3), stax.Identity), stax.FanInConcat())
        >>> init(qb.random.key(0), (5, 2))[0]
        (5, 5)
    """
    nlayers = len(layers)
    init_funs, apply_funs = _layers("parallel", layers)

    def init_fun(rng, input_shape):
        if not isinstance(input_shape, (tuple, list)) or len(input_shape) != nlayers:
            raise ArgumentTypeError(f"parallel: input_shape must be a sequence of {nlayers} shapes")
        rngs = _split_rng(rng, nlayers)
        pairs = [init(r, s) for init, r, s in zip(init_funs, rngs, input_shape)]
        return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        if not isinstance(inputs, (tuple, list)) or len(inputs) != nlayers:
            raise ArgumentTypeError(f"parallel: inputs must be a sequence of {nlayers} arrays")
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs, _split_rng(rng, nlayers))]

    return init_fun, apply_fun


def shape_dependent(make_layer):
    """Delays building a layer until the input shape is known (``stax.shape_dependent``).

    Args:
        make_layer: ``input_shape -> (init_fun, apply_fun)``.

    Returns:
        ``(init_fun, apply_fun)`` calling ``make_layer`` with the input's shape.

    Example:
        >>> from quabla.example_libraries import stax
        >>> init, apply = stax.shape_dependent(lambda s: stax.Dense(s[-1]))
        >>> init(qb.random.key(0), (2, 7))[0]
        (2, 7)
    """
    if not callable(make_layer):
        raise ArgumentTypeError(f"shape_dependent: make_layer must be callable, got {type(make_layer).__name__}")

    def layer(shape):
        made = make_layer(shape)
        if not isinstance(made, (tuple, list)) or len(made) != 2 or not all(callable(f) for f in made):
            raise ArgumentTypeError(f"shape_dependent: make_layer must return an (init_fun, apply_fun) pair, got {type(made).__name__}")
        return made

    def init_fun(rng, input_shape):
        return layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return layer(tuple(_to_array(inputs).shape))[1](params, inputs, **kwargs)

    return init_fun, apply_fun
