"""``qb.image``: image resampling of ``jax.image`` built from Quabla ops.

Owns :func:`resize`, :func:`scale_and_translate` and :class:`ResizeMethod`, with JAX's
signatures, methods, defaults, dtypes and values. Each resized dimension is a contraction of
the image with an ``[in, out]`` weight matrix built from the method's kernel (the kernel
widened by ``1 / scale`` when downsampling with ``antialias=True``; weights normalised per
output sample; output samples whose centre falls outside the input get zero). ``'nearest'`` is
a gather at ``floor((i + 0.5) * in / out)`` (computed in float32, as JAX).

Weights that depend only on static shapes (all of :func:`resize`, and
:func:`scale_and_translate` with concrete ``scale`` and ``translation``) are built with NumPy
once; traced ``scale``/``translation`` build them from Quabla ops, so the result is
differentiable in them.

dtypes (as JAX with x64): ``'nearest'`` keeps the image's dtype; the other methods return a
float: float32 and float64 images keep their dtype, int64 becomes float64, every other
integer or bool dtype float32.

Example:
    >>> qb.image.resize(qb.array([[0.0, 1.0], [2.0, 3.0]]), (2, 4), "linear").tolist()[0]
    [0.0, 0.25, 0.75, 1.0]
"""

import enum
import functools

import numpy as np

from . import _ops as _o
from . import dtypes as _dt
from ._trace import Tracer, is_array
from .dtypes import float32, float64
from .errors import ArgumentTypeError, InvalidArgumentError, ShapeError, UnsupportedOperationError
from .lax import Precision

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]

_shape_str = _o._shape_str
_EPS32 = float(np.finfo(np.float32).eps)


class ResizeMethod(enum.Enum):
    """The resampling methods of :func:`resize` and :func:`scale_and_translate`
    (``jax.image.ResizeMethod``).

    ``NEAREST`` (nearest neighbour, :func:`resize` only), ``LINEAR`` (triangle kernel),
    ``LANCZOS3`` and ``LANCZOS5`` (Lanczos kernels of radius 3 and 5), ``CUBIC`` (Keys cubic
    kernel, a = -0.5), ``CUBIC_PYTORCH`` (as ``CUBIC`` with ``antialias=True``; without
    antialiasing PyTorch's/OpenCV's cubic kernel, a = -0.75, with the image's edges repeated)
    and ``AREA`` (the overlap of each output pixel's footprint with the input pixels).

    Example:
        >>> qb.image.ResizeMethod.from_string("bilinear").name
        'LINEAR'
    """

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s):
        """The method named ``s``: ``'nearest'``; ``'linear'``, ``'bilinear'``,
        ``'trilinear'``, ``'triangle'``; ``'lanczos3'``; ``'lanczos5'``; ``'cubic'``,
        ``'bicubic'``, ``'tricubic'``; ``'cubic-pytorch'``, ``'bicubic-pytorch'``; ``'area'``.

        Args:
            s: the name (a str).

        Returns:
            The ResizeMethod member.

        Raises:
            InvalidArgumentError: an unknown name (a ValueError, as JAX's).
            ArgumentTypeError: ``s`` is not a string.

        Example:
            >>> qb.image.ResizeMethod.from_string("lanczos3").value
            2
        """
        if not isinstance(s, str):
            raise ArgumentTypeError(f"ResizeMethod.from_string: expected a method name (str), got {type(s).__name__} {_o._short_repr(s)}")
        m = _NAMES.get(s)
        if m is None:
            raise InvalidArgumentError(f"ResizeMethod.from_string: unknown resize method {s!r}; known: {', '.join(sorted(_NAMES))}")
        return m


_NAMES = {
    "nearest": ResizeMethod.NEAREST,
    "linear": ResizeMethod.LINEAR, "bilinear": ResizeMethod.LINEAR, "trilinear": ResizeMethod.LINEAR, "triangle": ResizeMethod.LINEAR,
    "lanczos3": ResizeMethod.LANCZOS3,
    "lanczos5": ResizeMethod.LANCZOS5,
    "cubic": ResizeMethod.CUBIC, "bicubic": ResizeMethod.CUBIC, "tricubic": ResizeMethod.CUBIC,
    "cubic-pytorch": ResizeMethod.CUBIC_PYTORCH, "bicubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
    "area": ResizeMethod.AREA,
}


