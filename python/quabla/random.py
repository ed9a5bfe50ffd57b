"""``qb.random``: counter-based, functional random numbers with JAX's threefry2x32 generator and
bit layout, built from Quabla ops (uint32 adds, xors, shifts), so every sampler works eagerly and
under ``jit``, ``vmap`` (per-example keys) and ``grad`` (keys are integers: no gradient flows to
them; gradients flow through ``minval``/``maxval``, ``p``, ``logits`` and what the samples feed).

Keys are raw ``uint32`` arrays of shape ``(2,)`` (``split`` gives ``(*num, 2)``), the layout of
``jax.random.PRNGKey``; ``key(seed)`` returns the same raw key (JAX returns a typed key array
there; ``key_data``/``wrap_key_data`` are the identity here). With the installed JAX
(``jax_threefry_partitionable=True``) the same seed gives the same bits: ``bits``, ``uniform``
(float32 and float64), ``split``, ``fold_in``, ``randint`` (int32, int64, uint32, uint8), ``permutation``/``choice`` without ``p`` and ``bernoulli``,
``exponential`` and ``gumbel`` up to the rounding of ``log``; ``normal`` and
``truncated_normal`` go through the ``erf_inv`` op, whose CPU kernel computes XLA's erf_inv
operation for operation (bitwise equal to JAX's samples on the CPU).

Departures from JAX: ``bits`` defaults to uint32 and supports uint8/uint32 only (Quabla has no
uint16/uint64); a traced
``lower``/``upper`` of ``truncated_normal`` clips to the closed interval.
"""

import math

import numpy as np

from . import _ops as _o
from . import dtypes as _dt
from ._bits import shift_left, shift_right_logical
from ._ops import _op, _shape_str, _to_array, bind
from ._trace import Tracer, is_array
from .dtypes import float32, float64, int32, int64, uint8, uint32
from .errors import ArgumentTypeError, DTypeError, ShapeError

__all__ = [
    "key",
    "PRNGKey",
    "key_data",
    "wrap_key_data",
    "split",
    "fold_in",
    "bits",
    "uniform",
    "normal",
    "randint",
    "bernoulli",
    "categorical",
    "choice",
    "permutation",
    "truncated_normal",
    "gumbel",
    "exponential",
    "threefry_2x32",
]

_MASK32 = 0xFFFFFFFF


# ---------------------------------------------------------------------------------------------
# The hash


def _u32(x):
    """``x`` as a uint32 array (Python ints must lie in [0, 2**32))."""
    if is_array(x):
        return x if x.dtype is uint32 else _o.astype(x, uint32)
    return _o.asarray(x, dtype=uint32)


def _rotl(x, r):
    return shift_left(x, r) | shift_right_logical(x, 32 - r)


_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def threefry_2x32(k1, k2, x1, x2):
    """The Threefry-2x32 block cipher (20 rounds) of counters ``(x1, x2)`` under key
    ``(k1, k2)``: all uint32, broadcast together. Returns the two uint32 output words.

    Example:
        >>> y1, y2 = qb.random.threefry_2x32(*[qb.asarray(v, dtype=qb.uint32) for v in (0, 0, 0, 0)])
        >>> hex(y1.item()), hex(y2.item())
        ('0x6b200159', '0x99ba4efe')
    """
    k1, k2, x1, x2 = (_u32(v) for v in (k1, k2, x1, x2))
    ks = (k1, k2, k1 ^ k2 ^ 0x1BD11BDA)
    x1 = x1 + ks[0]
    x2 = x2 + ks[1]
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x1 = x1 + x2
            x2 = _rotl(x2, r) ^ x1
        x1 = x1 + ks[(i + 1) % 3]
        x2 = x2 + ks[(i + 2) % 3] + (i + 1)
    return x1, x2


