"""NumPy breadth: the functions of ``jax.numpy`` that real programs use beyond the core ops of
:mod:`quabla._ops`, built from Quabla ops (so they trace, differentiate and batch).

Owns: the new elementwise wrappers (``sinh`` ... ``arctanh``, ``cbrt``, ``square``, ``log2``,
``log10``, ``hypot``, ``arctan2``, ``isnan``, ``isinf``, ``nan_to_num``, ``isclose``,
``allclose``), products (``outer``, ``inner``, ``vdot``, ``kron``), matrix helpers (``diag``,
``diagonal``, ``trace``, ``tril``, ``triu``, ``tri``), construction and layout (``meshgrid``,
``vstack``, ``hstack``, ``column_stack``, ``pad``, ``roll``, ``flip``, ``repeat``, ``tile``,
``diff``), ``sort``/``argsort``/``top_k`` (on the sort family's ops).
"""

import builtins
import math

import numpy as np

from . import dtypes as _dt
from ._ops import (
    divide,
    _bcast_shapes,
    _binary_operands,
    _common,
    _dot_general,
    _floatify,
    _arrays_arg,
    _from_numpy,
    _int_arg,
    _ints_arg,
    _norm_axis,
    _np_alloc,
    _shape_arg,
    _STAGED_MIN,
    _iota,
    _op,
    _shape_str,
    _slice_axis,
    _to_array,
    abs,
    astype,
    broadcast_to,
    concatenate,
    equal,
    expand_dims,
    full,
    greater,
    less,
    less_equal,
    log,
    logical_and,
    logical_not,
    logical_or,
    maximum,
    minimum,
    multiply,
    not_equal,
    ravel,
    reshape,
    round as _round,
    sqrt,
    stack,
    sum,
    take,
    transpose,
    where,
)
from ._trace import Tracer as _Tracer
from ._trace import bind, is_array
from ._conv import cumsum as _cumsum
from ._indexing import scatter as _scatter
from ._transforms import vmap as _vmap
from ._trace import current as _current_trace
from .dtypes import bool_, float64, int32, int64
from .errors import ArgumentTypeError, ArraySizeError, DTypeError, ShapeError, UnsupportedOperationError
from . import errors as _errors

# ---------------------------------------------------------------------------------------------
# Elementwise


