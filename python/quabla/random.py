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

The further distributions (``laplace`` ... ``orthogonal``) use JAX's algorithms and key usage,
so they give JAX's samples up to the rounding of ``log``/``log1p``/``pow`` (``gamma`` and its
rejection loop bitwise in float64; ``poisson``/``binomial`` integer-equal); ``gamma`` and the
samplers built on it take no gradient with respect to their shape parameters.

Departures from JAX: ``bits`` defaults to uint32 and supports uint8/uint32 only (Quabla has no
uint16/uint64); a traced
``lower``/``upper`` of ``truncated_normal`` clips to the closed interval.
"""

import math

import numpy as np

from . import _ops as _o
from . import dtypes as _dt
from ._bits import shift_left, shift_right_logical
from ._ops import _floatify, _op, _shape_str, _to_array, bind
from ._trace import Tracer, is_array
from .dtypes import float32, float64, int32, int64, uint8, uint32
from .errors import ArgumentTypeError, DTypeError, InvalidArgumentError, ShapeError
from . import errors as _errors

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
    "clone",
    "key_impl",
    "laplace",
    "logistic",
    "cauchy",
    "rademacher",
    "lognormal",
    "rayleigh",
    "weibull_min",
    "pareto",
    "maxwell",
    "double_sided_maxwell",
    "triangular",
    "wald",
    "geometric",
    "gamma",
    "loggamma",
    "beta",
    "dirichlet",
    "chisquare",
    "f",
    "t",
    "generalized_normal",
    "ball",
    "poisson",
    "binomial",
    "multinomial",
    "multivariate_normal",
    "orthogonal",
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
        xt = _o.sum(_o.where(hit, _o.expand_dims(xt, -2), _o.zeros((), dtype=xt.dtype)), axis=-1, dtype=xt.dtype)
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


# ---------------------------------------------------------------------------------------------
# Keys: clone / key_impl


def clone(key):
    """The same key (``jax.random.clone``: JAX uses it to mark a deliberate key reuse for its
    key-reuse checker; Quabla has no checker, so it is the identity on valid keys).

    Example:
        >>> qb.random.clone(qb.random.key(5)).tolist()
        [0, 5]
    """
    return key_data(key)


def key_impl(keys):
    """The name of the generator of ``keys``: always ``"threefry2x32"`` (``jax.random.key_impl``
    returns a PRNGSpec that prints as that name).

    Example:
        >>> qb.random.key_impl(qb.random.key(0))
        'threefry2x32'
    """
    key_data(keys)
    return "threefry2x32"


# ---------------------------------------------------------------------------------------------
# Distributions built from uniform / normal samples (JAX's transforms, same key usage)


def _start(name, key, dtype):
    """The checked key and float dtype of a float sampler."""
    return _check_key(name, key), _float_dtype(name, dtype)


def _shape_arg(name, shape):
    return _shape(name, shape) if shape != () else ()


def _pshape(v):
    return tuple(v.shape) if is_array(v) else np.shape(v)


def _param_shape(name, shape, *params):
    """JAX's rule: with ``shape=None`` the parameters' broadcast shape; else ``shape``, which
    the parameters must broadcast to without changing it."""
    pshapes = [_pshape(p) for p in params]
    if shape is None:
        return _o._bcast_shapes(name, *pshapes) if pshapes else ()
    shape = _shape_arg(name, shape)
    try:
        ok = _o._bcast_shapes(name, shape, *pshapes) == shape
    except ShapeError:
        ok = False
    if not ok:
        raise ShapeError(
            f"{name}: parameter shapes {', '.join(_shape_str(s) for s in pshapes)} must broadcast to the shape argument "
            f"{_shape_str(shape)} without changing it"
        )
    return shape


def _safe_cast(name, d, **params):
    """JAX's ``_check_all_safe_to_cast``: an array parameter of a wider float dtype than the
    sample dtype (float64 into float32) is rejected; Python numbers are weak and cast."""
    for nm, v in params.items():
        vd = v.dtype if is_array(v) else (np.asarray(v).dtype if isinstance(v, (np.ndarray, np.generic)) else None)
        if vd is not None and _dt.dtype(vd).is_float and _dt.dtype(vd).itemsize > d.itemsize:
            raise DTypeError(f"{name}: cannot safely cast {nm} of dtype {_dt.dtype(vd).name} to the sample dtype {d.name}")


def _c(x, d):
    """A constant of the sample dtype (for exact JAX rounding of constants)."""
    return _o.asarray(x, dtype=d)


def laplace(key, shape=(), dtype=None):
    """Standard Laplace samples ``sign(u) * log1p(-|u|)`` for ``u`` uniform in
    (-1, 1) (``jax.random.laplace``; JAX's values up to the rounding of ``log1p``).

    Example:
        >>> qb.random.laplace(qb.random.key(0), (2, 3), "float32").dtype
        quabla.float32
    """
    k, d = _start("laplace", key, dtype)
    u = uniform(k, shape, d, -1.0 + float(np.finfo(d.np).epsneg), 1.0)
    return _o.sign(u) * _o.log1p(-_o.abs(u))


def logistic(key, shape=(), dtype=None):
    """Standard logistic samples ``log(u) - log1p(-u)`` (``jax.random.logistic``).

    Example:
        >>> qb.random.logistic(qb.random.key(0), (4,)).shape
        (4,)
    """
    k, d = _start("logistic", key, dtype)
    u = uniform(k, shape, d, float(np.finfo(d.np).tiny), 1.0)
    return _o.log(u) - _o.log1p(-u)


def cauchy(key, shape=(), dtype=None):
    """Standard Cauchy samples ``tan(pi (u - 1/2))`` (``jax.random.cauchy``).

    Example:
        >>> qb.random.cauchy(qb.random.key(0), (3,)).shape
        (3,)
    """
    k, d = _start("cauchy", key, dtype)
    u = uniform(k, shape, d, float(np.finfo(d.np).eps), 1.0)
    return _o.tan(_c(np.pi, d) * (u - 0.5))


def rademacher(key, shape=(), dtype=None):
    """Random signs -1 / +1 with equal probability (``jax.random.rademacher``; int64 by
    default, any int or float dtype).

    Example:
        >>> sorted(set(qb.random.rademacher(qb.random.key(0), (50,)).tolist()))
        [-1, 1]
    """
    k = _check_key("rademacher", key)
    d = int64 if dtype is None else _dt.dtype(dtype, "rademacher")
    if not (d.is_float or d.is_int) or d.is_unsigned:
        raise DTypeError(f"rademacher: dtype must be a signed integer or float dtype, got {d.name}")
    b = _o.astype(bernoulli(k, 0.5, _shape_arg("rademacher", shape)), d)
    return _o.astype(2 * b - 1, d)


def lognormal(key, sigma=np.float32(1), shape=None, dtype=None):
    """Log-normal samples ``exp(sigma * z)``, ``z`` standard normal (``jax.random.lognormal``).

    Example:
        >>> bool((qb.random.lognormal(qb.random.key(0), 0.5, (10,)) > 0).all())
        True
    """
    k, d = _start("lognormal", key, dtype)
    _safe_cast("lognormal", d, sigma=sigma)
    shape = _param_shape("lognormal", shape, sigma)
    return _o.exp(normal(k, shape, d) * _as_float(sigma, d))


def rayleigh(key, scale, shape=None, dtype=None):
    """Rayleigh samples ``scale * sqrt(-2 log u)`` (``jax.random.rayleigh``; ``scale``
    differentiable).

    Example:
        >>> qb.random.rayleigh(qb.random.key(0), 2.0, (3,)).shape
        (3,)
    """
    k, d = _start("rayleigh", key, dtype)
    _safe_cast("rayleigh", d, scale=scale)
    shape = _param_shape("rayleigh", shape, scale)
    u = uniform(k, shape, d)
    return _o.broadcast_to(_as_float(scale, d), shape) * _o.sqrt(_o.log(u) * -2.0)


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull samples ``scale * (-log1p(-u)) ** (1 / concentration)``
    (``jax.random.weibull_min``; the result broadcasts ``shape`` with the parameters, as JAX).

    Example:
        >>> qb.random.weibull_min(qb.random.key(0), 1.0, 2.0, (3,)).shape
        (3,)
    """
    k, d = _start("weibull_min", key, dtype)
    u = uniform(k, _shape_arg("weibull_min", shape), d)
    inv = _as_float(1.0 / concentration if not is_array(concentration) and not isinstance(concentration, np.ndarray)
                    else 1.0 / _to_array(concentration), d)
    return _o.power(-_o.log1p(-u), inv) * _as_float(scale, d)


def pareto(key, b, shape=None, dtype=None):
    """Pareto samples ``exp(e / b)``, ``e`` standard exponential (``jax.random.pareto``).

    Example:
        >>> bool((qb.random.pareto(qb.random.key(0), 3.0, (10,)) >= 1).all())
        True
    """
    k, d = _start("pareto", key, dtype)
    _safe_cast("pareto", d, b=b)
    shape = _param_shape("pareto", shape, b)
    return _o.exp(exponential(k, shape, d) / _as_float(b, d))


def _norm_last(x):
    return _o.sqrt(_o.sum(x * x, axis=-1))


def maxwell(key, shape=(), dtype=None):
    """Maxwell samples: the norm of 3 standard normals (``jax.random.maxwell``).

    Example:
        >>> qb.random.maxwell(qb.random.key(0), (2,)).shape
        (2,)
    """
    k, d = _start("maxwell", key, dtype)
    return _norm_last(normal(k, (*_shape_arg("maxwell", shape), 3), d))


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Double-sided Maxwell samples ``sign * maxwell * scale + loc``
    (``jax.random.double_sided_maxwell``). As JAX, the sample shape is ``shape`` followed by
    the broadcast shape of ``loc`` and ``scale`` (with ``shape=()``, that shape twice).

    Example:
        >>> qb.random.double_sided_maxwell(qb.random.key(0), 0.0, 1.0, (4,)).shape
        (4,)
    """
    k, d = _start("double_sided_maxwell", key, dtype)
    shape = _shape_arg("double_sided_maxwell", shape)
    pshape = _o._bcast_shapes("double_sided_maxwell", _pshape(loc), _pshape(scale))
    shape = (shape or pshape) + pshape
    km, kr = split(k)
    m = maxwell(km, shape, d)
    sgn = rademacher(kr, shape, d)
    return sgn * m * _as_float(scale, d) + _as_float(loc, d)


def triangular(key, left, mode, right, shape=None, dtype=None):
    """Triangular samples on [left, right] with the given ``mode`` (inverse CDF, as
    ``jax.random.triangular``).

    Example:
        >>> x = qb.random.triangular(qb.random.key(0), 0.0, 0.5, 1.0, (100,))
        >>> bool((x >= 0).all() and (x <= 1).all())
        True
    """
    k, d = _start("triangular", key, dtype)
    _safe_cast("triangular", d, left=left, mode=mode, right=right)
    shape = _param_shape("triangular", shape, left, mode, right)
    lo, md, hi = (_o.broadcast_to(_as_float(v, d), shape) for v in (left, mode, right))
    fc = (md - lo) / (hi - lo)
    u = uniform(k, shape, d)
    out1 = lo + _o.sqrt(u * (hi - lo) * (md - lo))
    out2 = hi - _o.sqrt((1.0 - u) * (hi - lo) * (hi - md))
    return _o.where(u < fc, out1, out2)


def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian, unit shape) samples by Michael-Schucany-Haas
    (``jax.random.wald``).

    Example:
        >>> bool((qb.random.wald(qb.random.key(0), 1.5, (10,)) > 0).all())
        True
    """
    k, d = _start("wald", key, dtype)
    _safe_cast("wald", d, mean=mean)
    shape = _param_shape("wald", shape, mean)
    k1, k2 = split(k)
    mu = _o.broadcast_to(_as_float(mean, d), shape)
    v = normal(k1, shape, d)
    z = uniform(k2, shape, d)
    y = v * v
    mu2 = mu * mu
    root = _o.sqrt(4.0 * mu * y + mu2 * (y * y))
    x = mu + mu2 * y / 2.0 - mu / 2.0 * root
    return _o.where(z <= mu / (mu + x), x, mu2 / x)


def _int_dtype(name, dtype):
    d = int64 if dtype is None else _dt.dtype(dtype, name)
    if not d.is_int:
        raise DTypeError(f"{name}: dtype must be an integer dtype, got {d.name}")
    return d


def geometric(key, p, shape=None, dtype=None):
    """Geometric samples (trials to the first success, >= 1): ``floor(log u / log1p(-p)) + 1``
    (``jax.random.geometric``; int64 by default; the uniforms have p's float dtype).

    Example:
        >>> bool((qb.random.geometric(qb.random.key(0), 0.3, (20,)) >= 1).all())
        True
    """
    k = _check_key("geometric", key)
    d = _int_dtype("geometric", dtype)
    pa = _floatify(_to_array(p))
    shape = _param_shape("geometric", shape, pa)
    u = uniform(k, shape, pa.dtype)
    u = _o.where(u == 0, _c(1.0, pa.dtype), u)
    g = _o.floor(_o.log(u) / _o.broadcast_to(_o.log1p(-pa), shape)) + 1.0
    return _o.astype(g, d)


# ---------------------------------------------------------------------------------------------
# Gamma family (Marsaglia-Tsang rejection, one while loop per element as JAX's vmapped loop)


def _gamma_one(k, alpha, log_space):
    """One Gamma(alpha) sample from key ``k`` (scalar alpha), JAX's key usage: a split for
    the boost uniform, then per round a 3-way split (next key, normal key, uniform key) and an
    inner loop of normals until ``v = 1 + c x > 0``. As XLA computes it, ``c`` is
    ``(1/3) * rsqrt(d)`` and ``1 + c x`` one fused multiply-add: the samples are JAX's bits."""
    from ._control import while_loop

    d = alpha.dtype
    zero, one = _c(0.0, d), _c(1.0, d)
    boosted = alpha >= 1.0
    a = _o.where(boosted, alpha, alpha + 1.0)
    dd = a - _c(1.0 / 3.0, d)
    c = _c(1.0 / 3.0, d) * _o.rsqrt(dd)

    def accept_not_yet(s):
        _, xx, vv, uu = s
        return (uu >= 1.0 - 0.0331 * (xx * xx)) & (_o.log(uu) >= xx * 0.5 + dd * ((1.0 - vv) + _o.log(vv)))

    def next_normal(s):
        kk, sub = split(s[0])
        x = normal(sub, (), d)
        return kk, x, _fma(x, c, one)

    def round_(s):
        ks = split(s[0], 3)
        _, x, v = while_loop(lambda t: t[2] <= 0.0, next_normal, (ks[1], zero, -one))
        return ks[0], x * x, v * v * v, uniform(ks[2], (), d)

    kk, sub = split(k)
    v = while_loop(accept_not_yet, round_, (kk, zero, one, _c(2.0, d)))[2]
    if log_space:
        ls = -exponential(sub, (), d)
        boost = _o.where(boosted | (ls == 0.0), zero, ls * (1.0 / alpha))
        return _o.log(dd) + _o.log(v) + boost
    s = 1.0 - uniform(sub, (), d)
    boost = _o.where(boosted, one, _o.power(s, 1.0 / alpha))
    return dd * v * boost


def _gamma(name, key, a, shape, dtype, log_space):
    from ._transforms import vmap

    k, d = _start(name, key, dtype)
    a = _to_array(a)
    if not (a.dtype.is_float or a.dtype.is_int) or a.dtype.is_bool:
        raise DTypeError(f"{name}: a must be a real number or array, got {a.dtype.name}")
    shape = _param_shape(name, shape, a)
    n = math.prod(shape)
    alphas = _o.reshape(_o.broadcast_to(_as_float(a, d), shape), (n,))
    keys = split(k, n)
    # The loop is cut out of differentiation; derivatives in ``a`` are the implicit ones
    # (``_implicit``), as JAX's.
    out = _stop_gradient(vmap(lambda kk, al: _gamma_one(kk, al, log_space))(keys, alphas))
    out = (_implicit_log if log_space else _implicit)(alphas, out)
    return _o.reshape(out, shape)


def _stop_gradient(x):
    from ._control import stop_gradient

    return stop_gradient(x)


def random_gamma_grad(a, x):
    """d x / d a of a Gamma(a) sample ``x`` held at its quantile (the implicit
    reparameterisation gradient, JAX's ``lax.random_gamma_grad``): ``-(dP/da) / (dP/dx)``
    with P the regularized lower incomplete gamma function, from the derivatives of its
    power series (x <= max(a, 1)) or of its continued fraction, each summed until the
    derivative's terms fall below the precision (as XLA's)."""
    from .scipy.special import _masked_loop, digamma, gammaln

    d = a.dtype
    eps = float(np.finfo(d.np).eps)
    one, zero = _c(1.0, d), _c(0.0, d)
    nan_in = _o.logical_or(a != a, x != x)
    domain = _o.logical_or(x < 0, a <= 0)
    use_cf = _o.logical_and(x > 1, x > a)
    sa, sx = _o.where(_o.logical_or(domain, nan_in), one, a), _o.where(x > 0, x, one)
    logax = sa * _o.log(sx) - sx - gammaln(sa)
    enabled = _o.logical_not(_o.logical_or(_o.logical_or(x == 0, domain), _o.logical_or(logax < -math.log(float(np.finfo(d.np).max)), nan_in)))

    def series_step(st):
        r, c, ans, dc, dans = st
        r = r + 1.0
        dc = dc * (sx / r) - (c * sx) / (r * r)
        c = c * (sx / r)
        return r, c, ans + c, dc, dans + dc

    z0 = _o.zeros_like(sx)
    _, _, ans, _, dans = _masked_loop(_o.logical_and(enabled, _o.logical_not(use_cf)), (sa, one + z0, one + z0, z0, z0),
                                      lambda st, it: series_step(st), lambda n, o: _o.abs(n[3] / _o.where(n[4] == 0, one, n[4])) <= eps, 2000)
    series = -(dans + ans * (_o.log(sx) - digamma(sa + 1.0))) * sx / sa

    def cf_step(st):
        ans, y, z, c, pkm1, qkm1, pkm2, qkm2, dpkm2, dqkm2, dpkm1, dqkm1, dans, _delta = st
        c, y, z = c + 1.0, y + 1.0, z + 2.0
        yc = y * c
        pk = pkm1 * z - pkm2 * yc
        qk = qkm1 * z - qkm2 * yc
        nz = qk != 0
        sq = _o.where(nz, qk, one)
        ans = _o.where(nz, pk / sq, ans)
        dpk = dpkm1 * z - pkm1 - dpkm2 * yc + pkm2 * c
        dqk = dqkm1 * z - qkm1 - dqkm2 * yc + qkm2 * c
        dans_new = _o.where(nz, (dpk - ans * dqk) / sq, dans)
        delta = _o.where(nz, _o.abs(dans_new - dans), one)
        big = _o.abs(pk) > 1.0 / eps
        sc = lambda v: _o.where(big, v * eps, v)  # noqa: E731
        return ans, y, z, c, sc(pk), sc(qk), sc(pkm1), sc(qkm1), sc(dpkm1), sc(dqkm1), sc(dpk), sc(dqk), dans_new, delta

    y0 = 1.0 - sa
    zz = sx + y0 + 1.0
    pkm1, qkm1 = sx + 1.0, zz * sx
    ans0 = pkm1 / qkm1
    init = (ans0, y0, zz, z0, pkm1, qkm1, one + z0, sx, z0, z0, z0, -sx, (z0 - ans0 * -sx) / qkm1, one + z0)
    out = _masked_loop(_o.logical_and(enabled, use_cf), init, lambda st, it: cf_step(st), lambda n, o: n[13] <= eps, 2000)
    cf = (out[12] + out[0] * (_o.log(sx) - digamma(sa))) * sx
    g = _o.where(use_cf, cf, series)
    g = _o.where(x == 0, zero, g)
    return _o.where(_o.logical_or(domain, nan_in), _c(math.nan, d), g)


def _implicit_rule(log_space):
    def rule(primals, tangents):
        a, x = primals
        ta, tx = tangents
        if log_space:
            # d log(s) = ds / s, with s = exp(x) at least the smallest normal number.
            s = _o.exp(x)
            s = _o.where(s == 0, float(np.finfo(x.dtype.np).tiny), s)
            g = random_gamma_grad(a, s) / s
        else:
            g = random_gamma_grad(a, x)
        return x, tx + ta * _stop_gradient(g)

    return rule


def _implicit_fn():
    from ._custom import custom_jvp

    return custom_jvp(lambda a, x: x)


_implicit = _implicit_fn()
_implicit.defjvp(_implicit_rule(False))
_implicit_log = _implicit_fn()
_implicit_log.defjvp(_implicit_rule(True))


_GAMMA_GRAD_NOTE = """Gradients in ``a`` are JAX's implicit reparameterisation gradients: the
    sample held at its quantile, ``d x / d a = -(dP/da) / (dP/dx)`` with P the regularized
    incomplete gamma function (first order; the loop itself is not differentiated)."""


def gamma(key, a, shape=None, dtype=None):
    """Standard Gamma(a) samples (unit scale) by Marsaglia and Tsang's rejection method, one
    while loop per element (``jax.random.gamma``; the same keys and arithmetic, so JAX's
    values: bitwise in float64 on the CPU, within a few ulps in float32).

    Args:
        key: a key of shape (2,).
        a: the shape parameter (> 0), broadcast to ``shape``.
        shape: the result shape (default ``a``'s shape).
        dtype: float64 (default) or float32.

    """ + _GAMMA_GRAD_NOTE + """

    Example:
        >>> x = qb.random.gamma(qb.random.key(0), qb.array([0.5, 2.0, 9.0]))
        >>> x.shape, bool((x > 0).all())
        ((3,), True)
    """
    return _gamma("gamma", key, a, shape, dtype, False)


def loggamma(key, a, shape=None, dtype=None):
    """The logarithm of Gamma(a) samples, computed in log space (accurate for small ``a``,
    where the samples underflow); ``exp(loggamma(k, a))`` is ``gamma(k, a)`` up to rounding,
    as ``jax.random.loggamma``.

    """ + _GAMMA_GRAD_NOTE + """

    Example:
        >>> bool(qb.random.loggamma(qb.random.key(0), 0.01, (5,)).max() < 0)
        True
    """
    return _gamma("loggamma", key, a, shape, dtype, True)


def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) samples from two log-gamma samples, ``G_a / (G_a + G_b)`` scaled by their
    maximum (``jax.random.beta``; no gradient with respect to ``a``/``b``, see :func:`gamma`).

    Example:
        >>> x = qb.random.beta(qb.random.key(0), 2.0, 3.0, (10,))
        >>> bool(((x > 0) & (x < 1)).all())
        True
    """
    k, d = _start("beta", key, dtype)
    _safe_cast("beta", d, a=a, b=b)
    shape = _param_shape("beta", shape, a, b)
    ka, kb = split(k)
    la = loggamma(ka, _o.broadcast_to(_as_float(a, d), shape), shape, d)
    lb = loggamma(kb, _o.broadcast_to(_as_float(b, d), shape), shape, d)
    m = _o.maximum(la, lb)
    ea, eb = _o.exp(la - m), _o.exp(lb - m)
    return ea / (ea + eb)


def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(alpha) samples along the last axis: a softmax of log-gamma samples
    (``jax.random.dirichlet``; ``shape`` is the batch shape, the result adds ``alpha``'s last
    axis).

    Example:
        >>> x = qb.random.dirichlet(qb.random.key(0), qb.array([1.0, 2.0, 3.0]), (2,))
        >>> x.shape, [round(v, 12) for v in x.sum(axis=-1).tolist()]
        ((2, 3), [1.0, 1.0])
    """
    k, d = _start("dirichlet", key, dtype)
    al = _to_array(alpha)
    if al.ndim < 1:
        raise ShapeError("dirichlet: alpha must have at least one dimension, got a scalar")
    if shape is None:
        shape = tuple(al.shape[:-1])
    else:
        shape = _param_shape("dirichlet", shape, _o.zeros(al.shape[:-1], dtype=d) if al.ndim > 1 else 0.0)
    lg = loggamma(k, al, (*shape, al.shape[-1]), d)
    return _o.softmax(lg, axis=-1)