def _counts(shape):
    """The (high, low) 32-bit words of the row-major index of every element of ``shape``."""
    n = math.prod(shape)
    if n >= 2**32:
        raise ShapeError(f"random: {n} samples (shape {_shape_str(shape)}) need more than 32-bit counters")
    if not shape:
        z = _o.zeros((), dtype=uint32)
        return z, z
    lo = _o.reshape(bind(_op("iota", dim=0, ty=((n,), uint32.code))), shape)
    return _o.zeros(shape, dtype=uint32), lo


# ---------------------------------------------------------------------------------------------
# Keys


def _check_key(name, k):
    if not is_array(k):
        k = _o.asarray(k)
    if k.dtype is not uint32 or k.shape != (2,):
        raise ShapeError(
            f"{name}: expected a single key, a uint32 array of shape (2,), got {k.dtype.name} of shape "
            f"{_shape_str(k.shape)} (use qb.random.key(seed); for several keys use qb.vmap)"
        )
    return k


def _seed_words(seed):
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) and not is_array(seed):
        raise ArgumentTypeError(f"key: the seed must be an integer, got {type(seed).__name__}")
    if not is_array(seed):
        s = int(seed)
        if not -(2**63) <= s < 2**64:
            raise DTypeError(f"key: the seed {s} does not fit in 64 bits")
        s &= 2**64 - 1
        return _o.asarray([s >> 32, s & _MASK32], dtype=uint32)
    if seed.shape != () or not seed.dtype.is_int:
        raise ShapeError(f"key: the seed must be a scalar integer, got {seed.dtype.name} of shape {_shape_str(seed.shape)}")
    if seed.dtype is int64:
        hi = _o.astype(shift_right_logical(seed, 32), uint32)
    else:
        # 32-bit seeds are padded with zeros (a uint8/uint32/int32 seed has no high word).
        hi = _o.zeros((), dtype=uint32)
    lo = _o.astype(seed, uint32)
    return _o.stack([hi, lo])


def key(seed, *, impl=None):
    """A threefry2x32 key from an integer seed (as ``jax.random.key``, but the raw uint32 key
    of shape (2,), like ``PRNGKey``: the seed's high and low 32 bits).

    Args:
        seed: a Python int in [-2**63, 2**64) or a scalar integer array (traced seeds work).
        impl: only ``None`` or ``"threefry2x32"``.

    Returns:
        A uint32 array of shape (2,).

    Example:
        >>> qb.random.key(42).tolist()
        [0, 42]
    """
    if impl not in (None, "threefry2x32"):
        raise ArgumentTypeError(f"key: only the threefry2x32 generator is available, got impl={impl!r}")
    return _seed_words(seed)


def PRNGKey(seed, *, impl=None):  # noqa: N802 - JAX's name
    """The raw key of ``seed`` (``jax.random.PRNGKey``); same as :func:`key`.

    Example:
        >>> qb.random.PRNGKey(-1).tolist()
        [4294967295, 4294967295]
    """
    return key(seed, impl=impl)


def key_data(keys):
    """The uint32 data of keys: the keys themselves (they are raw already).

    Example:
        >>> qb.random.key_data(qb.random.key(1)).shape
        (2,)
    """
    k = _to_array(keys)
    if k.dtype is not uint32 or k.ndim == 0 or k.shape[-1] != 2:
        raise ShapeError(f"key_data: expected uint32 keys of shape (..., 2), got {k.dtype.name} of shape {_shape_str(k.shape)}")
    return k


def wrap_key_data(key_bits_array, *, impl=None):
    """Keys from their uint32 data (the identity: Quabla's keys are raw).

    Example:
        >>> qb.random.wrap_key_data(qb.random.key(3)).tolist()
        [0, 3]
    """
    return key_data(key_bits_array)


def _shape(name, shape):
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    try:
        shape = tuple(int(d) for d in shape)
    except TypeError:
        raise ArgumentTypeError(f"{name}: shape must be a tuple of ints, got {shape!r}") from None
    if any(d <= 0 for d in shape):
        raise ShapeError(f"{name}: shape {_shape_str(shape)} has a zero or negative extent (zero-extent tensors are not supported)")
    return shape


