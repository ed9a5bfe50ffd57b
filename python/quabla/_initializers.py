"""``jax.nn.initializers`` (exposed as ``qb.nn.initializers``): functions
``init(key, shape, dtype=None) -> array`` for the weights of neural-network layers, and the
builders that make them (``normal(stddev)``, ``glorot_uniform(in_axis, out_axis)``, ...), with
JAX's names, signatures, defaults and key usage.

The random initializers are compositions of ``qb.random`` samplers, which reproduce
``jax.random``'s bits for the same key, so they give JAX's samples for the same key
(``uniform``, ``normal``, ``truncated_normal`` and the ``variance_scaling`` family bitwise up
to the last rounding; ``orthogonal``/``delta_orthogonal`` up to the rounding of the QR
factorisation).

Departures from JAX: ``dtype=None`` means float64 (Quabla's default float dtype, as JAX's
with x64 enabled); complex dtypes do not exist here (the complex branches of
``variance_scaling`` are left out, a non-float dtype for a random initializer is a
DTypeError); ``out_sharding`` must be None; a zero extent in ``shape`` is a ShapeError
(Quabla has no zero-size arrays, where JAX's ``orthogonal`` returns an empty array); the
``mode`` and ``distribution`` of ``variance_scaling`` are checked when the initializer is
built (JAX checks them when it is called).

Example:
    >>> from quabla import _initializers as initializers
    >>> w = initializers.glorot_normal()(qb.random.key(0), (3, 4), qb.float32)
    >>> w.shape, w.dtype
    ((3, 4), quabla.float32)
"""

import math
import typing

import numpy as np

from . import _ops as _o
from . import dtypes as _dt
from . import random as _random
from ._ops import _shape_str
from ._shape import moveaxis as _moveaxis
from ._trace import Tracer, is_array
from .dtypes import float64
from .errors import ArgumentTypeError, DTypeError, InvalidArgumentError, ShapeError, UnsupportedOperationError

__all__ = [
    "Initializer",
    "zeros",
    "ones",
    "constant",
    "uniform",
    "normal",
    "truncated_normal",
    "variance_scaling",
    "glorot_uniform",
    "glorot_normal",
    "xavier_uniform",
    "xavier_normal",
    "lecun_uniform",
    "lecun_normal",
    "he_uniform",
    "he_normal",
    "kaiming_uniform",
    "kaiming_normal",
    "orthogonal",
    "delta_orthogonal",
]


@typing.runtime_checkable
class Initializer(typing.Protocol):
    """The type of the functions the initializers module returns:
    ``init(key, shape, dtype=None, out_sharding=None) -> array``
    (``jax.nn.initializers.Initializer``).

    Example:
        >>> from quabla import _initializers as initializers
        >>> isinstance(initializers.normal(), initializers.Initializer)
        True
    """

    def __call__(self, key, shape, dtype=None, out_sharding=None): ...


# ---------------------------------------------------------------------------------------------
# Argument checks


