"""``qb.scipy.signal``: the parts of ``jax.scipy.signal`` built from Quabla ops.

Owns ``convolve``, ``correlate`` (N-d; modes 'full', 'same', 'valid'), ``convolve2d``,
``correlate2d``, ``fftconvolve`` and ``detrend``, with JAX's signatures, result shapes and
dtypes (integer and bool inputs compute in their inexact dtype: int64 -> float64; bool,
uint8, uint32, int32 -> float32).

Every convolution is computed directly, never by FFT: one N-d ``convolution`` op (the op of
:func:`quabla.lax.conv_general_dilated`) when the smaller operand has at most 256 elements
or one dimension, else 1-D ``convolution`` ops along the axis where the smaller operand is
longest, its other offsets as output features added back at their shifts (products, which
win for many taps). ``method='fft'`` and :func:`fftconvolve`
therefore give JAX's FFT results to rounding (the direct sum is exact where the FFT rounds),
since Quabla has no complex dtype for an FFT. ``precision`` is accepted and ignored (the host
computes in the operands' full precision).

``stft``, ``istft``, ``welch`` and ``csd`` are defined with JAX's signatures but raise
:class:`~quabla.errors.UnsupportedOperationError`: they are built on complex FFTs (complex
spectra, or spectra formed from complex products), and Quabla has no complex dtype.

Example:
    >>> import quabla.scipy.signal as qsig
    >>> qsig.convolve(qb.array([1.0, 2.0, 3.0]), qb.array([1.0, 1.0])).tolist()
    [1.0, 3.0, 5.0, 3.0]
"""

import numpy as np

from .. import _ops as _o
from .. import dtypes as _dt
from .._conv import conv_general_dilated as _conv_general_dilated
from .._math import result_type as _result_type
from .._numpy import pad as _pad
from .._shape import moveaxis as _moveaxis
from .._trace import Tracer
from ..errors import ArgumentTypeError, InvalidArgumentError, QuablaError, ShapeError, UnsupportedOperationError

__all__ = [
    "convolve",
    "correlate",
    "convolve2d",
    "correlate2d",
    "fftconvolve",
    "detrend",
    "stft",
    "istft",
    "welch",
    "csd",
]

_MODES = ("full", "same", "valid")


# ---------------------------------------------------------------------------------------------
# Helpers


def _array(name, arg, x):
    """``x`` as a Quabla array; conversion errors keep their class and name ``name``/``arg``."""
    try:
        return _o._to_array(x)
    except QuablaError as e:
        raise type(e)(f"{name}: {arg}: {e}") from None


def _inexact_pair(name, in1, in2):
    """``in1`` and ``in2`` as float arrays of their common inexact dtype (JAX's
    ``promote_dtypes_inexact``)."""
    a, b = _array(name, "in1", in1), _array(name, "in2", in2)
    d = _dt.to_inexact(_result_type(a, b))
    return _o.astype(a, d), _o.astype(b, d)


def _check_mode(name, mode):
    if not isinstance(mode, str):
        raise ArgumentTypeError(f"{name}: mode must be one of 'full', 'same', 'valid', got {type(mode).__name__}")
    if mode not in _MODES:
        raise InvalidArgumentError(f"{name}: mode must be one of 'full', 'same', 'valid', got {mode!r}")


def _flip_all(x, axes):
    return x[tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(x.ndim))]


# Elements of the (leading output positions x kernel offsets x last-axis output) products
# that one convolution op of _full_window may materialize; past it, the kernel offsets are
# taken in chunks (one op each).
_CHUNK_ELEMENTS = 1 << 23
# Kernels of at most this many taps are one N-d convolution op (_full_window).
_DIRECT_TAPS = 256