def split(key, num=2):
    """``num`` new keys from ``key`` (shape ``(*num, 2)``), as ``jax.random.split``.

    Args:
        key: a key of shape (2,).
        num: an int or a tuple of ints (the leading shape).

    Example:
        >>> qb.random.split(qb.random.key(0)).shape
        (2, 2)
    """
    k = _check_key("split", key)
    shape = _shape("split", num)
    hi, lo = _counts(shape)
    b1, b2 = threefry_2x32(k[0], k[1], hi, lo)
    return _o.stack([b1, b2], axis=len(shape))


def fold_in(key, data):
    """A new key from ``key`` and the 32-bit integer ``data`` (``jax.random.fold_in``).

    Example:
        >>> qb.random.fold_in(qb.random.key(0), 7).shape
        (2,)
    """
    k = _check_key("fold_in", key)
    if is_array(data):
        if data.shape != ():
            raise ShapeError(f"fold_in: data must be a scalar, got shape {_shape_str(data.shape)} (use qb.vmap for batching)")
        if not data.dtype.is_int:
            raise DTypeError(f"fold_in: data must be an integer, got {data.dtype.name}")
        d = _o.astype(data, uint32)
    else:
        if isinstance(data, (bool, np.bool_)) or not isinstance(data, (int, np.integer)):
            raise ArgumentTypeError(f"fold_in: data must be an integer, got {type(data).__name__}")
        if not 0 <= int(data) < 2**32:
            raise DTypeError(f"fold_in: data {int(data)} is out of range for uint32")
        d = _o.asarray(int(data), dtype=uint32)
    y1, y2 = threefry_2x32(k[0], k[1], 0, d)
    return _o.stack([y1, y2])


def _bits32(k, shape):
    hi, lo = _counts(shape)
    return threefry_2x32(k[0], k[1], hi, lo)


def bits(key, shape=(), dtype=None):
    """Uniform random bits as unsigned integers (``jax.random.bits``).

    Args:
        key: a key of shape (2,).
        shape: the result shape.
        dtype: uint32 (the default here; JAX's x64 default is uint64) or uint8.

    Example:
        >>> qb.random.bits(qb.random.key(0), (3,)).dtype
        quabla.uint32
    """
    k = _check_key("bits", key)
    d = uint32 if dtype is None else _dt.dtype(dtype, "bits")
    if not d.is_unsigned:
        raise DTypeError(f"bits: dtype must be an unsigned integer dtype (uint8, uint32), got {d.name}")
    shape = _shape("bits", shape) if shape != () else ()
    b1, b2 = _bits32(k, shape)
    r = b1 ^ b2
    return r if d is uint32 else _o.astype(r, d)


# ---------------------------------------------------------------------------------------------
# Floats


def _float_dtype(name, dtype):
    d = float64 if dtype is None else _dt.dtype(dtype)
    if not d.is_float:
        raise DTypeError(f"{name}: dtype must be a float dtype (float32, float64), got {d.name}")
    return d


def _unit(k, shape, d):
    """Floats in [0, 1) from the mantissa bits, exactly JAX's values: float32 keeps the top 23
    of the 32 bits, float64 the top 52 of the 64 bits (high word b1, low word b2)."""
    b1, b2 = _bits32(k, shape)
    if d is float32:
        m = shift_right_logical(b1 ^ b2, 9)
        return _o.astype(m, float32) * np.float32(2.0**-23)
    hi = _o.astype(b1, float64) * (2.0**-32)
    lo = _o.astype(shift_right_logical(b2, 12), float64) * (2.0**-52)
    return hi + lo