# ---------------------------------------------------------------------------------------------
# Arguments


def _method_arg(op, method):
    if isinstance(method, ResizeMethod):
        return method
    if isinstance(method, str):
        try:
            return ResizeMethod.from_string(method)
        except InvalidArgumentError:
            raise InvalidArgumentError(f"{op}: unknown resize method {method!r}; known: {', '.join(sorted(_NAMES))}") from None
    # Another library's enum of the same names (jax.image.ResizeMethod).
    if isinstance(method, enum.Enum) and method.name in ResizeMethod.__members__:
        return ResizeMethod[method.name]
    raise ArgumentTypeError(f"{op}: method must be a ResizeMethod or a method name (str), got {type(method).__name__} {_o._short_repr(method)}")


_PRECISIONS = {"default", "high", "highest", "fastest", "bfloat16", "bfloat16_3x", "tensorfloat32", "float32", "any_f32", "f32_f32_f32",
               "f64_f64_f64", "tf32_tf32_f32", "bf16_bf16_f32"}


def _precision_arg(op, precision):
    """Accepts what JAX's dot precision accepts (None, a Precision enum, a precision name, a
    pair of those); Quabla computes the products in the operands' dtype whatever it is."""
    if precision is None or isinstance(precision, enum.Enum):
        return
    if isinstance(precision, str) and precision.lower() in _PRECISIONS:
        return
    if isinstance(precision, (tuple, list)) and len(precision) == 2 and all(p is None or isinstance(p, enum.Enum) or (isinstance(p, str) and p.lower() in _PRECISIONS) for p in precision):
        return
    if type(precision).__name__.endswith("DotAlgorithmPreset") or type(precision).__name__.endswith("DotAlgorithm"):
        return
    raise InvalidArgumentError(f"{op}: precision must be None, a lax.Precision, a precision name or a pair of them, got {type(precision).__name__} {_o._short_repr(precision)}")


def _image_arg(op, image):
    if is_array(image):
        return image
    if isinstance(image, (np.ndarray, np.generic, list, tuple, bool, int, float)):
        return _o.asarray(image)
    raise ArgumentTypeError(f"{op}: image must be an array, got {type(image).__name__} {_o._short_repr(image)}")


def _inexact_dtype(d):
    """JAX's ``promote_dtypes_inexact`` (x64): floats kept, int64 -> float64, other integers
    and bool -> float32."""
    if d.is_float:
        return d
    return float64 if d is _dt.int64 else float32


def _to_inexact(x):
    d = _inexact_dtype(x.dtype)
    return x if x.dtype is d else _o.astype(x, d)


def _shape_and_rank(op, image, shape, dtype):
    shape = _o._shape_arg(op, shape)
    if len(shape) != image.ndim:
        raise ShapeError(f"{op}: shape must have one extent per dimension of the image: shape {_shape_str(shape)} vs image shape {_shape_str(image.shape)}")
    _o._q.check_shape(op, list(shape), dtype.code)
    return shape


# ---------------------------------------------------------------------------------------------
# Kernels, written once for NumPy (static weights) and Quabla ops (traced scale/translation)


class _NumpyOps:
    const = staticmethod(lambda a: a)
    where = staticmethod(np.where)
    maximum = staticmethod(np.maximum)
    minimum = staticmethod(np.minimum)
    sin = staticmethod(np.sin)
    logical_and = staticmethod(np.logical_and)
    abs = staticmethod(np.abs)
    row = staticmethod(lambda a: a[None, :])
    colsum = staticmethod(lambda a: a.sum(axis=0, keepdims=True))

    @staticmethod
    def scatter_rows(w, rows, size):
        out = np.zeros((size, w.shape[1]), w.dtype)
        np.add.at(out, rows, w)
        return out