def chisquare(key, df, shape=None, dtype=None):
    """Chi-square(df) samples, ``2 * exp(loggamma(df / 2))`` (``jax.random.chisquare``).

    Example:
        >>> bool((qb.random.chisquare(qb.random.key(0), 3.0, (10,)) > 0).all())
        True
    """
    k, d = _start("chisquare", key, dtype)
    _safe_cast("chisquare", d, df=df)
    shape = _param_shape("chisquare", shape, df)
    half = _as_float(df, d) / 2.0
    return _o.exp(loggamma(k, half, shape, d)) * 2.0


def f(key, dfnum, dfden, shape=None, dtype=None):
    """F(dfnum, dfden) samples, a ratio of scaled chi-squares (``jax.random.f``).

    Example:
        >>> qb.random.f(qb.random.key(0), 3.0, 5.0, (4,)).shape
        (4,)
    """
    k, d = _start("f", key, dtype)
    _safe_cast("f", d, dfnum=dfnum, dfden=dfden)
    shape = _param_shape("f", shape, dfnum, dfden)
    dn, dd = _as_float(dfnum, d), _as_float(dfden, d)
    k_den, k_num = split(k)
    num = chisquare(k_num, dn, shape, d) / dn
    den = chisquare(k_den, dd, shape, d) / dd
    return num / den