def _as_float(x, d):
    x = _to_array(x)
    return x if x.dtype is d else _o.astype(x, d)


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    """Uniform floats in [minval, maxval) (``jax.random.uniform``; bitwise equal to JAX).

    Args:
        key: a key of shape (2,).
        shape: the result shape (minval/maxval broadcast to it).
        dtype: float64 (default) or float32.
        minval, maxval: bounds (arrays or numbers; differentiable).

    Example:
        >>> u = qb.random.uniform(qb.random.key(0), (1000,))
        >>> bool((u >= 0).all() and (u < 1).all())
        True
    """
    k = _check_key("uniform", key)
    d = _float_dtype("uniform", dtype)
    shape = _shape("uniform", shape) if shape != () else ()
    lo, hi = _as_float(minval, d), _as_float(maxval, d)
    for nm, v in (("minval", lo), ("maxval", hi)):
        if len(v.shape) > len(shape) or _o._bcast_shapes("uniform", v.shape, shape) != shape:
            raise ShapeError(f"uniform: {nm} of shape {_shape_str(v.shape)} does not broadcast to shape {_shape_str(shape)}")
    f = _unit(k, shape, d)
    return _o.maximum(lo, _fma(f, hi - lo, lo))


def _exact_scale(b):
    """``b`` is concrete and every element is 0 or a power of two far from under/overflow (so
    that ``a * b`` is exact for any ``a`` in [0, 1))."""
    if type(b) is Tracer:
        return False
    v = np.abs(np.asarray(b, dtype=np.float64))
    m, e = np.frexp(v)
    return bool(np.all((v == 0) | ((m == 0.5) & (e > -100) & (e < 100))))


def _fma(a, b, c):
    """a * b + c rounded once, as XLA's CPU code computes JAX's ``floats * span + minval``
    (it contracts the two ops into a fused multiply-add). float32: the exact product in float64
    plus c, rounded to float32. float64: Dekker's exact product (Veltkamp splitting) and a
    TwoSum, summed once; both agree with a hardware fma except when a result lies within
    2**-100 of a halfway point. A concrete ``b`` of powers of two (as the span of ``normal``'s
    (nextafter(-1, 0), 1), which rounds to 2) makes ``a * b`` exact: then the plain ops are
    the fma."""
    if _exact_scale(b):
        return a * b + c
    if a.dtype is float32:
        return _o.astype(_o.astype(a, float64) * _o.astype(b, float64) + _o.astype(c, float64), float32)

    def split(x):
        t = x * 134217729.0
        hi = t - (t - x)
        return hi, x - hi

    p = a * b
    ah, al = split(a)
    bh, bl = split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    bb = s - p
    t = (p - (s - bb)) + (c - bb)
    return s + (t + e)


def _erfinv(x):
    """erf^-1(x): the ``erf_inv`` op, whose CPU kernel is XLA's (Giles' polynomials in
    w = -log1p(-x*x) with XLA's log1p and fma'd Horner steps), so samples are JAX's bits."""
    return bind(_op("erf_inv"), x)


def normal(key, shape=(), dtype=None):
    """Standard normal samples, ``sqrt(2) * erfinv(u)`` for ``u`` uniform in (-1, 1)
    (``jax.random.normal``).

    Example:
        >>> qb.random.normal(qb.random.key(0), (2, 3)).shape
        (2, 3)
    """
    k = _check_key("normal", key)
    d = _float_dtype("normal", dtype)
    lo = np.nextafter(np.array(-1.0, d.np), np.array(0.0, d.np))
    u = uniform(k, shape, d, lo, 1.0)
    return _erfinv(u) * (np.float32(np.sqrt(2)) if d is float32 else float(np.sqrt(2)))