class _QuablaOps:
    const = staticmethod(_o.asarray)
    where = staticmethod(_o.where)
    maximum = staticmethod(_o.maximum)
    minimum = staticmethod(_o.minimum)
    sin = staticmethod(_o.sin)
    logical_and = staticmethod(_o.logical_and)

    @staticmethod
    def abs(d):
        # |d| whose derivative at 0 is +1, as jnp.abs's (qb.abs's is 0 there).
        return _o.where(d >= 0, d, -d)

    row = staticmethod(lambda a: _o.reshape(a, (1,) + tuple(a.shape)))
    colsum = staticmethod(lambda a: _o.sum(a, axis=0, keepdims=True))

    @staticmethod
    def scatter_rows(w, rows, size):
        onehot = np.zeros((size, len(rows)), w.dtype.np)
        onehot[rows, np.arange(len(rows))] = 1
        return _o.matmul(_o.asarray(onehot), w)


def _triangle(B, x):
    return B.maximum(0.0, 1.0 - x)


def _keys_cubic(B, x):
    out = ((1.5 * x - 2.5) * x) * x + 1.0
    out = B.where(x >= 1.0, ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0, out)
    return B.where(x >= 2.0, 0.0, out)


def _opencv_cubic(B, x):
    a = -0.75
    out = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    out = B.where(x >= 1.0, ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a, out)
    return B.where(x >= 2.0, 0.0, out)


def _lanczos(radius):
    def kernel(B, x):
        y = radius * B.sin(np.pi * x) * B.sin(np.pi * x / radius)
        out = B.where(x > 1e-3, y / B.where(x != 0, np.pi**2 * (x * x), 1.0), 1.0)
        return B.where(x > radius, 0.0, out)
    return kernel


_AREA = object()
# method -> (radius, kernel)
_KERNELS = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.0)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.0)),
    ResizeMethod.CUBIC: (2, _keys_cubic),
    ResizeMethod.CUBIC_PYTORCH: (2, _opencv_cubic),
    ResizeMethod.AREA: (1, _AREA),
}


def _weights(B, np_dtype, m, n, scale, translation, method, antialias):
    """The [m, n] weights of one dimension (input extent m, output extent n) in ``np_dtype``;
    ``scale``/``translation`` are scalars of that dtype (NumPy or Quabla, per ``B``)."""
    if method is ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    edge = method is ResizeMethod.CUBIC_PYTORCH  # and not antialias
    inv_scale = 1.0 / scale
    kernel_scale = B.maximum(inv_scale, 1.0) if antialias else 1.0
    shift = translation * inv_scale
    out_pos = B.const(np.arange(n, dtype=np_dtype))
    sample_f = (out_pos + 0.5) * inv_scale - shift - 0.5
    k = radius if edge else 0
    idx = np.arange(-k, m + k, dtype=np_dtype)[:, None]
    if kernel is _AREA:
        left = out_pos * inv_scale - shift
        right = left + inv_scale
        lj, rj = B.const(idx), B.const(idx + 1.0)
        w = B.maximum(0.0, B.minimum(B.row(right), rj) - B.maximum(B.row(left), lj))
    else:
        d = B.row(sample_f) - B.const(idx)
        w = kernel(B, B.abs(d) / kernel_scale)
    if edge:
        w = B.scatter_rows(w, np.clip(np.arange(-k, m + k), 0, m - 1), m)
    total = B.colsum(w)
    w = B.where(B.abs(total) > 1000.0 * _EPS32, w / B.where(total != 0, total, 1.0), 0.0)
    if not edge:
        inside = B.logical_and(sample_f >= -0.5, sample_f <= m - 0.5)
        w = B.where(B.row(inside), w, 0.0)
    return w


def _static_weights(m, n, method, antialias):
    """resize's weights: scale n/m and translation 0 as Python floats (float64, as JAX's
    weak-typed weights with x64); those of up to 2**20 entries are cached."""
    if m * n <= 1 << 20:
        return _cached_weights(m, n, method, antialias)
    return _build_weights(m, n, method, antialias)


def _build_weights(m, n, method, antialias):
    with np.errstate(all="ignore"):
        w = _weights(_NumpyOps, np.float64, m, n, n / m, 0.0, method, antialias)
    w = np.ascontiguousarray(w, dtype=np.float64)
    w.flags.writeable = False
    return w


_cached_weights = functools.lru_cache(maxsize=64)(_build_weights)


def _contract(x, w, d):
    """``x`` with dimension ``d`` (extent m) replaced by its product with ``w`` [m, n]."""
    r = _o.tensordot(x, w, axes=([d], [0]))
    nd = x.ndim
    if d == nd - 1:
        return r
    return _o.transpose(r, list(range(d)) + [nd - 1] + list(range(d, nd - 1)))