def t(key, df, shape=None, dtype=None):
    """Student's t(df) samples, ``z * sqrt(df / 2 / G)`` with ``G ~ Gamma(df / 2)``
    (``jax.random.t``).

    Example:
        >>> qb.random.t(qb.random.key(0), 4.0, (3,)).shape
        (3,)
    """
    k, d = _start("t", key, dtype)
    _safe_cast("t", d, df=df)
    shape = _param_shape("t", shape, df)
    kn, kg = split(k)
    z = normal(kn, shape, d)
    half = _as_float(df, d) / 2.0
    g = gamma(kg, half, shape, d)
    return z * _o.sqrt(half / g)


def _static_float(name, arg, v):
    if is_array(v) or isinstance(v, np.ndarray) and v.ndim:
        if type(v) is Tracer:
            raise _errors.ConcretizationTypeError(f"{name}: {arg} must be a concrete number (it is traced); pass it as a Python float")
        v = np.asarray(v)
        if v.ndim:
            raise ShapeError(f"{name}: {arg} must be a scalar, got shape {_shape_str(v.shape)}")
    try:
        return float(v)
    except (TypeError, ValueError):
        raise ArgumentTypeError(f"{name}: {arg} must be a number, got {type(v).__name__}") from None


def generalized_normal(key, p, shape=(), dtype=None):
    """Generalized normal samples with density proportional to ``exp(-|x|**p)``: a random
    sign times ``Gamma(1/p) ** (1/p)`` (``jax.random.generalized_normal``; ``p`` a number).

    Example:
        >>> qb.random.generalized_normal(qb.random.key(0), 1.5, (3,)).shape
        (3,)
    """
    k, d = _start("generalized_normal", key, dtype)
    pv = _static_float("generalized_normal", "p", p)
    if not pv > 0:
        raise InvalidArgumentError(f"generalized_normal: p must be positive, got {pv}")
    shape = _shape_arg("generalized_normal", shape)
    k1, k2 = split(k)
    g = gamma(k1, 1.0 / pv, shape, d)
    r = rademacher(k2, shape, d)
    return r * _o.power(g, _c(1.0 / pv, d))