def _full_window(a, b, starts, lengths, groups=1):
    """The window ``[starts, starts + lengths)`` of the full N-d convolution of ``a`` and
    ``b`` (floats of one dtype, shapes ``(groups, *sa)`` and ``(groups, *sb)`` with
    ``len(sa) == len(sb) >= 1``), shape ``(groups, *lengths)``.

    The larger operand is the input and the smaller the kernel (the convolution commutes).
    The work is a 1-D ``convolution`` op along the axis where the kernel is longest: the input's other positions are
    its batch, the kernel's other offsets its output features, and each offset's feature
    is added back at its shift (a slice); per-group kernels are grouped features. A kernel
    of at most ``_DIRECT_TAPS`` taps (and any 1-D one) is one N-d convolution op instead (a
    single-channel or depthwise one: each output row summed over the taps in cache). Jitted,
    two threads (2026-12-07), one op / the 1-D decomposition, value and gradient: 512^2 by 7^2
    1.0 / 1.1 ms and 3.1 / 13 ms, 64^3 by 5^3 1.0 / 4.9 and 9.5 / 25; 256^2 by 31^2 5.4 / 1.3
    and 23 / 19 (many taps: the decomposition's products win)."""
    if np.prod(a.shape[1:]) < np.prod(b.shape[1:]):
        a, b = b, a
    nd = a.ndim - 1
    n, k = tuple(a.shape[1:]), tuple(b.shape[1:])
    pads = [(kd - 1 - s, ln + s - nd_) for nd_, kd, s, ln in zip(n, k, starts, lengths)]
    kf = _flip_all(b, set(range(1, nd + 1)))
    if nd == 1 or np.prod(k) <= _DIRECT_TAPS:
        lhs = _o.reshape(a, (1, groups) + n)
        rhs = _o.reshape(kf, (groups, 1) + k)
        r = _conv_general_dilated(lhs, rhs, (1,) * nd, pads, feature_group_count=groups)
        return _o.reshape(r, (groups,) + tuple(lengths))
    # The axis of the longest kernel extent goes last (the 1-D convolution's axis).
    ax = max(range(nd), key=lambda d: (k[d], d))
    if ax != nd - 1:
        a, kf = _moveaxis(a, ax + 1, -1), _moveaxis(kf, ax + 1, -1)
        perm = [d for d in range(nd) if d != ax] + [ax]
        n, k = tuple(n[d] for d in perm), tuple(k[d] for d in perm)
        pads, lengths_p = [pads[d] for d in perm], tuple(lengths[d] for d in perm)
    else:
        lengths_p = tuple(lengths)
    m = nd - 1
    # Pad (or crop) the leading axes so that the window is their valid correlation.
    crop = (slice(None),) + tuple(slice(max(-lo, 0), n[d] - max(-hi, 0)) for d, (lo, hi) in enumerate(pads[:m]))
    if any(lo < 0 or hi < 0 for lo, hi in pads[:m]):
        a = a[crop]
    widths = [(0, 0)] + [(max(lo, 0), max(hi, 0)) for lo, hi in pads[:m]] + [(0, 0)]
    if any(w != (0, 0) for w in widths):
        a = _pad(a, widths)
    P = tuple(a.shape[1:nd])
    L, lw = lengths_p[:m], lengths_p[m]
    kl = k[:m]
    nk = int(np.prod(kl))
    nb = int(np.prod(P))
    w = a.shape[nd]
    lhs = _o.reshape(_moveaxis(a, 0, m), (nb, groups, w))
    rhs_all = _o.reshape(kf, (groups, nk, k[m]))
    chunk = max(1, min(nk, _CHUNK_ELEMENTS // max(1, nb * groups * lw)))
    total = None
    for q0 in range(0, nk, chunk):
        c = min(chunk, nk - q0)
        rhs = _o.reshape(rhs_all if c == nk else rhs_all[:, q0:q0 + c, :], (groups * c, 1, k[m]))
        y = _conv_general_dilated(lhs, rhs, (1,), (pads[m],), feature_group_count=groups)
        y = _o.reshape(y, P + (groups, c, lw))
        for j in range(c):
            q = np.unravel_index(q0 + j, kl)
            part = y[tuple(slice(int(qd), int(qd) + ld) for qd, ld in zip(q, L)) + (slice(None), j, slice(None))]
            total = part if total is None else total + part
    r = _moveaxis(total, m, 0)
    if ax != nd - 1:
        r = _moveaxis(r, -1, ax + 1)
    return r


def _orderable(name, s1, s2):
    """Raises ShapeError unless one shape is at least the other in every dimension."""
    if not (all(x >= y for x, y in zip(s1, s2)) or all(x <= y for x, y in zip(s1, s2))):
        raise ShapeError(f"{name}: one input must be smaller than the other in every dimension, got shapes {_o._shape_str(s1)} and {_o._shape_str(s2)}")


def _window(mode, s1, s2, same_start=None):
    """(starts, lengths) of ``mode``'s output in the full convolution of shapes s1 and s2:
    'full' all of it; 'same' s1's extent from (s2 - 1) // 2 (or ``same_start``); 'valid'
    the |s1 - s2| + 1 positions of full overlap from min(s1, s2) - 1."""
    if mode == "full":
        return (0,) * len(s1), tuple(x + y - 1 for x, y in zip(s1, s2))
    if mode == "same":
        starts = tuple((y - 1) // 2 for y in s2) if same_start is None else same_start
        return starts, tuple(s1)
    return tuple(min(x, y) - 1 for x, y in zip(s1, s2)), tuple(abs(x - y) + 1 for x, y in zip(s1, s2))


def _direct(name, in1, in2, mode, same_start=None):
    """JAX's direct N-d convolution (``_convolve_nd``) of promoted float arrays."""
    _check_mode(name, mode)
    if in1.ndim != in2.ndim:
        raise ShapeError(f"{name}: in1 and in2 must have the same number of dimensions, got shapes {_o._shape_str(in1.shape)} and {_o._shape_str(in2.shape)}")
    _orderable(name, in1.shape, in2.shape)
    if in1.ndim == 0:
        return in1 * in2
    starts, lengths = _window(mode, in1.shape, in2.shape, same_start(in2.shape) if same_start else None)
    r = _full_window(_o.expand_dims(in1, 0), _o.expand_dims(in2, 0), starts, lengths)
    return _o.reshape(r, lengths)


def _check_method(name, method):
    if not isinstance(method, str) or method not in ("auto", "direct", "fft"):
        raise InvalidArgumentError(f"{name}: method must be 'auto', 'direct' or 'fft', got {method!r}")


def _check_fill(name, boundary, fillvalue):
    if not isinstance(boundary, str):
        raise ArgumentTypeError(f"{name}: boundary must be a string ('fill'), got {type(boundary).__name__}")
    if isinstance(fillvalue, Tracer):
        raise UnsupportedOperationError(f"{name}: fillvalue must be the concrete number 0, got a traced value", op=name)
    if isinstance(fillvalue, (str, bytes)) or not (isinstance(fillvalue, (bool, int, float, np.generic, np.ndarray)) or hasattr(fillvalue, "dtype")):
        raise ArgumentTypeError(f"{name}: fillvalue must be a number, got {type(fillvalue).__name__}")
    try:
        nonzero = bool(np.any(np.asarray(fillvalue.numpy() if hasattr(fillvalue, "numpy") else fillvalue) != 0))
    except (TypeError, ValueError):
        raise ArgumentTypeError(f"{name}: fillvalue must be a number, got {type(fillvalue).__name__}") from None
    if boundary != "fill" or nonzero:
        raise UnsupportedOperationError(f"{name}: only boundary='fill' with fillvalue=0 is supported (as JAX's), got boundary={boundary!r}, fillvalue={fillvalue!r}", op=name)


def _check_2d(name, in1, in2):
    if in1.ndim != 2 or in2.ndim != 2:
        raise ShapeError(f"{name}: only 2-dimensional inputs are supported, got shapes {_o._shape_str(in1.shape)} and {_o._shape_str(in2.shape)}")


# ---------------------------------------------------------------------------------------------
# Convolutions


def convolve(in1, in2, mode="full", method="auto", precision=None):
    """N-dimensional convolution of two arrays of the same rank (``jax.scipy.signal.convolve``).

    Computed directly (no FFT) for every ``method``: 'fft' gives
    :func:`fftconvolve`'s result (which also accepts shapes that are not ordered), computed
    directly too, since Quabla has no complex FFT.

    Args:
        in1: the first input.
        in2: the second input, of ``in1``'s rank; for 'auto'/'direct' one input must be at
            least as large as the other in every dimension.
        mode: 'full' (default; every overlap), 'same' (``in1``'s shape, centred) or 'valid'
            (only full overlaps).
        method: 'auto' (default), 'direct' or 'fft'.
        precision: accepted for JAX compatibility and ignored.

    Returns:
        The convolution, in the inputs' common inexact dtype.

    Example:
        >>> import quabla.scipy.signal as qsig
        >>> qsig.convolve(qb.array([1.0, 2.0, 3.0, 2.0, 1.0]), qb.array([1.0, 1.0, 1.0]), mode="same").tolist()
        [3.0, 6.0, 7.0, 6.0, 3.0]
    """
    name = "convolve"
    _check_method(name, method)
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    a, b = _inexact_pair(name, in1, in2)
    return _direct(name, a, b, mode)


def correlate(in1, in2, mode="full", method="auto", precision=None):
    """N-dimensional cross-correlation of two arrays of the same rank
    (``jax.scipy.signal.correlate``): :func:`convolve` of ``in1`` with ``in2`` reversed
    along every axis (computed directly for every ``method``, as :func:`convolve`).

    Args:
        in1: the first input.
        in2: the second input, of ``in1``'s rank.
        mode: 'full' (default), 'same' or 'valid'.
        method: 'auto' (default), 'direct' or 'fft'.
        precision: accepted for JAX compatibility and ignored.

    Returns:
        The cross-correlation, in the inputs' common inexact dtype.

    Example:
        >>> import quabla.scipy.signal as qsig
        >>> qsig.correlate(qb.array([1.0, 2.0, 3.0, 2.0, 1.0]), qb.array([1.0, 3.0, 2.0]), mode="valid").tolist()
        [13.0, 15.0, 11.0]
    """
    name = "correlate"
    _check_method(name, method)
    b = _array(name, "in2", in2)
    b = _flip_all(b, set(range(b.ndim)))
    if method == "fft":
        return fftconvolve(in1, b, mode=mode)
    a, b = _inexact_pair(name, in1, b)
    return _direct(name, a, b, mode)


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """Convolution of two 2-D arrays (``jax.scipy.signal.convolve2d``).

    Args:
        in1: the first input, 2-D.
        in2: the second input, 2-D; one input must be at least as large as the other in
            both dimensions.
        mode: 'full' (default), 'same' or 'valid'.
        boundary: only 'fill' (as JAX's; others raise UnsupportedOperationError).
        fillvalue: only 0 (as JAX's; others raise UnsupportedOperationError).
        precision: accepted for JAX compatibility and ignored.

    Returns:
        The 2-D convolution, in the inputs' common inexact dtype.

    Example:
        >>> import quabla.scipy.signal as qsig
        >>> qsig.convolve2d(qb.array([[1.0, 2.0], [3.0, 4.0]]), qb.array([[1.0, 1.0]])).tolist()
        [[1.0, 3.0, 2.0], [3.0, 7.0, 4.0]]
    """
    name = "convolve2d"
    _check_fill(name, boundary, fillvalue)
    a, b = _inexact_pair(name, in1, in2)
    _check_2d(name, a, b)
    return _direct(name, a, b, mode)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """Cross-correlation of two 2-D arrays (``jax.scipy.signal.correlate2d``).

    As JAX's, 'same' centres differently from :func:`correlate` for an even extent of
    ``in2``: its window starts at ``in2.shape[d] // 2`` of the full correlation (``correlate``
    at ``(in2.shape[d] - 1) // 2``), as SciPy's ``correlate2d``.

    Args:
        in1: the first input, 2-D.
        in2: the second input, 2-D.
        mode: 'full' (default), 'same' or 'valid'.
        boundary: only 'fill' (as JAX's; others raise UnsupportedOperationError).
        fillvalue: only 0 (as JAX's; others raise UnsupportedOperationError).
        precision: accepted for JAX compatibility and ignored.

    Returns:
        The 2-D cross-correlation, in the inputs' common inexact dtype.

    Example:
        >>> import quabla.scipy.signal as qsig
        >>> qsig.correlate2d(qb.array([[1.0, 2.0], [3.0, 4.0]]), qb.array([[1.0, 2.0]]), mode="valid").tolist()
        [[5.0], [11.0]]
    """
    name = "correlate2d"
    _check_fill(name, boundary, fillvalue)
    a, b = _inexact_pair(name, in1, in2)
    _check_2d(name, a, b)
    b = _flip_all(b, {0, 1})
    return _direct(name, a, b, mode, same_start=lambda s2: tuple(y // 2 for y in s2))


def fftconvolve(in1, in2, mode="full", axes=None):
    """N-dimensional convolution (``jax.scipy.signal.fftconvolve``), computed directly (by
    convolution ops, exact where the FFT rounds) since Quabla has no complex FFT.

    As JAX's: 'full' and 'same' accept any shapes of one rank (a dimension of ``in2`` may be
    larger than ``in1``'s while another is smaller); 'valid' needs one input at least as
    large as the other in every convolved dimension; with ``axes`` the other dimensions must
    be equal and are mapped (each slice convolved with its own partner).

    Args:
        in1: the first input.
        in2: the second input, of ``in1``'s rank.
        mode: 'full' (default), 'same' or 'valid'.
        axes: the axes to convolve along (an int or a sequence; None: all).

    Returns:
        The convolution, in the inputs' common inexact dtype.

    Example:
        >>> import quabla.scipy.signal as qsig
        >>> qsig.fftconvolve(qb.array([1.0, 2.0, 3.0, 2.0, 1.0]), qb.array([1.0, 1.0, 1.0]), mode="valid").tolist()
        [6.0, 7.0, 6.0]
    """
    name = "fftconvolve"
    a, b = _inexact_pair(name, in1, in2)
    if a.ndim != b.ndim:
        raise ShapeError(f"{name}: in1 and in2 should have the same dimensionality, got shapes {_o._shape_str(a.shape)} and {_o._shape_str(b.shape)}")
    _check_mode(name, mode)
    nd = a.ndim
    if axes is None:
        conv_axes = list(range(nd))
    else:
        conv_axes = sorted({_o._norm_axis(name, ax, nd, a.shape) for ax in _o._ints_arg(name, "axes", axes)})
    mapped = [i for i in range(nd) if i not in conv_axes]
    if any(a.shape[i] != b.shape[i] for i in mapped):
        raise ShapeError(f"{name}: mapped axes must have the same extent, got shapes {_o._shape_str(a.shape)} and {_o._shape_str(b.shape)} with axes {tuple(conv_axes)}")
    s1 = tuple(a.shape[i] for i in conv_axes)
    s2 = tuple(b.shape[i] for i in conv_axes)
    if mode == "valid":
        _orderable(name, s1, s2)
    if not conv_axes:
        return a * b
    starts, lengths = _window(mode, s1, s2)
    if not mapped:
        return _o.reshape(_full_window(_o.expand_dims(a, 0), _o.expand_dims(b, 0), starts, lengths), lengths)
    # Mapped axes first, flattened into groups of a grouped convolution.
    front = list(range(len(mapped)))
    at, bt = _moveaxis(a, mapped, front), _moveaxis(b, mapped, front)
    mshape = tuple(a.shape[i] for i in mapped)
    groups = int(np.prod(mshape))
    r = _full_window(_o.reshape(at, (groups,) + s1), _o.reshape(bt, (groups,) + s2), starts, lengths, groups)
    return _moveaxis(_o.reshape(r, mshape + tuple(lengths)), front, mapped)


# ---------------------------------------------------------------------------------------------
# detrend


def _breakpoints(name, bp, n):
    """The sorted distinct segment bounds 0, bp..., n (static ints)."""
    if isinstance(bp, Tracer):
        raise UnsupportedOperationError(f"{name}: bp must be concrete (static) breakpoints, got a traced value", op=name)
    if hasattr(bp, "numpy") and hasattr(bp, "dtype"):
        bp = bp.numpy()
    try:
        arr = np.asarray(bp)
    except (TypeError, ValueError):
        raise ArgumentTypeError(f"{name}: bp must be an int or a sequence of ints, got a ragged {type(bp).__name__}") from None
    if arr.dtype.kind not in "iu" and not (arr.dtype.kind == "f" and arr.size and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))):
        if not (arr.size == 0 and arr.dtype.kind == "f"):
            raise ArgumentTypeError(f"{name}: bp must be an int or a sequence of ints, got {bp!r:.60}")
    if arr.ndim > 1:
        raise ShapeError(f"{name}: bp must be an int or a 1-D sequence of ints, got shape {arr.shape}")
    pts = sorted({0, n} | {int(v) for v in arr.ravel()})
    if pts[0] < 0 or pts[-1] > n:
        raise InvalidArgumentError(f"{name}: breakpoints must be non-negative and at most the length {n} of the data along the axis, got {bp!r:.60}")
    return pts


def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=None):  # noqa: A002 - SciPy's name
    """Removes a linear (least-squares, piecewise between breakpoints) or constant trend
    along ``axis`` (``jax.scipy.signal.detrend``).

    Each segment's least-squares line is removed in closed form (the data minus its mean
    minus the centred positions times their fitted slope), equal to JAX's ``lstsq`` fit.

    Args:
        data: the data.
        axis: the axis to detrend along (default -1).
        type: 'linear' (default) or 'constant' (subtract the mean).
        bp: breakpoints (static ints, default 0): 'linear' fits one line per segment between
            them.
        overwrite_data: must be None (as JAX's).

    Returns:
        The detrended data, in its inexact dtype.

    Example:
        >>> import quabla.scipy.signal as qsig
        >>> [round(v, 6) + 0.0 for v in qsig.detrend(qb.array([1.0, 4.0, 8.0, 8.0, 9.0])).tolist()]
        [-1.0, 0.0, 2.0, 0.0, -1.0]
    """
    name = "detrend"
    if overwrite_data is not None:
        raise UnsupportedOperationError(f"{name}: overwrite_data is not supported (must be None)", op=name)
    if not isinstance(type, str) or type not in ("linear", "constant"):
        raise InvalidArgumentError(f"{name}: type must be 'linear' or 'constant', got {type!r}")
    x = _array(name, "data", data)
    x = _o._floatify(x)
    ax = _o._norm_axis(name, axis, x.ndim, x.shape)
    if type == "constant":
        return x - _o.mean(x, axis=ax, keepdims=True)
    n = x.shape[ax]
    pts = _breakpoints(name, bp, n)
    pieces = []
    for lo, hi in zip(pts[:-1], pts[1:]):
        m = hi - lo
        seg = x if m == n else x[(slice(None),) * ax + (slice(lo, hi),)]
        centred = seg - _o.mean(seg, axis=ax, keepdims=True)
        if m > 1:
            t = np.arange(m, dtype=np.float64) - (m - 1) / 2.0
            tt = _o.array(t.reshape((m,) + (1,) * (x.ndim - ax - 1)), dtype=x.dtype)
            slope = _o.sum(tt * seg, axis=ax, keepdims=True) / float(np.dot(t, t))
            centred = centred - tt * slope
        pieces.append(centred)
    return pieces[0] if len(pieces) == 1 else _o.concatenate(pieces, axis=ax)


# ---------------------------------------------------------------------------------------------
# Spectral analysis (complex FFTs): unsupported


def _no_complex(name):
    raise UnsupportedOperationError(
        f"{name}: not supported: jax.scipy.signal.{name} is built on complex FFTs (complex spectra or complex cross products), "
        "and Quabla has no complex dtype",
        op=name,
    )


def stft(x, fs=1.0, window="hann", nperseg=256, noverlap=None, nfft=None, detrend=False, return_onesided=True, boundary="zeros", padded=True, axis=-1):
    """The short-time Fourier transform (``jax.scipy.signal.stft``): not supported, since its
    result is complex and Quabla has no complex dtype.

    Args:
        x, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, boundary, padded,
        axis: JAX's arguments.

    Returns:
        Nothing: always raises UnsupportedOperationError.

    Example:
        >>> import quabla.scipy.signal as qsig
        >>> try:
        ...     qsig.stft(qb.ones(8))
        ... except qb.errors.UnsupportedOperationError:
        ...     print("unsupported")
        unsupported
    """
    _no_complex("stft")


def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, input_onesided=True, boundary=True, time_axis=-1, freq_axis=-2):
    """The inverse short-time Fourier transform (``jax.scipy.signal.istft``): not supported,
    since its input is a complex spectrum and Quabla has no complex dtype.

    Args:
        Zxx, fs, window, nperseg, noverlap, nfft, input_onesided, boundary, time_axis,
        freq_axis: JAX's arguments.

    Returns:
        Nothing: always raises UnsupportedOperationError.

    Example:
        >>> import quabla.scipy.signal as qsig
        >>> try:
        ...     qsig.istft(qb.ones((3, 4)))
        ... except qb.errors.UnsupportedOperationError:
        ...     print("unsupported")
        unsupported
    """
    _no_complex("istft")


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, detrend="constant", return_onesided=True, scaling="density", axis=-1, average="mean"):
    """Welch's power spectral density estimate (``jax.scipy.signal.welch``): not supported,
    since it is computed from complex FFTs of the segments and Quabla has no complex dtype.

    Args:
        x, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis,
        average: JAX's arguments.

    Returns:
        Nothing: always raises UnsupportedOperationError.

    Example:
        >>> import quabla.scipy.signal as qsig
        >>> try:
        ...     qsig.welch(qb.ones(8))
        ... except qb.errors.UnsupportedOperationError:
        ...     print("unsupported")
        unsupported
    """
    _no_complex("welch")


def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, detrend="constant", return_onesided=True, scaling="density", axis=-1, average="mean"):
    """The cross spectral density (``jax.scipy.signal.csd``): not supported, since it is
    complex (and computed from complex FFTs) and Quabla has no complex dtype.

    Args:
        x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis,
        average: JAX's arguments.

    Returns:
        Nothing: always raises UnsupportedOperationError.

    Example:
        >>> import quabla.scipy.signal as qsig
        >>> try:
        ...     qsig.csd(qb.ones(8), qb.ones(8))
        ... except qb.errors.UnsupportedOperationError:
        ...     print("unsupported")
        unsupported
    """
    _no_complex("csd")