def _apply(x, mats):
    """Contracts ``x`` with one weight matrix per dimension ({dim: [m, n]}), shrinking
    dimensions first."""
    for d in sorted(mats, key=lambda d: mats[d].shape[1] / mats[d].shape[0]):
        x = _contract(x, mats[d], d)
    return x


def _nearest(x, shape):
    for d, (m, n) in enumerate(zip(x.shape, shape)):
        if m == n:
            continue
        f32 = np.float32
        pos = (np.arange(n, dtype=f32) + f32(0.5)) * f32(m) / f32(n)
        idx = np.clip(np.floor(pos.astype(f32)).astype(np.int64), 0, m - 1)
        x = _o.take(x, idx, axis=d)
    return x


# ---------------------------------------------------------------------------------------------
# Public functions


def resize(image, shape, method, antialias=True, precision=Precision.HIGHEST):
    """Resizes ``image`` to ``shape`` (``jax.image.resize``): every dimension whose extent
    changes is resampled (batch and channel dimensions keep their extent in ``shape``),
    with pixel centres at half-integers.

    Methods: ``'nearest'`` (``antialias`` and ``precision`` ignored); ``'linear'`` (also
    ``'bilinear'``, ``'trilinear'``, ``'triangle'``); ``'cubic'`` (``'bicubic'``,
    ``'tricubic'``; Keys, a = -0.5); ``'lanczos3'``; ``'lanczos5'``; ``'cubic-pytorch'``
    (``'bicubic-pytorch'``); ``'area'``; or a :class:`ResizeMethod`. With ``antialias`` the
    kernel is widened by ``in / out`` when downsampling (a low-pass filter); it has no effect
    when upsampling.

    Args:
        image: an array of any rank.
        shape: the output shape, one positive extent per dimension of ``image``.
        method: the method, a name or a :class:`ResizeMethod`.
        antialias: filter when downsampling (default True).
        precision: accepted for JAX compatibility (``qb.lax.Precision``, a name, None);
            products are computed in the result dtype.

    Returns:
        The resized image: for ``'nearest'`` of the image's dtype, otherwise float (float32
        and float64 kept, int64 -> float64, other integers and bool -> float32, as JAX).

    Raises:
        ShapeError: ``shape`` of the wrong length or with a non-positive extent.
        InvalidArgumentError: an unknown method name or precision.
        ArgumentTypeError: an image, shape or method of the wrong type.

    Example:
        >>> qb.image.resize(qb.array([1.0, 2.0, 3.0, 4.0]), (2,), "linear", antialias=False).tolist()
        [1.5, 3.5]
    """
    op = "image.resize"
    image = _image_arg(op, image)
    method = _method_arg(op, method)
    antialias = _o._bool_arg(op, "antialias", antialias)
    _precision_arg(op, precision)
    if method is ResizeMethod.NEAREST:
        shape = _shape_and_rank(op, image, shape, image.dtype)
        return _nearest(image, shape)
    x = _to_inexact(image)
    shape = _shape_and_rank(op, image, shape, x.dtype)
    mats = {}
    for d, (m, n) in enumerate(zip(image.shape, shape)):
        if m != n:
            _o._q.check_shape(op, [m, n], float64.code)
            w = _o._np_alloc(op, _static_weights, m, n, method, antialias)
            mats[d] = _o.asarray(w, dtype=x.dtype)
    return _apply(x, mats)


def _vector_arg(op, name, v, k):
    if isinstance(v, (list, tuple)) and len(v) == 0:
        if k:
            raise ShapeError(f"{op}: {name} must have one entry per spatial dimension ({k}), got an empty sequence")
        return None
    if not is_array(v):
        if not isinstance(v, (np.ndarray, np.generic, list, tuple, int, float)) or isinstance(v, bool):
            raise ArgumentTypeError(f"{op}: {name} must be an array of one number per spatial dimension, got {type(v).__name__} {_o._short_repr(v)}")
        v = _o.asarray(v)
    if v.ndim != 1 or v.shape[0] != k:
        raise ShapeError(f"{op}: {name} must have shape ({k},) (one entry per spatial dimension), got shape {_shape_str(v.shape)}")
    return v