def ball(key, d, p=2, shape=(), dtype=None):
    """Points uniform in the unit ``p``-norm ball of dimension ``d`` (``jax.random.ball``:
    generalized normals divided by the p-norm plus an exponential).

    Example:
        >>> x = qb.random.ball(qb.random.key(0), 3, shape=(50,))
        >>> x.shape, bool((qb.linalg.norm(x, axis=-1) < 1).all())
        ((50, 3), True)
    """
    kk, dt = _start("ball", key, dtype)
    if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)):
        raise ArgumentTypeError(f"ball: the dimension d must be a Python int, got {type(d).__name__}")
    if int(d) <= 0:
        raise ShapeError(f"ball: the dimension d must be positive, got {int(d)}")
    pv = _static_float("ball", "p", p)
    shape = _shape_arg("ball", shape)
    k1, k2 = split(kk)
    g = generalized_normal(k1, pv, (*shape, int(d)), dt)
    e = exponential(k2, shape, dt)
    s = _o.sum(_o.power(_o.abs(g), _c(pv, dt)), axis=-1) + e
    return g / _o.expand_dims(_o.power(s, _c(1.0 / pv, dt)), -1)


# ---------------------------------------------------------------------------------------------
# Poisson and binomial (whole-array while loops, as JAX's)


def poisson(key, lam, shape=None, dtype=None):
    """Poisson(lam) samples (``jax.random.poisson``, JAX's algorithms and key usage): for
    ``lam < 10`` Knuth's product of float32 uniforms, otherwise Hormann's transformed
    rejection, each a while loop over the whole array until every element is done. As JAX,
    ``lam`` is computed in float32. The samples equal JAX's but where an acceptance test
    lands within rounding of its bound (``log`` and ``lgamma`` round differently from XLA's):
    rare in practice.

    Args:
        key: a key of shape (2,).
        lam: the rate (>= 0), broadcast to ``shape``.
        shape: the result shape (default ``lam``'s shape).
        dtype: an integer dtype (default int64).

    Example:
        >>> x = qb.random.poisson(qb.random.key(0), qb.array([0.5, 4.0, 50.0]))
        >>> x.dtype, bool((x >= 0).all())
        (quabla.int64, True)
    """
    from ._control import while_loop
    from .scipy.special import gammaln

    k = _check_key("poisson", key)
    d = _int_dtype("poisson", dtype)
    la = _to_array(lam)
    if not (la.dtype.is_float or la.dtype.is_int) or la.dtype.is_bool:
        raise DTypeError(f"poisson: lam must be a real number or array, got {la.dtype.name}")
    shape = tuple(la.shape) if shape is None else _shape_arg("poisson", shape)
    if _o._bcast_shapes("poisson", shape, la.shape) != shape:
        raise ShapeError(f"poisson: lam of shape {_shape_str(la.shape)} does not broadcast to shape {_shape_str(shape)}")
    la = _o.broadcast_to(_as_float(la, float32), shape)
    small = (la != la) | (la < 10.0)
    lam_k = _o.where(small, la, _c(0.0, float32))
    lam_r = _o.where(small, _c(1e5, float32), la)

    # Knuth: count uniforms until their product drops below exp(-lam).
    def knuth_go(s):
        return _o.any(s[2] > -lam_k)

    def knuth_step(s):
        kk, sub = split(s[0])
        n = _o.where(s[2] > -lam_k, s[1] + 1, s[1])
        return kk, n, s[2] + _o.log(uniform(sub, shape, float32))

    n_k = while_loop(knuth_go, knuth_step, (k, _o.zeros(shape, dtype=d), _o.zeros(shape, dtype=float32)))[1] - 1

    # Transformed rejection (PTRS).
    log_lam = _o.log(lam_r)
    b = 0.931 + 2.53 * _o.sqrt(lam_r)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2.0)

    def rej_go(s):
        return _o.any(~s[2])

    def rej_step(s):
        kk, out, done = s
        ks = split(kk, 3)
        u = uniform(ks[1], shape, float32) - 0.5
        v = uniform(ks[2], shape, float32)
        us = 0.5 - _o.abs(u)
        kv = _o.floor((2.0 * a / us + b) * u + lam_r + 0.43)
        s_ = _o.log(v * inv_alpha / (a / (us * us) + b))
        t_ = -lam_r + kv * log_lam - gammaln(kv + 1.0)
        accept1 = (us >= 0.07) & (v <= v_r)
        reject = (kv < 0) | ((us < 0.013) & (v > us))
        accept = accept1 | (~reject & (s_ <= t_))
        return ks[0], _o.where(accept, kv, out), done | accept

    init = (k, _o.full(shape, -1.0, dtype=float32), _o.zeros(shape, dtype=_dt.bool_))
    n_r = _o.astype(while_loop(rej_go, rej_step, init)[1], d)
    out = _o.where(small, n_k, n_r)
    return _o.where(la == 0.0, _o.zeros((), dtype=d), out)