def _shape(name, shape):
    """``shape`` as a tuple of positive Python ints (an int is a 1-D shape, as jnp.zeros)."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, (bool, np.bool_)):
        shape = (shape,)
    if isinstance(shape, Tracer):
        raise ArgumentTypeError(f"{name}: shape must be a tuple of concrete ints, got a traced value")
    if not isinstance(shape, (tuple, list)) and not (isinstance(shape, np.ndarray) and shape.ndim == 1):
        raise ArgumentTypeError(f"{name}: shape must be a tuple of ints, got {type(shape).__name__}")
    out = []
    for d in shape:
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)):
            raise ArgumentTypeError(f"{name}: shape must be a tuple of ints, got {shape!r}")
        out.append(int(d))
    if any(d <= 0 for d in out):
        raise ShapeError(f"{name}: shape {_shape_str(out)} has a zero or negative extent (Quabla has no zero-size arrays)")
    return tuple(out)


def _dtype(name, dtype, float_only):
    d = float64 if dtype is None else _dt.dtype(dtype, name)
    if float_only and not d.is_float:
        raise DTypeError(f"{name}: dtype must be a float dtype (float32, float64), got {d.name}")
    return d


def _sharding(name, out_sharding):
    if out_sharding is not None:
        raise UnsupportedOperationError(f"{name}: out_sharding must be None (Quabla places arrays with qb.device_put), got {out_sharding!r}")


def _scalar(name, arg, v, d):
    """A 0-d array of dtype ``d`` holding ``v`` (a number or a 0-d array), as ``jnp.array(v, d)``."""
    if is_array(v):
        if v.shape != ():
            raise ShapeError(f"{name}: {arg} must be a scalar, got shape {_shape_str(v.shape)}")
        return v if v.dtype is d else _o.astype(v, d)
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)) and not (isinstance(v, np.ndarray) and v.shape == ()):
        raise ArgumentTypeError(f"{name}: {arg} must be a real number, got {type(v).__name__}")
    return _o.asarray(np.asarray(v).astype(d.np), dtype=d)


def _key(name, key):
    return _random._check_key(name, key)


# ---------------------------------------------------------------------------------------------
# Constant initializers


def zeros(key, shape, dtype=None, out_sharding=None):
    """An array of zeros (``jax.nn.initializers.zeros``; ``key`` is ignored).

    Args:
        key: a PRNG key (unused).
        shape: the shape.
        dtype: the dtype (default float64).
        out_sharding: must be None.

    Returns:
        ``qb.zeros(shape, dtype)``.

    Example:
        >>> from quabla import _initializers as initializers
        >>> initializers.zeros(qb.random.key(0), (2,), qb.float32).tolist()
        [0.0, 0.0]
    """
    _sharding("zeros", out_sharding)
    return _o.zeros(_shape("zeros", shape), dtype=_dtype("zeros", dtype, False))


def ones(key, shape, dtype=None, out_sharding=None):
    """An array of ones (``jax.nn.initializers.ones``; ``key`` is ignored).

    Args:
        key: a PRNG key (unused).
        shape: the shape.
        dtype: the dtype (default float64).
        out_sharding: must be None.

    Returns:
        ``qb.ones(shape, dtype)``.

    Example:
        >>> from quabla import _initializers as initializers
        >>> initializers.ones(None, (2,)).tolist()
        [1.0, 1.0]
    """
    _sharding("ones", out_sharding)
    return _o.ones(_shape("ones", shape), dtype=_dtype("ones", dtype, False))


def constant(value, dtype=None):
    """An initializer filling arrays with ``value`` (``jax.nn.initializers.constant``).

    Args:
        value: the fill value (a number or an array broadcasting to the shape).
        dtype: the initializer's default dtype (None: float64).

    Returns:
        ``init(key, shape, dtype=dtype, out_sharding=None)``.

    Example:
        >>> from quabla import _initializers as initializers
        >>> initializers.constant(-7.0)(qb.random.key(0), (1, 2)).tolist()
        [[-7.0, -7.0]]
    """
    if dtype is not None:
        _dt.dtype(dtype, "constant")
    if not is_array(value):
        try:
            np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise ArgumentTypeError(f"constant: value must be a number or an array, got {type(value).__name__}") from None

    def init(key, shape, dtype=dtype, out_sharding=None):
        _sharding("constant", out_sharding)
        d = _dtype("constant", dtype, False)
        shape = _shape("constant", shape)
        v = _o.asarray(value)
        v = v if v.dtype is d else _o.astype(v, d)
        return _o.broadcast_to(v, shape)

    return init


# ---------------------------------------------------------------------------------------------
# Random initializers


def uniform(scale=1e-2, dtype=None):
    """An initializer of uniform samples in ``[0, scale)`` (``jax.nn.initializers.uniform``).

    Args:
        scale: the upper bound.
        dtype: the initializer's default dtype (None: float64).

    Returns:
        ``init(key, shape, dtype=dtype, out_sharding=None)``: ``qb.random.uniform(key,
        shape, dtype) * scale`` (JAX's samples for the same key).

    Example:
        >>> from quabla import _initializers as initializers
        >>> w = initializers.uniform(10.0)(qb.random.key(0), (100,))
        >>> bool((w >= 0).all() and (w < 10).all())
        True
    """
    if dtype is not None:
        _dt.dtype(dtype, "uniform")

    def init(key, shape, dtype=dtype, out_sharding=None):
        _sharding("uniform", out_sharding)
        d = _dtype("uniform", dtype, True)
        return _random.uniform(_key("uniform", key), _shape("uniform", shape), d) * _scalar("uniform", "scale", scale, d)

    return init


def normal(stddev=1e-2, dtype=None):
    """An initializer of normal samples with mean 0 and standard deviation ``stddev``
    (``jax.nn.initializers.normal``).

    Args:
        stddev: the standard deviation.
        dtype: the initializer's default dtype (None: float64).

    Returns:
        ``init(key, shape, dtype=dtype, out_sharding=None)``: ``qb.random.normal(key,
        shape, dtype) * stddev`` (JAX's samples for the same key).

    Example:
        >>> from quabla import _initializers as initializers
        >>> initializers.normal(5.0)(qb.random.key(0), (2, 3), qb.float32).shape
        (2, 3)
    """
    if dtype is not None:
        _dt.dtype(dtype, "normal")

    def init(key, shape, dtype=dtype, out_sharding=None):
        _sharding("normal", out_sharding)
        d = _dtype("normal", dtype, True)
        return _random.normal(_key("normal", key), _shape("normal", shape), d) * _scalar("normal", "stddev", stddev, d)

    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    """An initializer of normal samples truncated to ``(lower, upper)`` and then scaled by
    ``stddev`` (``jax.nn.initializers.truncated_normal``; no variance correction).

    Args:
        stddev: the standard deviation of the untruncated distribution.
        dtype: the initializer's default dtype (None: float64).
        lower, upper: the truncation bounds, before scaling.

    Returns:
        ``init(key, shape, dtype=dtype, out_sharding=None)``.

    Example:
        >>> from quabla import _initializers as initializers
        >>> w = initializers.truncated_normal(1.0)(qb.random.key(0), (100,))
        >>> bool((qb.abs(w) < 2).all())
        True
    """
    if dtype is not None:
        _dt.dtype(dtype, "truncated_normal")

    def init(key, shape, dtype=dtype, out_sharding=None):
        _sharding("truncated_normal", out_sharding)
        d = _dtype("truncated_normal", dtype, True)
        x = _random.truncated_normal(_key("truncated_normal", key), lower, upper, _shape("truncated_normal", shape), d)
        return x * _scalar("truncated_normal", "stddev", stddev, d)

    return init


def _axes(name, arg, v):
    if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (tuple, list)) and all(isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)) for a in v):
        return tuple(int(a) for a in v)
    raise ArgumentTypeError(f"{name}: {arg} must be an int or a sequence of ints, got {v!r}")


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    """(fan_in, fan_out) of a weight ``shape``: the input and output sizes times the
    receptive field (the product of the axes not named in in_axis, out_axis, batch_axis)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ShapeError(
            f"variance_scaling: cannot compute the fans of a {len(shape)}-dimensional weight of shape {_shape_str(shape)} "
            "with the default in_axis=-2; it needs at least 2 dims, or pass in_axis explicitly"
        )

    def size(arg, axes):
        ax = (axes,) if isinstance(axes, int) else axes
        for a in ax:
            if not -len(shape) <= a < len(shape):
                raise ShapeError(f"variance_scaling: {arg} {axes!r} is out of range for a weight of shape {_shape_str(shape)}")
        return math.prod(shape[a] for a in ax)

    in_size, out_size, batch_size = size("in_axis", in_axis), size("out_axis", out_axis), size("batch_axis", batch_axis)
    receptive = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive, out_size * receptive


_MODES = ("fan_in", "fan_out", "fan_avg", "fan_geo_avg")
_DISTRIBUTIONS = ("truncated_normal", "normal", "uniform")
# The standard deviation of a standard normal truncated to (-2, 2).
_TRUNC_STD = 0.87962566103423978


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """An initializer whose samples have variance ``scale / n``, ``n`` being the fan in, the
    fan out, their mean or their geometric mean (``mode``) of the weight shape
    (``jax.nn.initializers.variance_scaling``).

    Axes not in ``in_axis``, ``out_axis`` or ``batch_axis`` are the receptive field (a
    convolution kernel's spatial axes) and multiply both fans.

    Args:
        scale: the scaling factor (positive).
        mode: 'fan_in', 'fan_out', 'fan_avg' or 'fan_geo_avg'.
        distribution: 'truncated_normal' (a normal truncated to two standard deviations,
            rescaled to the variance), 'normal' or 'uniform'.
        in_axis, out_axis, batch_axis: an axis or a sequence of axes of the weight shape.
        dtype: the initializer's default dtype (None: float64; float dtypes only).

    Returns:
        ``init(key, shape, dtype=dtype, out_sharding=None)`` (JAX's samples for the same key).

    Example:
        >>> from quabla import _initializers as initializers
        >>> w = initializers.variance_scaling(2.0, "fan_in", "normal")(qb.random.key(1), (400, 300))
        >>> round(float(w.std()) ** 2 * 400, 1)
        2.0
    """
    name = "variance_scaling"
    if not isinstance(mode, str) or mode not in _MODES:
        raise InvalidArgumentError(f"{name}: mode must be one of {_MODES}, got {mode!r}")
    if not isinstance(distribution, str) or distribution not in _DISTRIBUTIONS:
        raise InvalidArgumentError(f"{name}: distribution must be one of {_DISTRIBUTIONS}, got {distribution!r}")
    if not is_array(scale) and (isinstance(scale, (bool, np.bool_)) or not isinstance(scale, (int, float, np.integer, np.floating))):
        raise ArgumentTypeError(f"{name}: scale must be a real number, got {type(scale).__name__}")
    in_axis = _axes(name, "in_axis", in_axis)
    out_axis = _axes(name, "out_axis", out_axis)
    batch_axis = _axes(name, "batch_axis", batch_axis)
    if dtype is not None:
        _dt.dtype(dtype, name)

    def init(key, shape, dtype=dtype, out_sharding=None):
        _sharding(name, out_sharding)
        shape = _shape(name, shape)
        d = _dtype(name, dtype, True)
        key = _key(name, key)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2, "fan_geo_avg": (fan_in * fan_out) ** 0.5}[mode]
        variance = _scalar(name, "scale", scale / n, d)
        if distribution == "truncated_normal":
            stddev = _o.sqrt(variance) / _scalar(name, "scale", _TRUNC_STD, d)
            return _random.truncated_normal(key, -2, 2, shape, d) * stddev
        if distribution == "normal":
            return _random.normal(key, shape, d) * _o.sqrt(variance)
        return _random.uniform(key, shape, d, -1) * _o.sqrt(variance * 3)

    return init


def _family(doc_name, scale, mode, distribution):
    def builder(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
        return variance_scaling(scale, mode, distribution, in_axis=in_axis, out_axis=out_axis, batch_axis=batch_axis, dtype=dtype)

    builder.__name__ = builder.__qualname__ = doc_name
    builder.__doc__ = f"""A {doc_name} initializer: ``variance_scaling({scale}, '{mode}', '{distribution}')``
    (``jax.nn.initializers.{doc_name}``).

    Args:
        in_axis, out_axis, batch_axis: an axis or a sequence of axes of the weight shape.
        dtype: the initializer's default dtype (None: float64).

    Returns:
        ``init(key, shape, dtype=dtype, out_sharding=None)``.

    Example:
        >>> from quabla import _initializers as initializers
        >>> initializers.{doc_name}()(qb.random.key(0), (3, 5), qb.float32).dtype
        quabla.float32
    """
    return builder


glorot_uniform = _family("glorot_uniform", 1.0, "fan_avg", "uniform")
glorot_normal = _family("glorot_normal", 1.0, "fan_avg", "truncated_normal")
lecun_uniform = _family("lecun_uniform", 1.0, "fan_in", "uniform")
lecun_normal = _family("lecun_normal", 1.0, "fan_in", "truncated_normal")
he_uniform = _family("he_uniform", 2.0, "fan_in", "uniform")
he_normal = _family("he_normal", 2.0, "fan_in", "truncated_normal")
xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


# ---------------------------------------------------------------------------------------------
# Orthogonal initializers


def _column_axis(name, column_axis):
    if isinstance(column_axis, (bool, np.bool_)) or not isinstance(column_axis, (int, np.integer)):
        raise ArgumentTypeError(f"{name}: column_axis must be an int, got {type(column_axis).__name__}")
    return int(column_axis)


def orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """An initializer of (scaled) Haar-random orthogonal matrices: the axis ``column_axis``
    holds the columns, all the other axes together the rows; the smaller side is orthonormal
    (``jax.nn.initializers.orthogonal``).

    Args:
        scale: the factor the orthogonal matrix is multiplied by.
        column_axis: the axis of the columns.
        dtype: the initializer's default dtype (None: float64).

    Returns:
        ``init(key, shape, dtype=dtype, out_sharding=None)`` for shapes of at least 2 dims,
        drawing ``qb.random.orthogonal`` as JAX does (JAX's values up to the rounding of the
        QR factorisation).

    Example:
        >>> from quabla import _initializers as initializers
        >>> q = initializers.orthogonal()(qb.random.key(0), (3, 3))
        >>> bool(qb.allclose(q.T @ q, qb.eye(3), atol=1e-12))
        True
    """
    name = "orthogonal"
    column_axis = _column_axis(name, column_axis)
    if dtype is not None:
        _dt.dtype(dtype, name)

    def init(key, shape, dtype=dtype, out_sharding=None):
        _sharding(name, out_sharding)
        d = _dtype(name, dtype, True)
        shape = _shape(name, shape)
        if len(shape) < 2:
            raise ShapeError(f"{name}: the initializer needs a shape of at least 2 dims, got {_shape_str(shape)}")
        if not -len(shape) <= column_axis < len(shape):
            raise ShapeError(f"{name}: column_axis {column_axis} is out of range for shape {_shape_str(shape)}")
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        q = _random.orthogonal(_key(name, key), n_rows, (), d, n_cols)
        rest = tuple(s for i, s in enumerate(shape) if i != column_axis % len(shape))
        q = _moveaxis(_o.reshape(q, rest + (n_cols,)), -1, column_axis)
        return _scalar(name, "scale", scale, d) * q

    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """An initializer of delta-orthogonal convolution kernels: zero except at the spatial
    centre, which holds an orthogonal ``(in, out)`` matrix (``jax.nn.initializers.delta_orthogonal``).

    Args:
        scale: the factor the orthogonal matrix is multiplied by.
        column_axis: the axis of the columns of that matrix.
        dtype: the initializer's default dtype (None: float64).

    Returns:
        ``init(key, shape, dtype=dtype, out_sharding=None)`` for 3-, 4- or 5-dim shapes
        whose last extent (fan out) is at least the one before (fan in).

    Example:
        >>> from quabla import _initializers as initializers
        >>> w = initializers.delta_orthogonal()(qb.random.key(0), (3, 2, 2))
        >>> float(qb.abs(w[0]).sum()), w.shape
        (0.0, (3, 2, 2))
    """
    name = "delta_orthogonal"
    column_axis = _column_axis(name, column_axis)
    if dtype is not None:
        _dt.dtype(dtype, name)

    def init(key, shape, dtype=dtype, out_sharding=None):
        _sharding(name, out_sharding)
        d = _dtype(name, dtype, True)
        shape = _shape(name, shape)
        if len(shape) not in (3, 4, 5):
            raise ShapeError(f"{name}: the initializer needs a 3-, 4- or 5-dim shape, got {_shape_str(shape)}")
        if shape[-1] < shape[-2]:
            raise ShapeError(f"{name}: fan_in (shape[-2] = {shape[-2]}) must be at most fan_out (shape[-1] = {shape[-1]}), got shape {_shape_str(shape)}")
        m = orthogonal(scale=scale, column_axis=column_axis, dtype=d)(key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return _o.zeros(shape, dtype=d).at[centre + (Ellipsis,)].set(m)

    return init