def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Normal samples truncated to (lower, upper) (``jax.random.truncated_normal``).

    Example:
        >>> x = qb.random.truncated_normal(qb.random.key(0), -1.0, 1.0, (100,))
        >>> bool((x > -1).all() and (x < 1).all())
        True
    """
    k = _check_key("truncated_normal", key)
    d = _float_dtype("truncated_normal", dtype)
    lo, hi = _as_float(lower, d), _as_float(upper, d)
    if shape is None:
        shape = _o._bcast_shapes("truncated_normal", lo.shape, hi.shape)
    else:
        shape = _shape("truncated_normal", shape) if shape != () else ()
    sqrt2 = np.float32(np.sqrt(2)) if d is float32 else float(np.sqrt(2))
    a = _o.erf(lo / sqrt2)
    b = _o.erf(hi / sqrt2)
    u = uniform(k, shape, d, a, b)
    out = _erfinv(u) * sqrt2
    if type(lo) is not Tracer and type(hi) is not Tracer:
        lo_c = _o.asarray(np.nextafter(np.asarray(lo), np.array(np.inf, d.np)), dtype=d)
        hi_c = _o.asarray(np.nextafter(np.asarray(hi), np.array(-np.inf, d.np)), dtype=d)
    else:
        from ._control import stop_gradient

        lo_c, hi_c = stop_gradient(lo), stop_gradient(hi)
    return _o.minimum(_o.maximum(out, lo_c), hi_c)


def exponential(key, shape=(), dtype=None):
    """Exponential(1) samples ``-log1p(-u)`` (``jax.random.exponential``).

    Example:
        >>> bool((qb.random.exponential(qb.random.key(0), (10,)) >= 0).all())
        True
    """
    k = _check_key("exponential", key)
    d = _float_dtype("exponential", dtype)
    u = uniform(k, shape, d)
    return -_o.log1p(-u)


def gumbel(key, shape=(), dtype=None, mode=None):
    """Standard Gumbel samples ``-log(-log(u))`` (``jax.random.gumbel``; ``mode`` "low"
    (default) or "high", which spends a second uniform on the low tail).

    Example:
        >>> qb.random.gumbel(qb.random.key(0), (4,)).shape
        (4,)
    """
    k = _check_key("gumbel", key)
    d = _float_dtype("gumbel", dtype)
    mode = "low" if mode is None else mode
    if mode not in ("low", "high"):
        raise ArgumentTypeError(f"gumbel: mode must be 'low' or 'high', got {mode!r}")
    info = np.finfo(d.np)
    shape = _shape("gumbel", shape) if shape != () else ()
    if mode == "high":
        u = uniform(k, (2, *shape), d)
        high, low = u[0], u[1]
        x = _o.where(high >= 0.5, high, high + low * float(2.0 ** -info.nmant) + float(info.tiny))
        return -_o.log(-_o.log1p(-x))
    u = uniform(k, shape, d, float(info.tiny), 1.0)
    return -_o.log(-_o.log(u))


def bernoulli(key, p=0.5, shape=None, mode="low"):
    """Booleans that are True with probability ``p`` (``jax.random.bernoulli``).

    Example:
        >>> qb.random.bernoulli(qb.random.key(0), 0.3, (5,)).dtype
        quabla.bool_
    """
    k = _check_key("bernoulli", key)
    if mode not in ("low", "high"):
        raise ArgumentTypeError(f"bernoulli: got mode={mode!r}, expected 'high' or 'low'")
    p = _to_array(p)
    if not p.dtype.is_float:
        raise DTypeError(f"bernoulli: the probability p must have a float dtype, got {p.dtype.name}")
    shape = p.shape if shape is None else (_shape("bernoulli", shape) if shape != () else ())
    if mode == "high":
        u = uniform(k, (2, *shape), p.dtype)
        u1, u2 = u[0], u[1]
        u2 = u2 * float(2.0 ** -np.finfo(p.dtype.np).nmant)
        return u2 < p - u1
    return uniform(k, shape, p.dtype) < p


# ---------------------------------------------------------------------------------------------
# Integers


def _uge64(a, b):
    """Unsigned a >= b of int64 bit patterns (the sign bit flipped, then a signed compare)."""
    return (a ^ -(2**63)) >= (b ^ -(2**63))


def _urem64(x, s):
    """The unsigned 64-bit remainder of the int64 bit patterns ``x`` by ``s`` (nonzero, any
    unsigned value): for s >= 2**63 one conditional subtraction; below, the signed remainder
    of ``x >>> 1`` and one doubling step, all wrapping as uint64 does."""
    big = s < 0
    small = _o.where(big, 1, s)
    q = shift_right_logical(x, 1) % small
    t = q + q + (x & 1)
    r_small = _o.where(_uge64(t, small), t - small, t)
    r_big = _o.where(_uge64(x, s), x - s, x)
    return _o.where(big, r_big, r_small)


def _small_span(minval, maxval):
    """Whether ``minval`` and ``maxval`` are Python / NumPy integers with ``0 < maxval -
    minval < 2**16`` inside int64's range."""
    def static(v):
        return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) and -(2**63) <= int(v) < 2**63

    return static(minval) and static(maxval) and 0 < int(maxval) - int(minval) < 2**16