_STIRLING_TAIL = np.array([0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509, 0.0166446911898211,
                           0.0138761288230707, 0.0118967099458917, 0.0104112652619720, 0.00925546218271273, 0.00833056343336287])


def _stirling_tail(kv):
    """log k! minus its Stirling approximation: a table for k <= 9, the series above."""
    d = kv.dtype
    table = _o.asarray(_STIRLING_TAIL, dtype=d)
    kc = _o.clip(kv, 0.0, 9.0)
    kp1sq = (kc + 1.0) * (kc + 1.0)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (kc + 1.0)
    tab = _o.take(table, _o.astype(_o.floor(kc), int32))
    return _o.where(kv <= 9.0, tab, approx)


def _binomial_core(k, count, q, shape):
    """Binomial(count, q) for q <= 1/2 (float samples): geometric-gap inversion where
    ``count * q <= 10``, BTRS elsewhere; JAX's keys and loops."""
    from ._control import while_loop

    d = q.dtype
    use_inv = (count != count) | (count < 0.0) | (count * q <= 10.0)
    count = _o.floor(count)
    c_inv = _o.where(use_inv, count, _c(0.0, d))
    c_bt = _o.where(use_inv, _c(1e4, d), count)
    q_bt = _o.where(use_inv, _c(0.5, d), q)

    l1mq = _o.log1p(-q)

    def inv_go(s):
        return _o.any(s[2] <= c_inv)

    def inv_step(s):
        kk, n, tot = s
        ks = split(kk)
        n = _o.where(tot <= c_inv, n + 1.0, n)
        u = uniform(ks[0], shape, d)
        return ks[1], n, tot + _o.ceil(_o.log(u) / l1mq)

    z = _o.zeros(shape, dtype=d)
    n_inv = while_loop(inv_go, inv_step, (k, z, z))[1] - 1.0

    sd = _o.sqrt(c_bt * q_bt * (1.0 - q_bt))
    b = 1.15 + 2.53 * sd
    a = -0.0873 + 0.0248 * b + 0.01 * q_bt
    c = c_bt * q_bt + 0.5
    v_r = 0.92 - 4.2 / b
    r = q_bt / (1.0 - q_bt)
    alpha = (2.83 + 5.1 / b) * sd
    m = _o.floor((c_bt + 1.0) * q_bt)

    def bt_go(s):
        return _o.any(~s[2])

    def bt_step(s):
        kk, out, done = s
        ks = split(kk, 3)
        u = uniform(ks[1], shape, d) - 0.5
        v = uniform(ks[2], shape, d)
        us = 0.5 - _o.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        kv = _o.floor((2.0 * a / us + b) * u + c)
        reject = (kv < 0) | (kv > c_bt)
        lv = _o.log(v * alpha / (a / (us * us) + b))
        ub = ((m + 0.5) * _o.log((m + 1.0) / (r * (c_bt - m + 1.0)))
              + (c_bt + 1.0) * _o.log((c_bt - m + 1.0) / (c_bt - kv + 1.0))
              + (kv + 0.5) * _o.log(r * (c_bt - kv + 1.0) / (kv + 1.0))
              + _stirling_tail(m) + _stirling_tail(c_bt - m) - _stirling_tail(kv) - _stirling_tail(c_bt - kv))
        accept = accept1 | (~reject & (lv <= ub))
        return ks[0], _o.where(accept, kv, out), done | accept

    n_bt = while_loop(bt_go, bt_step, (k, _o.full(shape, -1.0, dtype=d), _o.zeros(shape, dtype=_dt.bool_)))[1]
    return _o.where(use_inv, n_inv, n_bt)


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(n, p) samples as floats (``jax.random.binomial``, JAX's algorithms: inversion
    by geometric gaps where ``n * min(p, 1-p) <= 10``, else BTRS rejection, with its NaN/inf
    conventions: NaN for a NaN or negative ``n`` or an invalid ``p``, inf for ``n = inf``).
    The arithmetic runs in ``p``'s float dtype; samples equal JAX's but where an acceptance
    test lands within rounding of its bound.

    Example:
        >>> x = qb.random.binomial(qb.random.key(0), 20.0, 0.3, (5,))
        >>> x.dtype, bool(((x >= 0) & (x <= 20)).all())
        (quabla.float64, True)
    """
    k, d = _start("binomial", key, dtype)
    pa = _floatify(_to_array(p))
    na = _to_array(n)
    if not (na.dtype.is_float or na.dtype.is_int) or na.dtype.is_bool:
        raise DTypeError(f"binomial: n must be a real number or array, got {na.dtype.name}")
    shape = _param_shape("binomial", shape, na, pa)
    pd = pa.dtype
    count = _o.broadcast_to(_as_float(na, pd), shape)
    prob = _o.broadcast_to(pa, shape)
    lt_half = prob < 0.5
    q = _o.where(lt_half, prob, 1.0 - prob)
    bad_count = (count != count) | (count < 0.0)
    inf_count = (count == math.inf) | (count == -math.inf)
    q_nan = q != q
    q_neg = q < 0.0
    q = _o.where(q_nan | q_neg, _c(0.01, pd), q)
    s = _o.astype(_binomial_core(k, count, q, shape), d)
    invalid = q_neg | q_nan | bad_count
    s = _o.where(invalid, _c(math.nan, d), s)
    s = _o.where(inf_count & ~invalid, _c(math.inf, d), s)
    return _o.where(lt_half | bad_count | q_nan | inf_count, s, _o.astype(_o.floor(count), d) - s)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial counts of ``n`` trials over the categories of ``p``'s last axis
    (``jax.random.multinomial``: one binomial per category on the remaining trials, with
    keys ``split(key, k)``). ``unroll`` is accepted for JAX compatibility (the categories are
    unrolled at trace time).

    Example:
        >>> c = qb.random.multinomial(qb.random.key(0), 10.0, qb.array([0.2, 0.3, 0.5]))
        >>> c.shape, c.sum().item()
        ((3,), 10.0)
    """
    from ._conv import cumsum

    k = _check_key("multinomial", key)
    d = _float_dtype("multinomial", dtype)
    pa, na = _to_array(p), _to_array(n)
    pd = float64 if (not pa.dtype.is_float or not na.dtype.is_float or pa.dtype is float64 or na.dtype is float64) else float32
    if not is_array(n) and not isinstance(n, np.ndarray) and pa.dtype is float32:
        pd = float32
    pa, na = _as_float(pa, pd), _as_float(na, pd)
    if pa.ndim < 1:
        raise ShapeError("multinomial: p must have at least one dimension (the categories)")
    shape = tuple(pa.shape) if shape is None else _shape_arg("multinomial", shape)
    if not shape:
        raise ShapeError("multinomial: shape must end with the number of categories")
    for nm, v, target in (("n", na, shape[:-1]), ("p", pa, shape)):
        if len(v.shape) > len(target) or _o._bcast_shapes("multinomial", v.shape, target) != target:
            raise ShapeError(f"multinomial: {nm} of shape {_shape_str(v.shape)} does not broadcast to {_shape_str(target)}")
    na = _o.broadcast_to(na, shape[:-1])
    pa = _o.broadcast_to(pa, shape)
    kcat = shape[-1]
    rest = cumsum(pa, axis=-1, reverse=True)
    ratios = pa / _o.where(rest == 0.0, _c(1.0, pd), rest)
    keys = split(k, kcat)
    remainder, counts = na, []
    for i in range(kcat):
        c = binomial(keys[i], remainder, _o.clip(ratios[..., i], 0.0, 1.0), dtype=pd)
        remainder = remainder - c
        counts.append(c)
    return _o.astype(_o.stack(counts, axis=-1), d)