def _unary(opname, name, doc, example):
    op = _op(opname)

    def f(x):
        return bind(op, _floatify(_to_array(x)))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""{doc}

    Integer and bool inputs are converted to a float first (int64 to float64; bool, uint8,
    uint32 and int32 to float32, as JAX's x64 mode).

    Example:
        >>> {example}
    """
    return f


sinh = _unary("sinh", "sinh", "Elementwise hyperbolic sine.", "qb.sinh(qb.array([0.0])).tolist()\n        [0.0]")
cosh = _unary("cosh", "cosh", "Elementwise hyperbolic cosine.", "qb.cosh(qb.array([0.0])).tolist()\n        [1.0]")
arcsin = _unary("asin", "arcsin", "Elementwise inverse sine (NaN outside [-1, 1]).", "qb.arcsin(qb.array([0.0])).tolist()\n        [0.0]")
arccos = _unary("acos", "arccos", "Elementwise inverse cosine (NaN outside [-1, 1]).", "qb.arccos(qb.array([1.0])).tolist()\n        [0.0]")
arctan = _unary("atan", "arctan", "Elementwise inverse tangent.", "qb.arctan(qb.array([0.0])).tolist()\n        [0.0]")
arcsinh = _unary("asinh", "arcsinh", "Elementwise inverse hyperbolic sine.", "qb.arcsinh(qb.array([0.0])).tolist()\n        [0.0]")
arccosh = _unary("acosh", "arccosh", "Elementwise inverse hyperbolic cosine (NaN below 1).", "qb.arccosh(qb.array([1.0])).tolist()\n        [0.0]")
arctanh = _unary("atanh", "arctanh", "Elementwise inverse hyperbolic tangent (±inf at ±1).", "qb.arctanh(qb.array([0.0])).tolist()\n        [0.0]")
cbrt = _unary("cbrt", "cbrt", "Elementwise real cube root (negative for negative x).", "qb.cbrt(qb.array([-8.0])).tolist()\n        [-2.0]")
asin, acos, atan, asinh, acosh, atanh = arcsin, arccos, arctan, arcsinh, arccosh, arctanh


def reciprocal(x):
    """Elementwise 1 / x (true division: integer and bool inputs give floats, as JAX's
    ``jnp.reciprocal``; NumPy keeps integers).

    Example:
        >>> qb.reciprocal(qb.array([2.0, 4.0])).tolist()
        [0.5, 0.25]
    """
    return divide(1.0, _floatify(_to_array(x)))


def square(x):
    """Elementwise x * x (integer dtypes kept; bools give int32, as JAX).

    Example:
        >>> qb.square(qb.array([3, -2])).tolist()
        [9, 4]
    """
    x = _to_array(x)
    if x.dtype.is_bool:
        x = astype(x, int32)
    return bind(_op("powi", exponent=2), x)


def log2(x):
    """Elementwise base-2 logarithm, log(x) / log(2) (as jax.numpy).

    Example:
        >>> qb.log2(qb.array([8.0])).tolist()
        [3.0]
    """
    x = _floatify(_to_array(x))
    return log(x) / math.log(2.0)


def log10(x):
    """Elementwise base-10 logarithm, log(x) / log(10) (as jax.numpy).

    Example:
        >>> round(qb.log10(qb.array([1000.0])).item(), 12)
        3.0
    """
    x = _floatify(_to_array(x))
    return log(x) / math.log(10.0)


def arctan2(x1, x2):
    """Elementwise angle of the point (x2, x1), in (-pi, pi], with broadcasting.

    Example:
        >>> round(qb.arctan2(1.0, qb.array([1.0])).item(), 6)
        0.785398
    """
    x1, x2 = _binary_operands("atan2", x1, x2)
    if not x1.dtype.is_float:
        x1, x2 = _floatify(x1), _floatify(x2)
    return bind(_op("atan2"), x1, x2)


atan2 = arctan2


def hypot(x1, x2):
    """Elementwise sqrt(x1**2 + x2**2) without intermediate overflow (scaled by max(|x1|, |x2|);
    ``hypot(0, 0) == 0``).

    Example:
        >>> qb.hypot(qb.array([3.0]), 4.0).tolist()
        [5.0]
    """
    x1, x2 = _binary_operands("hypot", x1, x2)
    if not x1.dtype.is_float:
        x1, x2 = _floatify(x1), _floatify(x2)
    a, b = abs(x1), abs(x2)
    m = maximum(a, b)
    n = minimum(a, b)
    safe = where(m == 0, 1.0, m)
    r = n / safe
    out = m * sqrt(1.0 + r * r)
    # inf in either operand gives inf, even with a NaN in the other (C99 hypot).
    inf = logical_or(a == math.inf, b == math.inf)
    return where(inf, math.inf, where(m == 0, 0.0, out))


def isnan(x):
    """Elementwise NaN test (False for integers and bools).

    Example:
        >>> qb.isnan(qb.array([1.0, float("nan")])).tolist()
        [False, True]
    """
    x = _to_array(x)
    if not x.dtype.is_float:
        return full(x.shape, False, dtype=bool_)
    return x != x


def isinf(x):
    """Elementwise test for ±inf (False for integers and bools).

    Example:
        >>> qb.isinf(qb.array([1.0, -float("inf")])).tolist()
        [False, True]
    """
    x = _to_array(x)
    if not x.dtype.is_float:
        return full(x.shape, False, dtype=bool_)
    return abs(x) == math.inf


def isposinf(x):
    """Elementwise test for +inf.

    Example:
        >>> qb.isposinf(qb.array([float("inf"), -float("inf")])).tolist()
        [True, False]
    """
    x = _to_array(x)
    if not x.dtype.is_float:
        return full(x.shape, False, dtype=bool_)
    return x == math.inf


def isneginf(x):
    """Elementwise test for -inf.

    Example:
        >>> qb.isneginf(qb.array([float("inf"), -float("inf")])).tolist()
        [False, True]
    """
    x = _to_array(x)
    if not x.dtype.is_float:
        return full(x.shape, False, dtype=bool_)
    return x == -math.inf


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """Replaces NaN by ``nan`` and ±inf by ``posinf``/``neginf`` (default: the dtype's largest
    finite values), as jax.numpy. ``copy`` is accepted and ignored (arrays are immutable).

    Example:
        >>> qb.nan_to_num(qb.array([float("nan"), 1.0])).tolist()
        [0.0, 1.0]
    """
    x = _to_array(x)
    if not x.dtype.is_float:
        return x
    info = np.finfo(x.dtype.np)
    hi = float(info.max) if posinf is None else posinf
    lo = float(info.min) if neginf is None else neginf
    x = where(x != x, nan, x)
    x = where(x == math.inf, hi, x)
    return where(x == -math.inf, lo, x)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (infinities equal only to themselves;
    NaN equal to NaN when ``equal_nan``).

    Example:
        >>> qb.isclose(qb.array([1.0, 1.1]), 1.0).tolist()
        [True, False]
    """
    a, b = _binary_operands("isclose", a, b)
    if not a.dtype.is_float:
        return a == b
    finite = logical_and(abs(a) < math.inf, abs(b) < math.inf)
    close = less_equal(abs(a - b), atol + rtol * abs(b))
    r = where(finite, close, a == b)
    if equal_nan:
        r = logical_or(r, logical_and(a != a, b != b))
    return r


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when :func:`isclose` holds everywhere (a 0-d bool_ array, as jax.numpy).

    Example:
        >>> qb.allclose(qb.array([1.0, 2.0]), qb.array([1.0, 2.0 + 1e-9])).item()
        True
    """
    from ._ops import all as _all

    return _all(isclose(a, b, rtol, atol, equal_nan))


# ---------------------------------------------------------------------------------------------
# Products


def _prod2(op, a, b):
    """The operands of product ``op`` in their common dtype (Python numbers weak)."""
    return _common(op, [a, b])


def outer(a, b, out=None):
    """Outer product of the flattened inputs: ``out[i, j] = a[i] * b[j]``.

    Example:
        >>> qb.outer(qb.array([1, 2]), qb.array([1, 10])).tolist()
        [[1, 10], [2, 20]]
    """
    if out is not None:
        raise UnsupportedOperationError("outer: out= is not supported (arrays are immutable)", op="outer")
    a, b = _prod2("outer", a, b)
    a, b = ravel(a), ravel(b)
    return multiply(reshape(a, (a.size, 1)), reshape(b, (1, b.size)))


def inner(a, b):
    """Inner product over the last axes (a scalar operand multiplies).

    Example:
        >>> qb.inner(qb.array([1.0, 2.0]), qb.array([3.0, 4.0])).item()
        11.0
    """
    a, b = _prod2("inner", a, b)
    if a.dtype.is_bool:
        return not_equal(inner(astype(a, int32), astype(b, int32)), 0)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    if a.shape[-1] != b.shape[-1]:
        raise ShapeError(f"inner: last axes differ: {_shape_str(a.shape)} and {_shape_str(b.shape)}")
    return _dot_general(a, b, (), (), (a.ndim - 1,), (b.ndim - 1,))


def vdot(a, b):
    """Dot product of the flattened inputs (real dtypes: no conjugation).

    Example:
        >>> qb.vdot(qb.array([[1.0, 2.0]]), qb.array([3.0, 4.0])).item()
        11.0
    """
    a, b = _prod2("vdot", a, b)
    if a.dtype.is_bool:
        return not_equal(vdot(astype(a, int32), astype(b, int32)), 0)
    a, b = ravel(a), ravel(b)
    if a.size != b.size:
        raise ShapeError(f"vdot: sizes differ: {a.size} and {b.size}")
    return _dot_general(a, b, (), (), (0,), (0,))


def kron(a, b):
    """Kronecker product: blocks ``a[i, j] * b`` (ranks padded with leading 1s).

    Example:
        >>> qb.kron(qb.eye(2), qb.ones((1, 2))).tolist()
        [[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]]
    """
    a, b = _prod2("kron", a, b)
    nd = builtins.max(a.ndim, b.ndim)
    a = reshape(a, (1,) * (nd - a.ndim) + a.shape)
    b = reshape(b, (1,) * (nd - b.ndim) + b.shape)
    # a[..., i, 1, ...] * b[1, ..., k, ...] interleaved, then merged.
    ae = reshape(a, tuple(x for d in a.shape for x in (d, 1)))
    be = reshape(b, tuple(x for d in b.shape for x in (1, d)))
    p = multiply(ae, be)
    return reshape(p, tuple(p_ * q for p_, q in zip(a.shape, b.shape)))


# ---------------------------------------------------------------------------------------------
# Matrix helpers


def tri(N, M=None, k=0, dtype=None):
    """An N x M array with ones at and below diagonal ``k`` (default dtype float32, as
    jax.numpy's).

    Example:
        >>> qb.tri(2, dtype=qb.int32).tolist()
        [[1, 0], [1, 1]]
    """
    dt = _dt.dtype(dtype, "tri") if dtype is not None else _dt.float32
    n, m = _shape_arg("tri", (N, N if M is None else M), dt)
    k = _int_arg("tri", "k", k)
    if _current_trace() is not None and n * m > _STAGED_MIN:
        # As eye: inside a trace a large one is computed by the program.
        return astype(less_equal(_iota((n, m), 1) - _iota((n, m), 0), k), dt)
    return _from_numpy(_np_alloc("tri", np.tri, n, m, k), dt)


def _tri_mask(x, k, lower):
    if x.ndim < 2:
        raise ShapeError(f"{'tril' if lower else 'triu'}: needs an array of rank >= 2, got shape {_shape_str(x.shape)}")
    k = _int_arg("tril" if lower else "triu", "k", k)
    n, m = x.shape[-2:]
    r = _iota((n, m), 0)
    c = _iota((n, m), 1)
    mask = less_equal(c - r, k) if lower else greater(c - r, k - 1)
    return broadcast_to(mask, x.shape)


def tril(m, k=0):
    """Lower triangle of the last two axes (entries above diagonal ``k`` zeroed).

    Example:
        >>> qb.tril(qb.ones((2, 2))).tolist()
        [[1.0, 0.0], [1.0, 1.0]]
    """
    x = _to_array(m)
    return where(_tri_mask(x, k, True), x, _to_array(0, x.dtype))


def triu(m, k=0):
    """Upper triangle of the last two axes (entries below diagonal ``k`` zeroed).

    Example:
        >>> qb.triu(qb.ones((2, 2))).tolist()
        [[1.0, 1.0], [0.0, 1.0]]
    """
    x = _to_array(m)
    return where(_tri_mask(x, k, False), x, _to_array(0, x.dtype))


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal ``offset`` of the plane (axis1, axis2), as the last axis of the result.

    Example:
        >>> qb.diagonal(qb.array([[1, 2], [3, 4]])).tolist()
        [1, 4]
    """
    x = _to_array(a)
    nd = x.ndim
    if nd < 2:
        raise ShapeError(f"diagonal: needs an array of rank >= 2, got shape {_shape_str(x.shape)}")
    a1 = _norm_axis("diagonal", axis1, nd, x.shape)
    a2 = _norm_axis("diagonal", axis2, nd, x.shape)
    if a1 == a2:
        raise ShapeError(f"diagonal: axis1 and axis2 are both {a1}")
    rest = [i for i in range(nd) if i not in (a1, a2)]
    x = transpose(x, rest + [a1, a2])
    n, m = x.shape[-2:]
    offset = _int_arg("diagonal", "offset", offset)
    length = builtins.max(0, builtins.min(n, m - offset) if offset >= 0 else builtins.min(n + offset, m))
    if length == 0:
        raise ShapeError(f"diagonal: offset {offset} of a {n} x {m} plane is empty (zero-extent tensors are not supported)")
    r0, c0 = (0, offset) if offset >= 0 else (-offset, 0)
    flat = reshape(x, x.shape[:-2] + (n * m,))
    idx = _from_numpy(np.array([(r0 + i) * m + c0 + i for i in range(length)], dtype=np.int64))
    return take(flat, idx, axis=flat.ndim - 1)


def diag(v, k=0):
    """A 1-D ``v``: the square matrix with ``v`` on diagonal ``k``; a 2-D ``v``: its diagonal ``k``.

    Example:
        >>> qb.diag(qb.array([1, 2])).tolist()
        [[1, 0], [0, 2]]
    """
    x = _to_array(v)
    k = _int_arg("diag", "k", k)
    if x.ndim == 2:
        return diagonal(x, k)
    if x.ndim != 1:
        raise ShapeError(f"diag: input must be 1-D or 2-D, got shape {_shape_str(x.shape)}")
    n = x.shape[0] + builtins.abs(k)
    r = _iota((n, n), 0)
    c = _iota((n, n), 1)
    on = equal(c - r, k)
    # M[r, c] = v[r] on the diagonal when k >= 0 and v[c] when k < 0: pad v to n and
    # broadcast it along columns (k >= 0) or rows (k < 0).
    zero = astype(_to_array(0), x.dtype)
    vp = bind(_op("pad", edge_padding_low=(0,), edge_padding_high=(builtins.abs(k),), interior_padding=(0,)), x, zero)
    line = reshape(vp, (n, 1) if k >= 0 else (1, n))
    return where(on, broadcast_to(line, (n, n)), zero)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum along the diagonal ``offset`` of the plane (axis1, axis2).

    Example:
        >>> qb.trace(qb.array([[1, 2], [3, 4]])).item()
        5
    """
    if out is not None:
        raise UnsupportedOperationError("trace: out= is not supported (arrays are immutable)", op="trace")
    d = diagonal(a, offset, axis1, axis2)
    r = sum(d, axis=-1)
    return r if dtype is None else astype(r, dtype)


# ---------------------------------------------------------------------------------------------
# Construction and layout


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from 1-D coordinate vectors (``indexing`` "xy" or "ij", ``sparse``
    keeps singleton axes), as jax.numpy.

    Example:
        >>> [g.shape for g in qb.meshgrid(qb.arange(3), qb.arange(2))]
        [(2, 3), (2, 3)]
    """
    if indexing not in ("xy", "ij"):
        raise _errors.InvalidArgumentError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    xs = [ravel(_to_array(x)) for x in xi]
    n = len(xs)
    shape = [x.size for x in xs]
    if indexing == "xy" and n >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, x in enumerate(xs):
        ax = i
        if indexing == "xy" and n >= 2 and i < 2:
            ax = 1 - i
        s = [1] * n
        s[ax] = x.size
        g = reshape(x, tuple(s))
        out.append(g if sparse else broadcast_to(g, tuple(shape)))
    return out


def _atleast(x, nd):
    x = _to_array(x)
    if x.ndim >= nd:
        return x
    if nd == 2:
        return reshape(x, (1,) * (2 - x.ndim) + x.shape)
    return reshape(x, (1,) * (nd - x.ndim) + x.shape)


def atleast_1d(*arys):
    """Each input viewed with at least one axis (a list when several are given).

    Example:
        >>> qb.atleast_1d(1.0).shape
        (1,)
    """
    r = [_atleast(a, 1) for a in arys]
    return r[0] if len(r) == 1 else r


def atleast_2d(*arys):
    """Each input viewed with at least two axes (leading axes of extent 1).

    Example:
        >>> qb.atleast_2d(qb.ones(3)).shape
        (1, 3)
    """
    r = [_atleast(a, 2) for a in arys]
    return r[0] if len(r) == 1 else r


def vstack(tup, dtype=None):
    """Stacks arrays row-wise: 1-D arrays become rows (concatenation along axis 0).

    Example:
        >>> qb.vstack([qb.ones(2), qb.zeros(2)]).shape
        (2, 2)
    """
    xs = [_atleast(x, 2) for x in _arrays_arg("vstack", "tup", tup)]
    r = concatenate(xs, axis=0)
    return r if dtype is None else astype(r, dtype)


def hstack(tup, dtype=None):
    """Stacks arrays column-wise: along axis 1, or axis 0 for 1-D arrays.

    Example:
        >>> qb.hstack([qb.ones(2), qb.zeros(3)]).shape
        (5,)
    """
    xs = [_atleast(x, 1) for x in _arrays_arg("hstack", "tup", tup)]
    if not xs:
        raise _errors.InvalidArgumentError("hstack: needs at least one array")
    r = concatenate(xs, axis=0 if xs[0].ndim == 1 else 1)
    return r if dtype is None else astype(r, dtype)


def column_stack(tup):
    """Stacks 1-D arrays as columns of a 2-D array (2-D arrays are joined along axis 1).

    Example:
        >>> qb.column_stack([qb.ones(3), qb.zeros(3)]).shape
        (3, 2)
    """
    xs = []
    for x in _arrays_arg("column_stack", "tup", tup):
        x = _to_array(x)
        xs.append(reshape(x, (x.size, 1)) if x.ndim < 2 else x)
    return concatenate(xs, axis=1)


def _pad_widths(pad_width, nd):
    if isinstance(pad_width, (int, np.integer)) and not isinstance(pad_width, (bool, np.bool_)):
        pad_width = [_int_arg("pad", "pad_width", pad_width)]
    elif not isinstance(pad_width, (tuple, list, np.ndarray)):
        raise _errors.ArgumentTypeError(f"pad: pad_width must be an int or a sequence of (before, after) ints, got {type(pad_width).__name__}")
    try:
        pw = np.asarray(pad_width)
    except ValueError:
        raise ShapeError(f"pad: pad_width {pad_width!r} is not a rectangular sequence of ints") from None
    if (pw.dtype.kind == "O" and builtins.all(isinstance(v, int) for v in pw.ravel())) or (pw.dtype.kind == "u" and pw.size and pw.max() >= 2**63):
        raise ArraySizeError(f"pad: pad_width {pad_width!r} has a width that does not fit in 64 bits")
    if pw.dtype.kind not in "iu":
        raise ArgumentTypeError(f"pad: pad_width must contain ints, got {pw.dtype} entries")
    pw = pw.astype(np.int64)
    if pw.ndim == 0:
        pw = np.full((nd, 2), int(pw))
    elif pw.shape == (1,):
        pw = np.full((nd, 2), int(pw[0]))
    elif pw.shape == (2,):
        pw = np.tile(pw, (nd, 1))
    elif pw.shape == (1, 2):
        pw = np.tile(pw[0], (nd, 1))
    if pw.shape != (nd, 2):
        raise ShapeError(f"pad: pad_width of shape {pw.shape} does not fit an array of rank {nd}")
    if (pw < 0).any():
        raise _errors.InvalidArgumentError("pad: pad_width must be non-negative")
    return [(int(a), int(b)) for a, b in pw]


_PAD_MODES = ("constant", "edge", "wrap", "reflect", "symmetric", "linear_ramp", "maximum", "minimum", "mean", "median", "empty")
# The keyword arguments each mode takes (NumPy's; others are an error, as JAX's).
_PAD_KWARGS = {"constant": ("constant_values",), "linear_ramp": ("end_values",), "reflect": ("reflect_type",), "symmetric": ("reflect_type",),
               "maximum": ("stat_length",), "minimum": ("stat_length",), "mean": ("stat_length",), "median": ("stat_length",)}


def _pad_pairs(name, v, nd):
    """A per-axis ``((before, after), ...)`` of NumPy's broadcastable forms (a scalar,
    ``(v,)``, ``(before, after)``, ``((before, after),)`` or one pair per axis) of static
    numbers (``constant_values``/``end_values``; arrays of them are read as numbers)."""
    try:
        a = np.asarray(v)
    except (ValueError, TypeError):
        raise ShapeError(f"pad: {name} {_short(v)} is not a rectangular sequence of numbers") from None
    if a.dtype.kind not in "biuf":
        raise ArgumentTypeError(f"pad: {name} must contain numbers, got {_short(v)}")
    if a.ndim == 0 or a.shape == (1,) or a.shape == (1, 1):
        a = np.full((nd, 2), a.reshape(()))
    elif a.shape in ((2,), (1, 2)):
        a = np.tile(a.reshape(2), (nd, 1))
    elif a.shape == (nd, 1):
        a = np.tile(a, (1, 2))
    if a.shape != (nd, 2):
        raise ShapeError(f"pad: {name} of shape {a.shape} does not fit an array of rank {nd} (one (before, after) pair per axis)")
    return [(a[i, 0].item(), a[i, 1].item()) for i in range(nd)]


def _short(v):
    r = repr(v)
    return r if len(r) <= 40 else r[:37] + "..."


def _slab(x, ax, lo, hi):
    """``x[lo:hi]`` along axis ``ax``."""
    return _slice_axis(x, ax, lo, hi, 1)


def _repeat_slab(x, ax, k):
    """The extent-1 slab ``x`` repeated ``k`` times along ``ax``."""
    shape = list(x.shape)
    shape[ax] = k
    return broadcast_to(x, tuple(shape))


def _stat(mode, x, ax):
    """The pad statistic of ``mode`` of ``x`` along ``ax`` (kept as extent 1): rounded to the
    nearest integer for integer arrays (mean, median), as NumPy and JAX."""
    if mode == "maximum":
        r = _reduce_max(x, ax)
    elif mode == "minimum":
        r = _reduce_min(x, ax)
    elif mode == "mean":
        f = _floatify(x)
        r = sum(f, axis=ax, keepdims=True) / x.shape[ax]
    else:  # median: the middle of the sorted values (NaN when any is NaN)
        f = _floatify(x)
        srt = sort(f, axis=ax)
        n = x.shape[ax]
        r = (_slab(srt, ax, (n - 1) // 2, (n - 1) // 2 + 1) + _slab(srt, ax, n // 2, n // 2 + 1)) * 0.5
        if f.dtype.is_float:
            r = where(_reduce_max(isnan(f), ax), float("nan"), r)
    if r.dtype is not x.dtype:
        if not x.dtype.is_float and not x.dtype.is_bool:
            r = _round(r)  # half to even
        r = astype(r, x.dtype)
    return r


def _reduce_max(x, ax):
    return _reduce_keep(x, ax, "reduce_max")


def _reduce_min(x, ax):
    return _reduce_keep(x, ax, "reduce_min")


def _reduce_keep(x, ax, op):
    shape = list(x.shape)
    shape[ax] = 1
    return reshape(bind(_op(op, dims=(ax,)), x), tuple(shape))


def _pad_reflect(x, ax, lo, hi, mode, odd):
    """Reflect/symmetric padding of axis ``ax`` in chunks of at most the axis' extent (less
    one for "reflect"), each reflecting the array padded so far (NumPy's iteration; "odd"
    mirrors the values through the current edge value)."""
    n = x.shape[ax]
    off = 1 if (mode == "reflect" and n > 1) else 0
    for before, width in ((True, lo), (False, hi)):
        edge = _slab(x, ax, 0, 1) if before else _slab(x, ax, x.shape[ax] - 1, x.shape[ax])
        while width > 0:
            k = builtins.min(width, n - off)
            width -= k
            m = x.shape[ax]
            if before:
                chunk = _slab(x, ax, off, off + k)
            else:
                stop = m if (mode == "symmetric" or n == 1) else m - 1
                chunk = _slab(x, ax, stop - k, stop)
            chunk = flip(chunk, ax)
            if odd:
                chunk = edge * 2 - chunk
                if n > 1:
                    edge = _slab(chunk, ax, 0, 1) if before else _slab(chunk, ax, k - 1, k)
            x = concatenate([chunk, x] if before else [x, chunk], axis=ax)
    return x


def pad(array, pad_width, mode="constant", **kwargs):
    """Pads ``array`` by NumPy's rules, as ``jax.numpy.pad``: ``pad_width`` is an int, a
    ``(before, after)`` pair or one pair per axis; ``mode`` is one of

    * ``"constant"`` (``constant_values``: a number or per-axis pairs, default 0),
    * ``"edge"``, ``"wrap"``, ``"reflect"`` / ``"symmetric"`` (``reflect_type`` "even" or
      "odd"),
    * ``"linear_ramp"`` (a ramp from ``end_values``, default 0, to the edge),
    * ``"maximum"``, ``"minimum"``, ``"mean"``, ``"median"`` (of the whole axis or of the
      ``stat_length`` values next to each edge; rounded for integer arrays),
    * ``"empty"`` (zeros, as JAX's),
    * a callable ``f(vector, pad_width, iaxis, kwargs)`` applied (through vmap) to every 1-D
      slice of the zero-padded array along each axis in turn, returning the new slice (JAX's
      form: it returns the vector rather than writing into it).

    Axes are padded one after another (NumPy's order), so corners take values from the axes
    padded before.

    Args:
        array: the array.
        pad_width: the widths.
        mode: the mode (a string or a callable).
        **kwargs: the mode's options (above).

    Returns:
        The padded array of ``array``'s dtype.

    Example:
        >>> qb.pad(qb.array([1, 2]), 1).tolist()
        [0, 1, 2, 0]
        >>> qb.pad(qb.array([1.0, 2.0, 6.0]), (2, 1), mode="mean").tolist()
        [3.0, 3.0, 1.0, 2.0, 6.0, 3.0]
    """
    x = _to_array(array)
    widths = _pad_widths(pad_width, x.ndim)
    if callable(mode):
        return _pad_callable(x, widths, mode, kwargs)
    if not isinstance(mode, str):
        raise ArgumentTypeError(f"pad: mode must be a string ({', '.join(_PAD_MODES)}) or a callable, got {type(mode).__name__}")
    if mode not in _PAD_MODES:
        raise UnsupportedOperationError(f"pad: mode {mode!r} is not supported ({', '.join(_PAD_MODES)} or a callable)", op="pad")
    bad = sorted(k for k in kwargs if k not in _PAD_KWARGS.get(mode, ()))
    if bad:
        raise _errors.InvalidArgumentError(f"pad: unsupported keyword arguments for mode {mode!r}: {bad}")
    nd = x.ndim
    if nd == 0:
        return x
    if mode == "constant":
        cv = kwargs.get("constant_values", 0)
        if (is_array(cv) and cv.ndim == 0) or _is_number(cv):
            c = astype(_to_array(cv), x.dtype)
            return bind(_op("pad", edge_padding_low=tuple(a for a, _ in widths), edge_padding_high=tuple(b for _, b in widths), interior_padding=(0,) * nd), x, c)
        pairs = _pad_pairs("constant_values", cv, nd)
        for ax, ((lo, hi), (cl, ch)) in enumerate(zip(widths, pairs)):
            parts = []
            for w, c in ((lo, cl), (hi, ch)):
                shape = list(x.shape)
                shape[ax] = w
                parts.append(full(tuple(shape), c, x.dtype) if w else None)
            x = concatenate([p for p in (parts[0], x, parts[1]) if p is not None], axis=ax)
        return x
    if mode == "empty":
        zero = _to_array(False if x.dtype.is_bool else 0, x.dtype)
        return bind(_op("pad", edge_padding_low=tuple(a for a, _ in widths), edge_padding_high=tuple(b for _, b in widths), interior_padding=(0,) * nd), x, zero)
    if mode in ("reflect", "symmetric"):
        rt = kwargs.get("reflect_type", "even")
        if rt not in ("even", "odd") if isinstance(rt, str) else True:
            raise _errors.InvalidArgumentError(f"pad: reflect_type must be 'even' or 'odd', got {_short(rt)}")
        for ax, (lo, hi) in enumerate(widths):
            if lo or hi:
                x = _pad_reflect(x, ax, lo, hi, mode, rt == "odd")
        return x
    if mode in ("edge", "wrap"):
        for ax, (lo, hi) in enumerate(widths):
            if lo == 0 and hi == 0:
                continue
            n = x.shape[ax]
            idx = [_pad_index(mode, i, n) for i in range(-lo, n + hi)]
            x = take(x, _from_numpy(np.array(idx, dtype=np.int64)), axis=ax)
        return x
    if mode == "linear_ramp":
        ends = _pad_pairs("end_values", kwargs.get("end_values", 0), nd)
        for ax, ((lo, hi), (el, eh)) in enumerate(zip(widths, ends)):
            parts = [x]
            n = x.shape[ax]
            for before, w, end in ((True, lo, el), (False, hi, eh)):
                if not w:
                    continue
                edge = _floatify(_slab(x, ax, 0, 1) if before else _slab(x, ax, n - 1, n))
                shape = [1] * nd
                shape[ax] = w
                t = reshape(_from_numpy(np.arange(w, dtype=edge.dtype.np) / w), tuple(shape))
                ramp = end + (edge - end) * t  # from the end value towards the edge
                if not before:
                    ramp = flip(ramp, ax)
                if not x.dtype.is_float:
                    ramp = astype(ramp, x.dtype)
                parts.insert(0 if before else len(parts), ramp)
            x = concatenate(parts, axis=ax) if len(parts) > 1 else x
        return x
    # maximum, minimum, mean, median
    sl = kwargs.get("stat_length")
    lens = None if sl is None else _pad_widths_named("stat_length", sl, nd)
    for ax, (lo, hi) in enumerate(widths):
        n = x.shape[ax]
        if lens is None:
            sb = sa = _stat(mode, x, ax)
        else:
            lb, la = lens[ax]
            if lb == 0 or la == 0:
                raise _errors.InvalidArgumentError("pad: a stat_length of 0 gives no value to pad with")
            lb, la = builtins.min(lb, n), builtins.min(la, n)
            sb, sa = _stat(mode, _slab(x, ax, 0, lb), ax), _stat(mode, _slab(x, ax, n - la, n), ax)
        parts = ([_repeat_slab(sb, ax, lo)] if lo else []) + [x] + ([_repeat_slab(sa, ax, hi)] if hi else [])
        x = concatenate(parts, axis=ax) if len(parts) > 1 else x
    return x


def _pad_index(mode, i, n):
    if mode == "edge":
        return builtins.min(builtins.max(i, 0), n - 1)
    return i % n  # wrap


def _pad_widths_named(name, v, nd):
    """``_pad_widths`` for another argument (``stat_length``), its errors naming it."""
    try:
        return _pad_widths(v, nd)
    except (ShapeError, ArgumentTypeError, _errors.InvalidArgumentError) as e:
        raise type(e)(str(e).replace("pad_width", name)) from None


def _is_number(v):
    return isinstance(v, (bool, int, float, np.generic))


def _pad_callable(x, widths, func, kwargs):
    """``mode=func``: the zero-padded array, then ``func(vector, (before, after), axis,
    kwargs)`` mapped (vmap) over the 1-D slices along each axis in turn."""
    zero = _to_array(False if x.dtype.is_bool else 0, x.dtype)
    nd = x.ndim
    x = bind(_op("pad", edge_padding_low=tuple(a for a, _ in widths), edge_padding_high=tuple(b for _, b in widths), interior_padding=(0,) * nd), x, zero)
    for ax in range(nd):
        xt = _moveaxis_last(x, ax)
        lead = xt.shape[:-1]
        rows = reshape(xt, (-1, xt.shape[-1]))

        def one(v, ax=ax):
            r = _to_array(func(v, widths[ax], ax, kwargs))
            if r.shape != v.shape:
                raise ShapeError(f"pad: the mode function returned shape {_shape_str(r.shape)} for a vector of shape {_shape_str(v.shape)}")
            return astype(r, x.dtype)

        out = _vmap(one)(rows)
        x = _moveaxis_back(reshape(out, lead + (xt.shape[-1],)), ax)
    return x


def _moveaxis_last(x, ax):
    perm = tuple(i for i in range(x.ndim) if i != ax) + (ax,)
    return transpose(x, perm)


def _moveaxis_back(x, ax):
    nd = x.ndim
    perm = list(range(nd - 1))
    perm.insert(ax, nd - 1)
    return transpose(x, tuple(perm))


def roll(a, shift, axis=None):
    """Rolls elements along ``axis`` (None: of the flattened array, reshaped back) by ``shift``
    (ints or tuples, as NumPy).

    Example:
        >>> qb.roll(qb.array([1, 2, 3]), 1).tolist()
        [3, 1, 2]
    """
    x = _to_array(a)
    if axis is None:
        return reshape(roll(ravel(x), shift, 0), x.shape)
    shifts = _ints_arg("roll", "shift", shift)
    axes = _ints_arg("roll", "axis", axis)
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    if len(axes) == 1 and len(shifts) > 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise _errors.InvalidArgumentError(f"roll: {len(shifts)} shifts for {len(axes)} axes")
    for s, ax in zip(shifts, axes):
        if not isinstance(s, (int, np.integer)):
            raise UnsupportedOperationError("roll: the shift must be a static int", op="roll")
        ax = _norm_axis("roll", ax, x.ndim, x.shape)
        n = x.shape[ax]
        k = int(s) % n
        if k:
            x = concatenate([_slice_axis(x, ax, n - k, n, 1), _slice_axis(x, ax, 0, n - k, 1)], axis=ax)
    return x


def flip(m, axis=None):
    """Reverses the order of elements along ``axis`` (None: every axis; an int or a tuple).

    Example:
        >>> qb.flip(qb.array([1, 2, 3])).tolist()
        [3, 2, 1]
    """
    x = _to_array(m)
    axes = range(x.ndim) if axis is None else _ints_arg("flip", "axis", axis)
    for ax in axes:
        ax = _norm_axis("flip", ax, x.ndim, x.shape)
        n = x.shape[ax]
        if n > 1:
            # A slice of step -1 (a gather with constant indices, and a scatter-add for its
            # gradient, took 4.3x JAX's time: `sum(flip(x, 1) * x)`'s gradient on 4096 x 1024).
            x = x[(slice(None),) * ax + (slice(None, None, -1),)]
    return x


def fliplr(m):
    """Reverses axis 1.

    Example:
        >>> qb.fliplr(qb.array([[1, 2]])).tolist()
        [[2, 1]]
    """
    return flip(m, 1)


def flipud(m):
    """Reverses axis 0.

    Example:
        >>> qb.flipud(qb.array([[1], [2]])).tolist()
        [[2], [1]]
    """
    return flip(m, 0)


def repeat(a, repeats, axis=None, *, total_repeat_length=None, out_sharding=None):
    """Repeats each element ``repeats`` times along ``axis`` (None: of the flattened array);
    ``repeats`` is an int or one count per element. With ``total_repeat_length`` (a static
    int, as JAX's) the result has that extent: cut short, or padded with the last element;
    ``repeats`` may then be traced (under ``jit``). Without it, ``repeats`` must be concrete
    (the result's extent depends on it). ``out_sharding`` is accepted and ignored.

    Example:
        >>> qb.repeat(qb.array([1, 2]), 2).tolist()
        [1, 1, 2, 2]
        >>> qb.repeat(qb.array([1, 2, 3]), qb.array([1, 2, 0]), total_repeat_length=5).tolist()
        [1, 2, 2, 3, 3]
    """
    x = _to_array(a)
    if axis is None:
        x = ravel(x)
        axis = 0
    ax = _norm_axis("repeat", axis, x.ndim, x.shape)
    n = x.shape[ax]
    if total_repeat_length is not None:
        total = _int_arg("repeat", "total_repeat_length", total_repeat_length)
        if total <= 0:
            raise ShapeError(f"repeat: total_repeat_length must be positive (zero-extent tensors are not supported), got {total}")
        _shape_arg("repeat", (total,), int64)
        if type(repeats) is _Tracer:
            return _repeat_traced(x, repeats, ax, n, total)
    elif type(repeats) is _Tracer:
        raise _errors.ConcretizationTypeError(
            "repeat: traced repeats need total_repeat_length= (a static int: the result's extent cannot depend on traced values)")
    r = np.asarray(repeats)
    if r.dtype.kind not in "iu":
        raise UnsupportedOperationError("repeat: repeats must be static integers", op="repeat")
    r = np.broadcast_to(r, (n,)) if r.ndim == 0 else r
    if r.shape != (n,):
        raise ShapeError(f"repeat: {r.size} repeats for an axis of extent {n}")
    if (r < 0).any():
        raise _errors.InvalidArgumentError("repeat: repeats must be non-negative")
    _shape_arg("repeat", (builtins.max(int(r.sum(dtype=object)), 1),), int64)
    c = int(r[0]) if n else 0
    if total_repeat_length is None and c > 0 and (r == c).all():
        # The same count for every element: a broadcast along a new axis after ``ax``,
        # merged into it (a gather with constant indices, and a scatter-add for its gradient,
        # took 5x JAX's time: `sum(repeat(x, 2, 1) ** 2)`'s gradient on 2048 x 512).
        shape = x.shape
        y = broadcast_to(expand_dims(x, ax + 1), shape[: ax + 1] + (c,) + shape[ax + 1 :])
        return reshape(y, shape[:ax] + (n * c,) + shape[ax + 1 :])
    idx = _np_alloc("repeat", np.repeat, np.arange(n, dtype=np.int64), r)
    if total_repeat_length is not None:
        # Cut short, or padded with the last element (JAX's rule).
        idx = np.concatenate([idx[:total], np.full(builtins.max(total - idx.size, 0), n - 1, np.int64)])
    if idx.size == 0:
        raise ShapeError("repeat: the result would be empty (zero-extent tensors are not supported)")
    return take(x, _from_numpy(idx), axis=ax)


def _repeat_traced(x, repeats, ax, n, total):
    """``repeat`` with traced ``repeats`` and a static ``total``: element ``j`` of the result
    is the element of ``x`` whose cumulative repeat count first exceeds ``j`` (the number of
    cumulative counts at or below ``j``: marks scattered at the cumulative counts, summed),
    clamped to the last element."""
    r = repeats
    if not r.dtype.is_int:
        raise DTypeError(f"repeat: repeats must be integers, got {r.dtype.name}")
    r = broadcast_to(astype(r, int64), (n,)) if r.ndim == 0 else astype(r, int64)
    if r.shape != (n,):
        raise ShapeError(f"repeat: {r.shape[0] if r.ndim == 1 else r.shape} repeats for an axis of extent {n}")
    ends = _cumsum(r)[:-1] if n > 1 else None
    if ends is None:
        idx = full((total,), 0, int64)
    else:
        marks = _scatter(full((total,), 0, int64), (ends,), 1, "add", "drop")
        idx = minimum(_cumsum(marks), n - 1)
    return take(x, idx, axis=ax)


def tile(A, reps):
    """Repeats the whole array ``reps`` times per axis (ranks padded with leading 1s).

    Example:
        >>> qb.tile(qb.array([1, 2]), 2).tolist()
        [1, 2, 1, 2]
    """
    x = _to_array(A)
    reps = _ints_arg("tile", "reps", reps)
    nd = builtins.max(x.ndim, len(reps))
    reps = (1,) * (nd - len(reps)) + reps
    x = reshape(x, (1,) * (nd - x.ndim) + x.shape)
    if builtins.any(r <= 0 for r in reps):
        raise ShapeError("tile: reps must be positive (zero-extent tensors are not supported)")
    # Insert an axis of extent r before each axis, broadcast, merge.
    e = reshape(x, tuple(v for d in x.shape for v in (1, d)))
    b = broadcast_to(e, tuple(v for r, d in zip(reps, x.shape) for v in (r, d)))
    return reshape(b, tuple(r * d for r, d in zip(reps, x.shape)))


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th discrete difference along ``axis`` (``prepend``/``append`` join values
    first, as NumPy).

    Example:
        >>> qb.diff(qb.array([1, 4, 9])).tolist()
        [3, 5]
    """
    x = _to_array(a)
    ax = _norm_axis("diff", axis, x.ndim, x.shape)
    parts = []
    for extra in (prepend,):
        if extra is not None:
            parts.append(_edge(extra, x, ax))
    parts.append(x)
    if append is not None:
        parts.append(_edge(append, x, ax))
    if len(parts) > 1:
        x = concatenate(parts, axis=ax)
    for _ in range(_int_arg("diff", "n", n)):
        m = x.shape[ax]
        if m < 2:
            raise ShapeError(f"diff: axis {ax} has extent {m}; the difference would be empty")
        hi = _slice_axis(x, ax, 1, m, 1)
        lo = _slice_axis(x, ax, 0, m - 1, 1)
        x = logical_not(equal(hi, lo)) if x.dtype.is_bool else hi - lo
    return x


def _edge(v, x, ax):
    v = astype(_to_array(v), x.dtype)
    if v.ndim == 0:
        s = list(x.shape)
        s[ax] = 1
        return broadcast_to(v, tuple(s))
    return v


# ---------------------------------------------------------------------------------------------
# Sorting: the sort family (quabla.sort / quabla.argsort along one dimension, stable)


def _sort_op(x, dim, descending, arg):
    d = "gt" if descending else "lt"
    if arg:
        return bind(_op("argsort", dimension=dim, direction=d, index=int64.code), x)
    return bind(_op("sort", dimension=dim, direction=d), x)


def _sort_args(op, a, axis, kind, order):
    if order is not None:
        raise UnsupportedOperationError(f"{op}: order= (structured arrays) is not supported", op=op)
    x = _to_array(a)
    if axis is None:
        x = ravel(x)
        axis = 0
    if x.ndim == 0:
        raise ShapeError(f"{op}: needs an array of rank >= 1")
    return x, _norm_axis(op, axis, x.ndim, x.shape)


def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """Sorted copy along ``axis`` (None: of the flattened array); NaN sorts last (first when
    ``descending``); stable. One ``quabla.sort`` op (differentiable: the gradient follows the
    permutation; batches).

    Example:
        >>> qb.sort(qb.array([3.0, 1.0, 2.0])).tolist()
        [1.0, 2.0, 3.0]
    """
    x, ax = _sort_args("sort", a, axis, kind, order)
    return _sort_op(x, ax, descending, False)


def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """Indices (int64) that sort ``a`` along ``axis``, stable (ties keep their order, also
    when ``descending``, as jax.numpy). One ``quabla.argsort`` op.

    Example:
        >>> qb.argsort(qb.array([3.0, 1.0, 2.0])).tolist()
        [1, 2, 0]
    """
    x, ax = _sort_args("argsort", a, axis, kind, order)
    return _sort_op(x, ax, descending, True)


def top_k(operand, k):
    """The ``k`` largest entries along the last axis and their indices (as ``jax.lax.top_k``;
    ties: lower index first).

    Example:
        >>> [v.tolist() for v in qb.top_k(qb.array([1.0, 3.0, 2.0]), 2)]
        [[3.0, 2.0], [1, 2]]
    """
    x = _to_array(operand)
    if x.ndim == 0:
        raise ShapeError("top_k: needs an array of rank >= 1")
    n = x.shape[-1]
    k = _int_arg("top_k", "k", k)
    if not 0 < k <= n:
        raise ShapeError(f"top_k: k={k} must be in [1, {n}] for shape {_shape_str(x.shape)}")
    from ._indexing import take_along_axis

    last = x.ndim - 1
    # One sort: the values are the operand's entries at the first k sorted positions.
    idx = _slice_axis(_sort_op(x, last, True, True), last, 0, k, 1)
    return take_along_axis(x, idx, axis=last), idx


# ---------------------------------------------------------------------------------------------
# Dtype objects as constructors


def _dtype_call(self, x):
    """Converts ``x`` (a Python number, a nested list, a NumPy array or an array) to an array
    of this dtype, as ``jnp.float32(1.0)``.

    Example:
        >>> qb.float32(1.5).dtype
        quabla.float32
    """
    from ._ops import asarray

    if isinstance(x, (str, bytes)):
        # NumPy parses strings ("1.5"); JAX rejects them: a typed error here.
        raise ArgumentTypeError(f"{self.name}: cannot convert a {type(x).__name__} to an array")
    return asarray(x, dtype=self)


_dt.DType.__call__ = _dtype_call

__all__ = [
    "sinh", "cosh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "asin", "acos", "atan", "asinh",
    "acosh", "atanh", "cbrt", "reciprocal", "square", "log2", "log10", "arctan2", "atan2", "hypot", "isnan", "isinf", "isposinf",
    "isneginf", "nan_to_num", "isclose", "allclose", "outer", "inner", "vdot", "kron", "tri", "tril", "triu",
    "diagonal", "diag", "trace", "meshgrid", "atleast_1d", "atleast_2d", "vstack", "hstack", "column_stack", "pad",
    "roll", "flip", "fliplr", "flipud", "repeat", "tile", "diff", "sort", "argsort", "top_k",
]