def randint(key, shape, minval, maxval, dtype=None):
    """Uniform integers in [minval, maxval) (``jax.random.randint``, JAX's modulus scheme
    with twice the bits, so the same key gives JAX's values).

    Args:
        key: a key of shape (2,).
        shape: the result shape.
        minval, maxval: integer bounds (broadcast to shape); out-of-range bounds are clipped to
            the dtype.
        dtype: int64 (default), int32, uint32 or uint8.

    Example:
        >>> x = qb.random.randint(qb.random.key(0), (100,), 0, 10)
        >>> bool((x >= 0).all() and (x < 10).all())
        True
    """
    k = _check_key("randint", key)
    d = int64 if dtype is None else _dt.dtype(dtype, "randint")
    if not d.is_int:
        raise DTypeError(f"randint: dtype must be an integer dtype, got {d.name}")
    shape = _shape("randint", shape) if shape != () else ()
    if d is uint8:
        # As JAX: sample in int32 with the bounds clipped to uint8's range, then convert.
        lo = _o.clip(_o.astype(_to_array(minval), int64), 0, 255)
        hi = _o.clip(_o.astype(_to_array(maxval), int64), 0, 256)
        return _o.astype(randint(k, shape, lo, hi, int32), uint8)
    mn, mx = _to_array(minval), _to_array(maxval)
    for nm, v in (("minval", mn), ("maxval", mx)):
        if v.dtype.is_float:
            v = _o.astype(v, int64)
        if len(v.shape) > len(shape) or _o._bcast_shapes("randint", v.shape, shape) != shape:
            raise ShapeError(f"randint: {nm} of shape {_shape_str(v.shape)} does not broadcast to shape {_shape_str(shape)}")
    mn = _o.astype(mn, int64) if mn.dtype is not int64 else mn
    mx = _o.astype(mx, int64) if mx.dtype is not int64 else mx
    info = np.iinfo(d.np)
    dmax = min(int(info.max), 2**63 - 1)
    out_of_range = mx > dmax
    mn = _o.astype(_o.clip(mn, int(info.min), dmax), d)
    mx = _o.astype(_o.clip(mx, int(info.min), dmax), d)
    k1, k2 = split(k)
    empty = mx <= mn
    if d is int64 and _small_span(minval, maxval):
        # Bounds known at trace time whose span is below 2**16 (randint(key, shape, 0, 100)):
        # the same values in uint32 arithmetic, each 64-bit word's remainder from its 32-bit
        # halves, (hi % s) (2**32 % s) + lo % s < 2**32. The 64-bit remainders did not
        # vectorize (one scalar division each): 1e6 int64 7.5 -> 2.2 ms a call.
        sp = int(maxval) - int(minval)
        c = 2**32 % sp

        def rem64(kk):
            hi, lo = _bits32(kk, shape)
            return ((hi % sp) * c + lo % sp) % sp

        off = (rem64(k1) * (c * c % sp) + rem64(k2)) % sp
        return _o.astype(off, int64) + int(minval)
    if d is int64:
        def bits64(kk):
            b1, b2 = _bits32(kk, shape)
            return shift_left(_o.astype(b1, int64), 32) | _o.astype(b2, int64)

        hb, lb = bits64(k1), bits64(k2)
        span = mx - mn  # the uint64 span's bit pattern
        span = _o.where(empty, 1, span)
        m = _urem64(_o.full_like(span, 2**32), span)
        m = _urem64(m * m, span)
        off = _urem64(_urem64(hb, span) * m + _urem64(lb, span), span)
        return mn + off
    # 32-bit dtypes: JAX's wrapping uint32 arithmetic.
    hb, lb = (lambda b: b[0] ^ b[1])(_bits32(k1, shape)), (lambda b: b[0] ^ b[1])(_bits32(k2, shape))
    span = _o.astype(mx - mn, uint32)
    span = _o.where(empty, _o.full_like(span, 1), span)
    span = _o.where(out_of_range & ~empty, span + 1, span)
    m = _o.full_like(span, 2**16) % span
    m = (m * m) % span
    off = ((hb % span) * m + lb % span) % span
    return mn + _o.astype(off, d)