# ---------------------------------------------------------------------------------------------
# Matrices


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """Multivariate normal samples ``mean + factor @ z`` with ``factor`` from ``cov``
    (``jax.random.multivariate_normal``): 'cholesky' (default; JAX's values up to rounding),
    'eigh' or 'svd' (for singular covariances; eigenvector signs may differ from LAPACK's,
    so these samples follow the same law as JAX's but are not the same numbers).

    Args:
        key: a key of shape (2,).
        mean: ``(..., n)``.
        cov: ``(..., n, n)``, positive (semi-)definite.
        shape: the batch shape (default the broadcast batch shapes of mean and cov).
        dtype: the sample dtype (default mean's and cov's float dtype).
        method: 'cholesky', 'eigh' or 'svd'.

    Example:
        >>> x = qb.random.multivariate_normal(qb.random.key(0), qb.zeros(2), qb.eye(2), (5,))
        >>> x.shape
        (5, 2)
    """
    from . import linalg

    k = _check_key("multivariate_normal", key)
    if method not in ("svd", "eigh", "cholesky"):
        raise InvalidArgumentError(f"multivariate_normal: method must be 'svd', 'eigh' or 'cholesky', got {method!r}")
    mu, cv = _to_array(mean), _to_array(cov)
    md = float64 if not (mu.dtype is float32 and cv.dtype in (float32,)) else float32
    if not is_array(mean) and not isinstance(mean, np.ndarray) and cv.dtype is float32:
        md = float32
    mu, cv = _as_float(mu, md), _as_float(cv, md)
    d = md if dtype is None else _float_dtype("multivariate_normal", dtype)
    if mu.ndim < 1:
        raise ShapeError("multivariate_normal: mean must have at least one dimension, got a scalar")
    if cv.ndim < 2:
        raise ShapeError(f"multivariate_normal: cov must have at least two dimensions, got shape {_shape_str(cv.shape)}")
    n = mu.shape[-1]
    if tuple(cv.shape[-2:]) != (n, n):
        raise ShapeError(f"multivariate_normal: cov must have shape (..., {n}, {n}) for mean of shape {_shape_str(mu.shape)}, got {_shape_str(cv.shape)}")
    bshape = _o._bcast_shapes("multivariate_normal", tuple(mu.shape[:-1]), tuple(cv.shape[:-2]))
    if shape is None:
        shape = bshape
    else:
        shape = _shape_arg("multivariate_normal", shape)
        if _o._bcast_shapes("multivariate_normal", shape, bshape) != shape:
            raise ShapeError(f"multivariate_normal: the batch shapes of mean and cov {_shape_str(bshape)} must broadcast to shape {_shape_str(shape)}")
    if method == "svd":
        u, s, _ = linalg.svd(cv)
        factor = u * _o.expand_dims(_o.sqrt(s), -2)
    elif method == "eigh":
        w, v = linalg.eigh(cv)
        factor = v * _o.expand_dims(_o.sqrt(w), -2)
    else:
        factor = linalg.cholesky(cv)
    z = normal(k, (*shape, n), d)
    return mu + _o.sum(factor * _o.expand_dims(z, -2), axis=-1)