def scale_and_translate(image, shape, spatial_dims, scale, translation, method="linear", antialias=True, precision=Precision.HIGHEST):
    """Resamples ``image`` under a scale and translation of its ``spatial_dims``
    (``jax.image.scale_and_translate``): an input location ``x`` (pixel centres at
    half-integers) maps to ``x * scale + translation`` in the output; each output pixel
    samples the input at the inverse map, and gets 0 where that falls outside the input.
    Differentiable in ``image``, ``scale`` and ``translation`` (which may be traced).

    As JAX's: the output's extents outside ``spatial_dims`` are the image's (``shape``'s
    entries there are not used); ``method='nearest'`` is not supported.

    Args:
        image: an array of any rank.
        shape: the output shape, one positive extent per dimension of ``image``.
        spatial_dims: the K dimensions to transform (ints, negative ones count from the end).
        scale: K scales (an array or sequence), one per spatial dimension.
        translation: K translations, one per spatial dimension.
        method: ``'linear'``, ``'cubic'``, ``'lanczos3'``, ``'lanczos5'``,
            ``'cubic-pytorch'``, ``'area'`` (and their aliases) or a :class:`ResizeMethod`.
        antialias: widen the kernel by ``1 / scale`` when downsampling (default True).
        precision: accepted for JAX compatibility; products are computed in the result dtype.

    Returns:
        The resampled image, a float array (the image's float dtype; int64 -> float64,
        other integers and bool -> float32). Weights are computed in the inexact dtype of
        ``scale`` and ``translation`` and converted to that dtype.

    Raises:
        ShapeError: a shape of the wrong length, ``scale``/``translation`` without one entry
            per spatial dimension.
        InvalidArgumentError: repeated spatial dims, an unknown method or precision.
        UnsupportedOperationError: ``method='nearest'``.

    Example:
        >>> x = qb.array([0.0, 1.0, 2.0, 3.0])
        >>> qb.image.scale_and_translate(x, (4,), (0,), qb.array([1.0]), qb.array([1.0])).tolist()
        [0.0, 0.0, 1.0, 2.0]
    """
    op = "image.scale_and_translate"
    image = _image_arg(op, image)
    method = _method_arg(op, method)
    if method is ResizeMethod.NEAREST:
        raise UnsupportedOperationError(f"{op}: nearest-neighbour resampling is not supported (as in JAX); use resize", op=op)
    antialias = _o._bool_arg(op, "antialias", antialias)
    _precision_arg(op, precision)
    x = _to_inexact(image)
    shape = _shape_and_rank(op, image, shape, x.dtype)
    dims = tuple(_o._norm_axis(op, d, image.ndim, image.shape) for d in _o._ints_arg(op, "spatial_dims", spatial_dims))
    if len(set(dims)) != len(dims):
        raise InvalidArgumentError(f"{op}: spatial_dims {dims} repeat a dimension (image shape {_shape_str(image.shape)})")
    k = len(dims)
    scale = _vector_arg(op, "scale", scale, k)
    translation = _vector_arg(op, "translation", translation, k)
    if k == 0:
        return x
    sd, td = scale.dtype, translation.dtype
    if sd.is_float or td.is_float:
        wd = float64 if float64 in (sd, td) else float32
    else:
        wd = _inexact_dtype(_dt.result_type(op, sd, td))
    traced = type(scale) is Tracer or type(translation) is Tracer
    if traced:
        s, t = _o.astype(scale, wd), _o.astype(translation, wd)
    else:
        s, t = scale.numpy().astype(wd.np), translation.numpy().astype(wd.np)
    mats = {}
    for i, d in enumerate(dims):
        m, n = image.shape[d], shape[d]
        _o._q.check_shape(op, [m, n], wd.code)
        if traced:
            w = _weights(_QuablaOps, wd.np, m, n, s[i], t[i], method, antialias)
        else:
            with np.errstate(all="ignore"):
                w = _o._np_alloc(op, _weights, _NumpyOps, wd.np, m, n, s[i], t[i], method, antialias)
            w = _o.asarray(np.ascontiguousarray(w, dtype=wd.np))
        mats[d] = _o.astype(w, x.dtype)
    return _apply(x, mats)