# ---------------------------------------------------------------------------------------------
# Sorting by random keys


def _order(keys, descending=False):
    """The stable argsort of ``keys`` along the last axis (int64): one ``quabla.argsort`` op
    (O(n log n) on the CPU)."""
    return bind(_op("argsort", dimension=keys.ndim - 1, direction="gt" if descending else "lt", index=int64.code), keys)


def _shuffle_indices(k, n):
    """A uniform permutation of range(n), JAX's sort-by-random-bits rounds."""
    rounds = int(np.ceil(3 * np.log(max(1, n)) / np.log(np.iinfo(np.uint32).max)))
    perm = _o.arange(n)
    for _ in range(rounds):
        k, sub = split(k)[0], split(k)[1]
        sk = bits(sub, (n,))
        perm = _o.take(perm, _order(sk))
    return perm


def permutation(key, x, axis=0, independent=False):
    """A random permutation of ``range(x)`` (int ``x``) or of ``x`` along ``axis``
    (``jax.random.permutation``; ``independent=True`` shuffles each lane separately).

    Example:
        >>> sorted(qb.random.permutation(qb.random.key(0), 5).tolist())
        [0, 1, 2, 3, 4]
    """
    k = _check_key("permutation", key)
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        if int(x) <= 0:
            raise ShapeError(f"permutation: x={int(x)} gives an empty permutation (zero-extent tensors are not supported)")
        return _shuffle_indices(k, int(x))
    x = _to_array(x)
    if x.ndim == 0:
        raise ShapeError("permutation: x must be an integer or at least 1-dimensional")
    ax = axis + x.ndim if axis < 0 else axis
    if not 0 <= ax < x.ndim:
        raise ShapeError(f"permutation: axis {axis} is out of range for shape {_shape_str(x.shape)}")
    n = x.shape[ax]
    if not independent or x.ndim == 1:
        if x.ndim == 1:
            # JAX sorts x itself by the random keys: the same order as the indices.
            return _o.take(x, _shuffle_indices(k, n), axis=0)
        return _o.take(x, _shuffle_indices(k, n), axis=ax)
    # Each lane along `ax` by its own random keys.
    perm_axes = [i for i in range(x.ndim) if i != ax] + [ax]
    xt = _o.transpose(x, perm_axes)
    rounds = int(np.ceil(3 * np.log(max(1, x.size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        k, sub = split(k)[0], split(k)[1]
        sk = _o.transpose(bits(sub, x.shape), perm_axes)
        order = _order(sk)  # [..., r] -> source index
        hit = _o.expand_dims(order, -1) == _o.arange(n)  # [..., r, i]
        xt = _o.sum(_o.where(hit, _o.expand_dims(xt, -2), _o.zeros((), dtype=xt.dtype)), axis=-1)
    inv = [perm_axes.index(i) for i in range(x.ndim)]
    return _o.transpose(xt, inv)


def choice(key, a, shape=(), replace=True, p=None, axis=0):
    """Samples from ``a`` (an int n for range(n), or an array along ``axis``), with or
    without replacement, uniformly or with probabilities ``p`` (``jax.random.choice``).

    Example:
        >>> qb.random.choice(qb.random.key(0), 5, (3,), replace=False).shape
        (3,)
    """
    k = _check_key("choice", key)
    if not isinstance(shape, (tuple, list)):
        raise ArgumentTypeError(f"choice: shape must be a sequence, got {shape!r}")
    shape = tuple(int(s) for s in shape)
    scalar = isinstance(a, (int, np.integer)) and not is_array(a)
    arr = None if scalar else _to_array(a)
    if arr is not None and arr.ndim == 0:
        raise ShapeError("choice: a must be an integer or an array of at least one dimension")
    ax = 0 if scalar else (axis + arr.ndim if axis < 0 else axis)
    n = int(a) if scalar else arr.shape[ax]
    n_draws = math.prod(shape)
    if n <= 0:
        raise ShapeError("choice: a must be greater than 0")
    if not replace and n_draws > n:
        raise ShapeError(f"choice: cannot take a larger sample (size {n_draws}) than the population (size {n}) when replace=False")
    if p is None:
        if replace:
            ind = randint(k, shape, 0, n)
        else:
            ind = _o.reshape(_shuffle_indices(k, n)[:n_draws], shape) if shape else _shuffle_indices(k, n)[0]
    else:
        pa = _to_array(p)
        if not pa.dtype.is_float:
            pa = _o.astype(pa, float64)
        if pa.shape != (n,):
            raise ShapeError(f"choice: p must be None or a 1-D vector of shape ({n},), got shape {_shape_str(pa.shape)}")
        if replace:
            cum = _o.matmul(_o.asarray(np.tril(np.ones((n, n)))).astype(pa.dtype), pa)
            r = cum[n - 1] * (1 - uniform(k, shape, pa.dtype))
            ind = _o.sum(_o.astype(_o.expand_dims(r, -1) > cum, int64), axis=-1) if shape else _o.sum(_o.astype(r > cum, int64))
        else:
            g = gumbel(k, (n,), pa.dtype) + _o.log(pa)
            top = _order(g, descending=True)[:n_draws]
            ind = _o.reshape(top, shape) if shape else top[0]
    if scalar:
        return ind
    return _o.take(arr, ind, axis=ax)


def categorical(key, logits, axis=-1, shape=None, replace=True):
    """Category indices drawn with log-probabilities ``logits`` along ``axis`` (the Gumbel-max
    trick, ``jax.random.categorical``).

    Example:
        >>> qb.random.categorical(qb.random.key(0), qb.zeros((4, 3))).shape
        (4,)
    """
    k = _check_key("categorical", key)
    lg = _to_array(logits)
    if not lg.dtype.is_float:
        lg = _o.astype(lg, float64)
    ax = axis + lg.ndim if axis < 0 else axis
    if not 0 <= ax < lg.ndim:
        raise ShapeError(f"categorical: axis {axis} is out of range for logits of shape {_shape_str(lg.shape)}")
    batch = lg.shape[:ax] + lg.shape[ax + 1:]
    shape = batch if shape is None else tuple(int(s) for s in shape)
    if shape[len(shape) - len(batch):] != batch:
        raise ShapeError(f"categorical: shape {_shape_str(shape)} must end with the batch shape {_shape_str(batch)} of the logits")
    prefix = shape[: len(shape) - len(batch)]
    if replace:
        gshape = (*prefix, *lg.shape)
        g = gumbel(k, gshape, lg.dtype) + _o.reshape(lg, (1,) * len(prefix) + lg.shape)
        return _o.argmax(g, axis=len(prefix) + ax)
    g = lg + gumbel(k, lg.shape, lg.dtype)
    m = math.prod(prefix)
    if m > lg.shape[ax]:
        raise ShapeError(f"categorical: {m} samples without replacement exceed the {lg.shape[ax]} categories")
    perm_axes = [i for i in range(lg.ndim) if i != ax] + [ax]
    top = _o.astype(_order(_o.transpose(g, perm_axes), descending=True)[..., :m], int32)  # batch + (m,), int32 as lax.top_k
    nb = len(batch)
    return _o.reshape(_o.transpose(top, (nb, *range(nb))), shape) if nb else _o.reshape(top, shape)