def orthogonal(key, n, shape=(), dtype=None, m=None):
    """Haar-random orthogonal ``n x n`` matrices (``n x m`` with orthonormal rows or columns
    when ``m`` is given): the Q of a normal matrix's QR with the signs of R's diagonal
    (``jax.random.orthogonal``; JAX's values up to rounding).

    Example:
        >>> q = qb.random.orthogonal(qb.random.key(0), 3)
        >>> bool(qb.allclose(q @ q.T, qb.eye(3), atol=1e-12))
        True
    """
    from . import linalg

    k, d = _start("orthogonal", key, dtype)
    dims = []
    for nm, v in (("n", n), ("m", n if m is None else m)):
        if type(v) is Tracer:
            raise _errors.ConcretizationTypeError(f"orthogonal: {nm} must be a concrete int (it is traced)")
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise ArgumentTypeError(f"orthogonal: {nm} must be an int, got {type(v).__name__}")
        if int(v) <= 0:
            raise ShapeError(f"orthogonal: {nm} must be positive, got {int(v)}")
        dims.append(int(v))
    nn, mm = dims
    shape = _shape_arg("orthogonal", shape)
    z = normal(k, (*shape, max(nn, mm), min(nn, mm)), d)
    q, r = linalg.qr(z)
    diag = _o.sum(r * _o.eye(min(nn, mm), dtype=d), axis=-1)
    x = q * _o.expand_dims(_o.sign(diag), -2)
    return _o.swapaxes(x, -1, -2) if nn < mm else x
