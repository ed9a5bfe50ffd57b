"""NumPy-style ops, lowered onto explicit quabla dialect ops.

Each public function accepts Tensors, Tracers and Python scalars and applies the rules of
:mod:`quabla.dtypes` (weak Python scalars, explicit float32/float64 mixing errors), NumPy
broadcasting (through ``broadcast_in_dim``), negative axes and ``keepdims`` (through
``reshape``). The same code runs eagerly and under tracing: :func:`bind` decides.
"""

import builtins
import math
import string

import numpy as np

from . import _quabla as _q
from . import dtypes as _dt
from ._trace import Tracer, bind, current as _current_trace, is_array
from .dtypes import bool_, float64, int32, int64
from .errors import ArgumentTypeError, ArraySizeError, DTypeError, ShapeError, TracerError, UnsupportedOperationError, ZeroStepError
from . import errors as _errors

Tensor = _q.Tensor

# ---------------------------------------------------------------------------------------------
# Op objects (memoised so that each keeps its eager executable cache)

_OPS = {}


def _op(name, **attrs):
    key = (name, *attrs.items()) if attrs else name
    o = _OPS.get(key)
    if o is None:
        o = _OPS[key] = _q.Op(name, **attrs)
    return o


def _t(xs):
    return tuple(int(x) for x in xs)


def _shape_str(s):
    return "(" + ", ".join(str(d) for d in s) + ("," if len(s) == 1 else "") + ")"


# ---------------------------------------------------------------------------------------------
# Conversion of operands


def _from_numpy(a, dtype=None):
    if dtype is not None:
        dtype = _dt.dtype(dtype)
        if a.dtype != dtype.np:
            a = a.astype(dtype.np)
    elif a.dtype in _dt.WIDEN:
        a = a.astype(_dt.WIDEN[a.dtype].np)
    elif a.dtype.kind not in "fbiu" or a.dtype.byteorder == ">":
        _dt.dtype(a.dtype)  # raises DTypeError with the supported list
    if a.ndim == 0:
        return _q.from_buffer(a.reshape(1), [])
    return _q.from_buffer(a)


def _to_array(x, dtype=None):
    """A Tensor or Tracer for ``x`` (Python scalars and NumPy data become new Tensors)."""
    if is_array(x):
        return x if dtype is None else astype(x, dtype)
    if isinstance(x, np.ndarray):
        return _from_numpy(x, dtype)
    if isinstance(x, (bool, int, float, np.generic)):
        d = _dt.dtype(dtype) if dtype is not None else (_dt.scalar_dtype(x) if not isinstance(x, np.generic) else _dt.dtype(x.dtype))
        return _q.full((), x.item() if isinstance(x, np.generic) else x, d.code)
    if isinstance(x, (list, tuple)):
        return array(x, dtype)
    raise ArgumentTypeError(f"expected an array, a Python number or a nested list, got {type(x).__name__}")


def _is_scalar(x):
    return isinstance(x, (bool, int, float)) and not isinstance(x, np.generic)


def _fill(value, dtype, shape, like=None, weak=False):
    """An array of ``shape`` filled with ``value``; a constant of ``like``'s trace when
    ``like`` is a Tracer (``weak``: the constant stands for a Python number, `Tracer.weak`)."""
    if type(like) is Tracer:
        return _trace_fill(like._trace, value, dtype, shape, weak)
    return _q.full(list(shape), value, dtype.code)


def _trace_fill(trace, value, dtype, shape, weak=False):
    """``value`` of ``dtype`` as a scalar constant of ``trace``, broadcast to ``shape``."""
    c = trace.const(_q.full((), value, dtype.code))
    if weak:
        c.weak = True
    return broadcast_to(c, shape) if shape else c


def astype(x, dtype):
    """Converts ``x`` to ``dtype`` (float -> int truncates toward zero; number -> bool is
    ``x != 0``).

    Example:
        >>> qb.astype(qb.array([1.7, -1.7]), qb.int32).tolist()
        [1, -1]
    """
    dtype = _dt.dtype(dtype, "astype")
    x = _to_array(x)
    if x.dtype is dtype:
        return x
    return bind(_op("convert", to=dtype.code), x)


def _bcast_shapes(op, *shapes):
    nd = builtins.max(len(s) for s in shapes)
    out = []
    for i in range(nd):
        d = 1
        for s in shapes:
            k = len(s) - nd + i
            e = s[k] if k >= 0 else 1
            if e != 1:
                if d != 1 and d != e:
                    raise ShapeError(
                        f"{op}: operands could not be broadcast together with shapes "
                        + " ".join(_shape_str(s) for s in shapes)
                    )
                d = e
        out.append(d)
    return tuple(out)


def broadcast_to(x, shape):
    """Broadcasts ``x`` to ``shape`` by NumPy's rules (through ``broadcast_in_dim``).

    Example:
        >>> qb.broadcast_to(qb.array([1.0, 2.0]), (3, 2)).shape
        (3, 2)
    """
    x = _to_array(x)
    shape = _ints_arg("broadcast_to", "shape", shape)
    xs = x.shape
    if xs == shape:
        return x
    n = len(shape) - len(xs)
    if n < 0 or builtins.any(a != 1 and a != b for a, b in zip(xs, shape[n:])):
        raise ShapeError(f"broadcast_to: cannot broadcast a tensor of shape {_shape_str(xs)} to shape {_shape_str(shape)}")
    if builtins.any(d <= 0 for d in shape):
        raise ShapeError(f"broadcast_to: shape {_shape_str(shape)} has a zero or negative extent")
    _shape_arg("broadcast_to", shape, x.dtype)
    x = _staged_if_expanding(x, math.prod(shape))
    return bind(_op("broadcast_in_dim", dims=tuple(range(n, len(shape))), shape=shape), x)


# A concrete operand whose broadcast would have more elements than this is broadcast inside
# the trace in progress instead of eagerly (as JAX stages every op under jit): a [64, 64]
# causal mask broadcast over [8, 4, 64, 64] scores stays a 4 KiB constant and one
# broadcast_in_dim rather than a 128 KiB literal the compiler copies through every pass.
_STAGE_EXPANDING = 4096


def _staged_if_expanding(x, size):
    """``x``, or inside a trace and for a concrete ``x`` whose result of ``size`` elements is
    large and larger than ``x``, ``x`` as a constant of the innermost trace."""
    if type(x) is Tracer or size <= _STAGE_EXPANDING or size <= x.size:
        return x
    t = _current_trace()
    return x if t is None else t.const(x)


def _numpy_float_scalar(s, other, other_array):
    """``s``, or a Python float when ``s`` is a NumPy float scalar of the other float width than
    the array ``other``: weak then, as JAX (default mode) canonicalises it, so that ``x /
    np.sqrt(d)`` on a float32 ``x`` stays float32 where float32 with float64 arrays raise."""
    if other_array and isinstance(s, np.floating) and other.dtype.kind == "f" and s.dtype.itemsize != other.dtype.itemsize:
        return float(s)
    return s


def _binary_operands(name, x, y, kind="numeric"):
    """Applies dtype promotion (weak scalars) and broadcasting to two operands."""
    xa, ya = is_array(x), is_array(y)
    if not xa and not _is_scalar(x):
        x = _numpy_float_scalar(x, y, ya)
        xa = not _is_scalar(x)
        if xa:
            x = _to_array(x)
    if not ya and not _is_scalar(y):
        y = _numpy_float_scalar(y, x, xa)
        ya = not _is_scalar(y)
        if ya:
            y = _to_array(y)
    if xa and ya and _weak(x) != _weak(y):
        # A weak scalar with an array: the array's dtype, as a Python number of its kind.
        xw = _weak(x)
        w, a = (x, y) if xw else (y, x)
        dt = _dt.weak_result(a.dtype, _WEAK_SAMPLE[w.dtype.kind])
        a = a if a.dtype is dt else astype(a, dt)
        w = w if w.dtype is dt else astype(w, dt)
        w = broadcast_to(w, a.shape) if a.shape else w
        return (w, a) if xw else (a, w)
    if xa and ya:
        dt = _dt.result_type(name, x.dtype, y.dtype)
        if x.dtype is not dt:
            x = astype(x, dt)
        if y.dtype is not dt:
            y = astype(y, dt)
        xs, ys = x.shape, y.shape
        if xs != ys:
            s = _bcast_shapes(name, xs, ys)
            x = broadcast_to(x, s)
            y = broadcast_to(y, s)
        return x, y
    if xa:
        dt = _dt.weak_result(x.dtype, y)
        if x.dtype is not dt:
            x = astype(x, dt)
        return x, _fill(y, dt, x.shape, x, weak=True)
    if ya:
        dt = _dt.weak_result(y.dtype, x)
        if y.dtype is not dt:
            y = astype(y, dt)
        return _fill(x, dt, y.shape, y, weak=True), y
    # Two Python numbers: the join of their kinds (bool < int < float), as JAX's weak types
    # (x64): 1 + 1.0 is a float64, 1 + True an int64. (The result is a concrete array; eager
    # arrays carry no weak flag.)
    dt = builtins.max(_dt.scalar_dtype(x), _dt.scalar_dtype(y), key=_SCALAR_RANK.__getitem__)
    return _to_array(x, dt), _to_array(y, dt)


# The order of the Python scalar dtypes in JAX's weak-type lattice.
_SCALAR_RANK = {bool_: 0, int64: 1, float64: 2}


def _floatify(x):
    """``x`` as a float array: JAX's ``to_inexact_dtype`` (x64): int64 (and Python ints) ->
    float64; bool, uint8, uint32 and int32 -> float32; floats kept."""
    return x if x.dtype.is_float else astype(x, _dt.to_inexact(x.dtype))


# ---------------------------------------------------------------------------------------------
# Elementwise


def _unary_float(name, doc):
    op = _op(name)

    def f(x):
        return bind(op, _floatify(_to_array(x)))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""{doc}

    Integer and bool inputs are converted to a float first (int64 to float64; bool, uint8,
    uint32 and int32 to float32, as JAX's x64 mode).

    Args:
        x: an array or a Python number.

    Returns:
        An array of the same shape.

    Example:
        >>> qb.{name}(qb.array([0.5, 1.0], dtype=qb.float32)).dtype
        quabla.float32
    """
    return f


exp = _unary_float("exp", "Elementwise e**x.")
exp2 = _unary_float("exp2", "Elementwise 2**x.")
expm1 = _unary_float("expm1", "Elementwise exp(x) - 1, accurate near zero.")
log = _unary_float("log", "Elementwise natural logarithm.")
log1p = _unary_float("log1p", "Elementwise log(1 + x), accurate near zero.")
sin = _unary_float("sin", "Elementwise sine.")
cos = _unary_float("cos", "Elementwise cosine.")
tan = _unary_float("tan", "Elementwise tangent.")
tanh = _unary_float("tanh", "Elementwise hyperbolic tangent.")
sqrt = _unary_float("sqrt", "Elementwise square root (NaN for negative inputs).")
rsqrt = _unary_float("rsqrt", "Elementwise 1 / sqrt(x).")
erf = _unary_float("erf", "Elementwise error function.")
_floor = _unary_float("floor", "Elementwise floor.")
_ceil = _unary_float("ceil", "Elementwise ceiling.")


def floor(x):
    """Elementwise floor. Integer and bool arrays are their own floor and are returned
    unchanged, as jax.numpy (NumPy gives float64).

    Example:
        >>> qb.floor(qb.array([-0.5, 1.5], dtype=qb.float32)).tolist()
        [-1.0, 1.0]
        >>> qb.floor(qb.array([3, -2])).tolist()
        [3, -2]
    """
    x = _to_array(x)
    return _floor(x) if x.dtype.is_float else x


def ceil(x):
    """Elementwise ceiling. Integer and bool arrays are returned unchanged, as jax.numpy.

    Example:
        >>> qb.ceil(qb.array([-0.5, 1.5])).tolist()
        [-0.0, 2.0]
    """
    x = _to_array(x)
    return _ceil(x) if x.dtype.is_float else x
sigmoid = _unary_float("logistic", "Elementwise logistic sigmoid 1 / (1 + exp(-x)).")
sigmoid.__name__ = sigmoid.__qualname__ = "sigmoid"
sigmoid.__doc__ = sigmoid.__doc__.replace("qb.logistic(", "qb.sigmoid(")


def round(x, decimals=0, out=None):  # noqa: A001 - NumPy's name
    """Elementwise rounding half to even to ``decimals`` decimal places (JAX's signature;
    ``round(x * 10**decimals) / 10**decimals`` as jax.numpy). Integers and bools are returned
    unchanged for ``decimals >= 0``; negative ``decimals`` on integers raise
    UnsupportedOperationError, as jax.numpy.

    Example:
        >>> qb.round(qb.array([0.5, 1.5, -2.5])).tolist()
        [0.0, 2.0, -2.0]
        >>> qb.round(qb.array([1.2345]), decimals=2).tolist()
        [1.23]
    """
    _no_out("round", out)
    x = _to_array(x)
    decimals = _int_arg("round", "decimals", decimals)
    if not x.dtype.is_float:
        if decimals >= 0:
            return x
        raise UnsupportedOperationError(f"round: integer rounding with decimals={decimals} < 0 is not supported (as jax.numpy)", op="round")
    if decimals == 0:
        return bind(_op("round"), x)
    if decimals > 308:
        # 10**decimals overflows a double (Python raises OverflowError); no float has that
        # many decimals to round away: the identity, as jax.numpy returns.
        return x
    f = float(10.0 ** decimals)
    return bind(_op("round"), x * f) / f


def abs(x):  # noqa: A001
    """Elementwise absolute value (bools are returned unchanged).

    Example:
        >>> qb.abs(qb.array([-1, 2])).tolist()
        [1, 2]
    """
    x = _to_array(x)
    return x if x.dtype.is_bool else bind(_op("abs"), x)


def sign(x):
    """Elementwise sign: -1, 0 or +1 (NaN for NaN; bools unchanged).

    Example:
        >>> qb.sign(qb.array([-2.0, 0.0, 3.0])).tolist()
        [-1.0, 0.0, 1.0]
    """
    x = _to_array(x)
    return x if x.dtype.is_bool else bind(_op("sign"), x)


def negative(x):
    """Elementwise -x (integers wrap).

    Example:
        >>> (-qb.array([1, -2])).tolist()
        [-1, 2]
    """
    return bind(_op("neg"), _to_array(x))


def invert(x):
    """Elementwise logical not of bools (bitwise not of integers): the ``~`` operator.

    Example:
        >>> (~qb.array([True, False])).tolist()
        [False, True]
    """
    return bind(_op("not"), _to_array(x))


def _truth(x):
    """``x != 0`` as a bool array (bools unchanged): the operands of the logical ops."""
    x = _to_array(x)
    return x if x.dtype.is_bool else astype(x, bool_)


def logical_not(x):
    """Elementwise logical not: a bool array, ``x == 0`` for numbers (NumPy's ``logical_not``;
    ``~`` is :func:`invert`, bitwise on integers).

    Example:
        >>> qb.logical_not(qb.array([0, 3])).tolist()
        [True, False]
    """
    return invert(_truth(x))


def logical_and(x, y):
    """Elementwise logical and: a bool array, numbers are true where nonzero (NumPy's
    ``logical_and``; ``&`` is :func:`bitwise_and`).

    Example:
        >>> qb.logical_and(qb.array([0, 2, 3]), 1).tolist()
        [False, True, True]
    """
    return bitwise_and(_truth(x), _truth(y))


def logical_or(x, y):
    """Elementwise logical or: a bool array, numbers are true where nonzero (NumPy's
    ``logical_or``; ``|`` is :func:`bitwise_or`).

    Example:
        >>> qb.logical_or(qb.array([0, 2]), 0).tolist()
        [False, True]
    """
    return bitwise_or(_truth(x), _truth(y))


def logical_xor(x, y):
    """Elementwise logical xor: a bool array, numbers are true where nonzero (NumPy's
    ``logical_xor``; ``^`` is :func:`bitwise_xor`).

    Example:
        >>> qb.logical_xor(qb.array([0, 2, 3]), qb.array([1, 1, 0])).tolist()
        [True, False, True]
    """
    return bitwise_xor(_truth(x), _truth(y))


def relu(x):
    """Elementwise max(x, 0).

    Example:
        >>> qb.relu(qb.array([-1.0, 2.0])).tolist()
        [0.0, 2.0]
    """
    return maximum(x, 0)


def softplus(x):
    """Elementwise log(1 + exp(x)), computed stably as log1p(exp(-|x|)) + max(x, 0).

    Example:
        >>> round(qb.softplus(qb.array(0.0)).item(), 6)
        0.693147
    """
    x = _floatify(_to_array(x))
    return log1p(exp(negative(abs(x)))) + maximum(x, 0)


def _weak(x):
    return type(x) is Tracer and x.weak


# A Python number of each dtype kind, for `_dt.weak_result`'s promotion of weak scalars.
_WEAK_SAMPLE = {"b": True, "i": 0, "u": 0, "f": 0.0}


def _binary(name, kind, doc, bool_op=None):
    op = _op(name)
    bop = _op(bool_op) if bool_op else None

    def f(x, y):
        x, y = _binary_operands(name, x, y)
        if bop is not None and x.dtype.is_bool:
            return bind(bop, x, y)  # JAX's bool sum and product: or, and
        return bind(op, x, y)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


add = _binary("add", "numeric", "Elementwise x + y with broadcasting (a logical or of bools, as JAX).\n\n    Example:\n        >>> qb.add(qb.array([1, 2]), 1).tolist()\n        [2, 3]\n    ", "or")
subtract = _binary("sub", "numeric", "Elementwise x - y with broadcasting.\n\n    Example:\n        >>> qb.subtract(3.0, qb.array([1.0])).tolist()\n        [2.0]\n    ")
multiply = _binary("mul", "numeric", "Elementwise x * y with broadcasting (a logical and of bools, as JAX).\n\n    Example:\n        >>> qb.multiply(qb.array([1, 2]), 3).tolist()\n        [3, 6]\n    ", "and")
maximum = _binary("max", "any", "Elementwise maximum (NaN propagates; `or` for bools).\n\n    Example:\n        >>> qb.maximum(qb.array([1.0, 5.0]), 2.0).tolist()\n        [2.0, 5.0]\n    ")
minimum = _binary("min", "any", "Elementwise minimum (NaN propagates; `and` for bools).\n\n    Example:\n        >>> qb.minimum(qb.array([1.0, 5.0]), 2.0).tolist()\n        [1.0, 2.0]\n    ")
bitwise_and = _binary("and", "logical", "Elementwise logical and (bools) or bitwise and (integers): the `&` operator.\n\n    Example:\n        >>> (qb.array([True, False]) & True).tolist()\n        [True, False]\n    ")
bitwise_or = _binary("or", "logical", "Elementwise logical or (bools) or bitwise or (integers): the `|` operator.\n\n    Example:\n        >>> (qb.array([True, False]) | False).tolist()\n        [True, False]\n    ")
bitwise_xor = _binary("xor", "logical", "Elementwise logical xor (bools) or bitwise xor (integers): the `^` operator.\n\n    Example:\n        >>> (qb.array([True, False]) ^ True).tolist()\n        [False, True]\n    ")
sub = subtract
mul = multiply


def divide(x, y):
    """Elementwise true division x / y (integers and bools are converted to a float first:
    int64 to float64, narrower integers and bools to float32, as JAX's x64 mode).

    Example:
        >>> qb.divide(qb.array([1, 2]), 2).tolist()
        [0.5, 1.0]
    """
    x, y = _binary_operands("div", x, y)
    if not x.dtype.is_float:
        x, y = _floatify(x), _floatify(y)
    return bind(_op("div"), x, y)


true_divide = divide


def _floor_parts(name, x, y):
    x, y = _binary_operands(name, x, y)
    if x.dtype.is_bool:  # JAX's numeric promotion: bool -> int32
        x, y = astype(x, int32), astype(y, int32)
    return x, y


def floor_divide(x, y):
    """Elementwise floor(x / y) (Python's ``//``; integer results for integers).

    Example:
        >>> qb.floor_divide(qb.array([7, -7]), 2).tolist()
        [3, -4]
    """
    x, y = _floor_parts("floor_divide", x, y)
    if x.dtype.is_float:
        return _float_floor_divide(x, y)
    q = bind(_op("div"), x, y)
    r = bind(_op("rem"), x, y)
    zero = _fill(0, x.dtype, x.shape, x)
    fix = (r != zero) & ((r < zero) != (y < zero))
    return q - astype(fix, x.dtype)


def _float_floor_divide(x, y):
    """NumPy's float floor division (npy_divmod): ``(x - fmod(x, y)) / y`` moved down by one
    where the remainder's sign differs from y's, then floored and rounded to the nearest
    integer; ``x / y`` where ``y == 0``; a zero quotient keeps the sign of ``x / y``. So
    ``floor_divide(1.0, 0.1) == 9.0`` (Python's ``1.0 // 0.1``) and ``floor_divide(-5., inf) == -1.``."""
    zero = _fill(0, x.dtype, x.shape, x)
    q = bind(_op("div"), x, y)
    mod = bind(_op("rem"), x, y)
    div = bind(_op("div"), x - mod, y)
    div = where((mod != zero) & ((y < zero) != (mod < zero)), div - 1, div)
    fl = floor(div)
    fl = where(div - fl > 0.5, fl + 1, fl)
    fl = where(div == zero, q * 0.0, fl)
    return where(y == zero, q, fl)


def remainder(x, y):
    """Elementwise x mod y with the sign of y (Python's ``%``).

    Example:
        >>> qb.remainder(qb.array([7, -7]), 3).tolist()
        [1, 2]
    """
    x, y = _floor_parts("remainder", x, y)
    r = bind(_op("rem"), x, y)
    zero = _fill(0, x.dtype, x.shape, x)
    fix = (r != zero) & ((r < zero) != (y < zero))
    return where(fix, r + y, r)


mod = remainder


def logaddexp(x, y):
    """Elementwise log(exp(x) + exp(y)), computed without overflow (NumPy's ``logaddexp``).

    Integers and bools are converted to a float first (as ``divide``); broadcasting and weak scalars as for
    ``add``. Equal infinities give themselves (``logaddexp(-inf, -inf) == -inf``).

    Example:
        >>> round(qb.logaddexp(qb.array([0.0]), 0.0).item(), 6)
        0.693147
    """
    x, y = _binary_operands("logaddexp", x, y)
    if not x.dtype.is_float:
        x, y = _floatify(x), _floatify(y)
    return bind(_op("logaddexp"), x, y)


def isfinite(x):
    """Elementwise test for finite values: False for ±inf and NaN (NumPy's ``isfinite``).

    Integer and bool inputs are always finite.

    Args:
        x: an array or a Python number.

    Returns:
        A bool_ array of the same shape.

    Example:
        >>> qb.isfinite(qb.array([1.0, float("inf"), float("nan")])).tolist()
        [True, False, False]
    """
    x = _to_array(x)
    if not x.dtype.is_float:
        return full(x.shape, True, dtype=bool_)
    return bind(_op("is_finite"), x)


def power(x, p):
    """Elementwise x ** p.

    A non-negative Python int exponent uses ``powi`` (exact repeated multiplication, integer
    dtypes kept, bools as int32); an integer (or bool) base with an integer array exponent
    stays integer (binary exponentiation over the exponent's low 6 bits, as JAX: larger
    exponents overflow anyway; a negative one gives an undefined value); every other exponent
    uses ``pow`` on floats, with C ``pow`` conventions: NaN for a negative base and a non-integer
    exponent, ``0 ** 0 == 1``, IEEE results for infinities and NaN. A Python float exponent
    of +-0.5 or an integer value up to 8 in magnitude on a float array is computed as a
    square root or repeated multiplication (and a reciprocal) with the same conventions, as
    XLA rewrites it; so is a half-integer up to 8.5 in magnitude (``|x| ** n * sqrt(x)``,
    within a few ulps of pow).

    Example:
        >>> (qb.array([2, 3]) ** 2).tolist()
        [4, 9]
        >>> qb.power(qb.array([4.0]), 0.5).tolist()
        [2.0]
    """
    if isinstance(x, bool) and type(p) is int and 0 <= p < 2**63:
        x = _to_array(x)  # a Python bool base with an int exponent: int32, as a bool array's
    if is_array(x) and isinstance(p, int) and 0 <= p < 2**63:
        if x.dtype.is_bool:
            x = astype(x, int32)
        return bind(_op("powi", exponent=int(p)), x)
    if is_array(x) and x.dtype.is_float and isinstance(p, float):
        # Python float exponents with a cheaper exact form (XLA rewrites them too): a general
        # pow is exp(p log|x|), 15x a square root. pow's conventions kept: +-0 ** 0.5 is +0,
        # -inf ** 0.5 is +inf, -inf ** -0.5 is +0.
        if p == 0.5 or p == -0.5:
            r = maximum(sqrt(x), 0.0)  # -0 -> +0; NaN stays NaN
            if p < 0:
                r = divide(1.0, r)
            return where(equal(x, -math.inf), math.inf if p > 0 else 0.0, r)
        if p.is_integer() and abs(p) <= 8:
            r = bind(_op("powi", exponent=int(abs(p))), x)
            return divide(1.0, r) if p < 0 else r
        if (math.fabs(p) - 0.5).is_integer() and math.fabs(p) <= 8.5:
            # x ** (n + 1/2) = |x|^n sqrt(x) (n-body forces' r2 ** 1.5: a general pow is 10x
            # a square root and a product); NaN below zero, +0 at -0, +inf at -inf as pow.
            s = maximum(sqrt(x), 0.0)
            n = int(math.fabs(p) - 0.5)
            r = multiply(bind(_op("powi", exponent=n), abs(x)), s) if n else s
            if p < 0:
                r = divide(1.0, r)
            return where(equal(x, -math.inf), math.inf if p > 0 else 0.0, r)
    x, p = _binary_operands("pow", x, p)
    if x.dtype.is_bool:
        x, p = astype(x, int32), astype(p, int32)
    if not x.dtype.is_float:
        return _int_pow(x, p)
    return bind(_op("pow"), x, p)


def _int_pow(x, p):
    """``x ** p`` for integer arrays of one dtype and shape: binary exponentiation over the
    low 6 bits of ``p`` (a larger exponent overflows every base but 0, 1 and -1)."""
    zero, one = _fill(0, x.dtype, x.shape, x), _fill(1, x.dtype, x.shape, x)
    acc = where(equal(x, zero) & not_equal(p, zero), zero, one)
    for k in range(6):
        bit = bind(_op("and"), p, one) if k == 0 else bind(_op("and"), _shift_right(p, k), one)
        acc = where(not_equal(bit, zero), multiply(acc, x), acc)
        x = multiply(x, x)
    return acc


def _shift_right(x, k):
    """``x >> k`` for a Python int ``k`` (logical for unsigned, arithmetic for signed)."""
    op = "shift_right_logical" if x.dtype.is_unsigned else "shift_right_arithmetic"
    return bind(_op(op), x, _fill(k, x.dtype, x.shape, x))


def _compare(direction, name):
    op = _op("compare", direction=direction)

    def f(x, y):
        x, y = _binary_operands(name, x, y)
        return bind(op, x, y)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""Elementwise x {dict(eq='==', ne='!=', lt='<', le='<=', gt='>', ge='>=')[direction]} y with broadcasting; returns bool_ (NaN compares
    false except for ``!=``).

    Example:
        >>> qb.{name}(qb.array([1.0, 2.0]), 1.5).dtype
        quabla.bool_
    """
    return f


equal = _compare("eq", "equal")
not_equal = _compare("ne", "not_equal")
less = _compare("lt", "less")
less_equal = _compare("le", "less_equal")
greater = _compare("gt", "greater")
greater_equal = _compare("ge", "greater_equal")


def where(condition, x, y):
    """Elementwise ``x`` where ``condition`` else ``y`` (broadcasting all three; a
    non-bool condition means ``condition != 0``).

    Example:
        >>> qb.where(qb.array([True, False]), 1.0, qb.array([5.0, 6.0])).tolist()
        [1.0, 6.0]
    """
    c = _to_array(condition)
    if not c.dtype.is_bool:
        c = c != 0
    if not is_array(x) and not is_array(y):
        x, y = _to_array(x), _to_array(y)
    x, y = _binary_operands("where", x, y)
    s = _bcast_shapes("where", c.shape, x.shape)
    return bind(_op("select"), broadcast_to(c, s), broadcast_to(x, s), broadcast_to(y, s))


# `where` under another name, for functions whose `where=` parameter shadows it.
_where_fn = where


def clip(arr=None, /, min=None, max=None, *, a=None, a_min=None, a_max=None):  # noqa: A002 - JAX's names
    """Elementwise ``minimum(maximum(arr, min), max)``; either bound may be None (JAX's
    signature: ``arr, min, max`` positional, the older ``a``/``a_min``/``a_max`` keywords
    accepted).

    Example:
        >>> qb.clip(qb.array([-2.0, 0.5, 3.0]), 0.0, 1.0).tolist()
        [0.0, 0.5, 1.0]
        >>> qb.clip(qb.array([5, -5]), max=3).tolist()
        [3, -5]
    """
    if a is not None:
        if arr is not None:
            raise ArgumentTypeError("clip: pass the array once (positionally or as a=)")
        arr = a
    if arr is None:
        raise ArgumentTypeError("clip: missing the array argument")
    if a_min is not None:
        if min is not None:
            raise ArgumentTypeError("clip: pass the lower bound once (min= or a_min=)")
        min = a_min
    if a_max is not None:
        if max is not None:
            raise ArgumentTypeError("clip: pass the upper bound once (max= or a_max=)")
        max = a_max
    x = _to_array(arr)
    if min is not None:
        x = maximum(x, min)
    if max is not None:
        x = minimum(x, max)
    return x


def _norm_axis(op, ax, nd, shape):
    if isinstance(ax, bool) or not isinstance(ax, (int, np.integer)):
        if isinstance(ax, Tracer):
            raise _errors.ConcretizationTypeError(f"{op}: axis must be a static Python int, got a traced value")
        raise _errors.ArgumentTypeError(f"{op}: axis must be an int, got {type(ax).__name__}")
    a = int(ax)
    if not -nd <= a < nd:
        raise ShapeError(f"{op}: axis {a} is out of bounds for a tensor of shape {_shape_str(shape)} (rank {nd})")
    return a + nd if a < 0 else a


def _norm_axes(op, axis, shape):
    nd = len(shape)
    if axis is None:
        return tuple(range(nd))
    if isinstance(axis, (tuple, list)):
        axes = tuple(_norm_axis(op, a, nd, shape) for a in axis)
        if len(set(axes)) != len(axes):
            raise ShapeError(f"{op}: repeated axis in {tuple(axis)} for a tensor of shape {_shape_str(shape)}")
        return tuple(sorted(axes))
    return (_norm_axis(op, axis, nd, shape),)


def _keep(x, axes, shape):
    kept = tuple(1 if i in axes else d for i, d in enumerate(shape))
    return reshape(x, kept)


def _bool_arg(op, name, v):
    """Flag ``v`` (argument ``name`` of ``op``, None for a transform's option) as a bool: Python
    and NumPy bools and integers (their truth value, as NumPy takes it); an array (whose truth
    value NumPy refuses) or any other object is an ArgumentTypeError naming ``op`` and
    ``name``."""
    if isinstance(v, (bool, int, np.bool_, np.integer)):
        return bool(v)
    at = f"{op}: " if op else ""
    raise ArgumentTypeError(f"{at}{name} must be a bool, got {type(v).__name__} {_short_repr(v)}")


def _reduce(name, opname, x, axis, keepdims):
    keepdims = _bool_arg(name, "keepdims", keepdims)
    x = _to_array(x)
    shape = x.shape
    axes = _norm_axes(name, axis, shape)
    r = bind(_op(opname, dims=axes), x)
    return _keep(r, axes, shape) if keepdims else r


def _no_out(op, out):
    if out is not None:
        raise UnsupportedOperationError(f"{op}: out= is not supported (arrays are immutable)", op=op)


def _masked(op, x, where_, fill):
    """``x`` with the entries outside the ``where`` mask replaced by ``fill``."""
    if where_ is None:
        return x
    m = _to_array(where_)
    if not m.dtype.is_bool:
        m = m != 0
    return where(m, x, fill)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None, promote_integers=True):  # noqa: A001
    """Sum over ``axis`` (None: all axes; an int or a tuple; negative counts from the end),
    with JAX's signature: ``dtype`` (the accumulation and result dtype), ``initial`` (added),
    ``where`` (a mask of the elements to include). As JAX's (x64), with
    ``promote_integers=True`` bools and signed integers sum as int64 and unsigned integers as
    uint32 (JAX: uint64, which Quabla lacks); with False integers keep their dtype and bools
    sum as int32; ``dtype=bool`` is a logical or.

    Example:
        >>> qb.sum(qb.array([[1, 2], [3, 4]]), axis=0).tolist()
        [4, 6]
        >>> qb.sum(qb.array([1, 2, 3]), where=qb.array([True, False, True])).item()
        4
    """
    _no_out("sum", out)
    x = _sum_operand("sum", a, dtype, promote_integers)
    if x.dtype.is_bool:  # dtype=bool: a logical or
        r = any(_masked("sum", x, where, False), axis, keepdims=keepdims)
        return r if initial is None else logical_or(r, initial)
    x = _masked("sum", x, where, 0)
    r = _reduce("sum", "reduce_sum", x, axis, keepdims)
    return r if initial is None else r + initial


def _sum_operand(op, a, dtype, promote_integers):
    """The operand of a sum or product ``op`` in its accumulation dtype: ``dtype`` when given,
    else JAX's (x64) promotion of bools and integers (`dtypes.sum_dtype`; bools as int32
    without ``promote_integers``)."""
    x = _to_array(a)
    if dtype is None and promote_integers is True and x.dtype.is_float:
        return x  # the common case, on the eager path: nothing to promote
    if dtype is not None:
        return astype(x, _dt.dtype(dtype, op))
    if _bool_arg(op, "promote_integers", promote_integers):
        d = _dt.sum_dtype(x.dtype)
    else:
        d = int32 if x.dtype.is_bool else x.dtype
    return x if x.dtype is d else astype(x, d)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None, promote_integers=True):
    """Product over ``axis``, with JAX's signature (``dtype``, ``initial`` multiplied in,
    ``where`` mask); the result dtype as :func:`sum` (``dtype=bool``: a logical and).

    Example:
        >>> qb.prod(qb.array([1.0, 2.0, 3.0])).item()
        6.0
    """
    _no_out("prod", out)
    x = _sum_operand("prod", a, dtype, promote_integers)
    if x.dtype.is_bool:  # dtype=bool: a logical and
        r = all(_masked("prod", x, where, True), axis, keepdims=keepdims)
        return r if initial is None else logical_and(r, initial)
    x = _masked("prod", x, where, 1)
    r = _reduce("prod", "reduce_prod", x, axis, keepdims)
    return r if initial is None else r * initial


def _extremum(name, opname, comb, a, axis, out, keepdims, initial, where_):
    _no_out(name, out)
    x = _to_array(a)
    if where_ is not None:
        if initial is None:
            raise _errors.InvalidArgumentError(f"{name}: where= needs initial= (the value of an empty reduction), as jax.numpy")
        x = _masked(name, x, where_, initial)
    r = _reduce(name, opname, x, axis, keepdims)
    return r if initial is None else comb(r, initial)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """Maximum over ``axis`` (NaN propagates), with JAX's signature (``initial`` joins the
    reduction, ``where`` masks elements and needs ``initial``).

    Example:
        >>> qb.max(qb.array([[1, 5], [7, 2]]), axis=-1).tolist()
        [5, 7]
    """
    return _extremum("max", "reduce_max", maximum, a, axis, out, keepdims, initial, where)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """Minimum over ``axis`` (NaN propagates), with JAX's signature.

    Example:
        >>> qb.min(qb.array([[1, 5], [7, 2]]), axis=1).tolist()
        [1, 2]
    """
    return _extremum("min", "reduce_min", minimum, a, axis, out, keepdims, initial, where)


def _count(shape, axes):
    n = 1
    for a in axes:
        n *= shape[a]
    return n


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Arithmetic mean over ``axis``, with JAX's signature (``dtype``: the result dtype, an
    integer one truncates; ``where``: the mean of the selected elements). Integers and bools
    give a float as JAX's x64 mode: int64 float64; bool, uint8, uint32, int32 float32.

    Example:
        >>> qb.mean(qb.array([1, 2, 3, 4])).item()
        2.5
    """
    _no_out("mean", out)
    x = _to_array(a)
    if dtype is not None:
        dtype = _dt.dtype(dtype, "mean")
        x = astype(x, dtype)
    x = _floatify(x)
    if where is not None:
        m = _to_array(where)
        m = broadcast_to(m if m.dtype.is_bool else m != 0, x.shape)
        s = _reduce("mean", "reduce_sum", _masked("mean", x, m, 0), axis, keepdims)
        r = s / _reduce("mean", "reduce_sum", astype(m, x.dtype), axis, keepdims)
    else:
        axes = _norm_axes("mean", axis, x.shape)
        s = _reduce("mean", "reduce_sum", x, axis, keepdims)
        r = s / _count(x.shape, axes)
    return r if dtype is None or r.dtype is dtype else astype(r, dtype)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    """Variance over ``axis``: sum((x - mean(x))**2) / (n - ddof), with JAX's signature
    (``correction`` is a synonym of ``ddof``; ``where`` selects elements).

    Example:
        >>> qb.var(qb.array([1.0, 2.0, 3.0, 4.0])).item()
        1.25
    """
    _no_out("var", out)
    if correction is not None:
        if ddof != 0:
            raise ArgumentTypeError("var: pass ddof= or correction=, not both")
        ddof = correction
    x = _to_array(a)
    if dtype is not None:
        x = astype(x, dtype)
    x = _floatify(x)
    m = mean(x, axis, keepdims=True, where=where)
    d = x - m
    if where is not None:
        w = _to_array(where)
        w = broadcast_to(w if w.dtype.is_bool else w != 0, x.shape)
        s = _reduce("var", "reduce_sum", _masked("var", d * d, w, 0), axis, keepdims)
        # NumPy's divisor max(n - ddof, 0): inf or nan when ddof >= n, never negative.
        return s / maximum(_reduce("var", "reduce_sum", astype(w, x.dtype), axis, keepdims) - ddof, 0)
    axes = _norm_axes("var", axis, x.shape)
    s = _reduce("var", "reduce_sum", d * d, axis, keepdims)
    return s / builtins.max(_count(x.shape, axes) - ddof, 0)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    """Standard deviation over ``axis``: sqrt(var(x)), with JAX's signature.

    Example:
        >>> qb.std(qb.array([1.0, 3.0])).item()
        1.0
    """
    return sqrt(var(a, axis, dtype, out, ddof, keepdims, where=where, correction=correction))


def norm(x, axis=None, keepdims=False):
    """Euclidean (Frobenius) norm over ``axis``: sqrt(sum(x * x)).

    Example:
        >>> qb.norm(qb.array([3.0, 4.0])).item()
        5.0
    """
    x = _floatify(_to_array(x))
    return sqrt(_reduce("norm", "reduce_sum", x * x, axis, keepdims))


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))) over ``axis``, computed stably around the maximum, with the
    signature of jax.nn.logsumexp: ``b`` weights (broadcast against ``a``), ``return_sign``
    returns ``(log|sum|, sign(sum))`` (otherwise a negative sum gives NaN), ``where`` masks.

    Example:
        >>> round(qb.logsumexp(qb.array([0.0, 0.0])).item(), 6)
        0.693147
        >>> round(qb.logsumexp(qb.array([0.0, 0.0]), b=qb.array([1.0, 2.0])).item(), 6)
        1.098612
    """
    keepdims = _bool_arg("logsumexp", "keepdims", keepdims)
    x = _floatify(_to_array(a))
    if b is not None:
        x, bb = _binary_operands("logsumexp", x, b)
        if not x.dtype.is_float:
            x, bb = _floatify(x), _floatify(bb)
    x = _masked("logsumexp", x, where, -math.inf)
    m = max(x, axis, keepdims=True)
    m = bind(_op("stop_gradient"), _where_fn(abs(m) < math.inf, m, 0.0))
    e = exp(x - m)
    if b is not None:
        e = e * bb
    e = _masked("logsumexp", e, where, 0.0)
    s = _reduce("logsumexp", "reduce_sum", e, axis, True)
    if return_sign:
        sg = sign(s)
        r = log(abs(s)) + m
    else:
        r = log(s) + m
    if not keepdims:
        axes = _norm_axes("logsumexp", axis, x.shape)
        kept = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        r = reshape(r, kept)
        if return_sign:
            sg = reshape(sg, kept)
    return (r, sg) if return_sign else r


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along ``axis`` (default the last), computed stably.

    Example:
        >>> qb.softmax(qb.array([1.0, 1.0])).tolist()
        [0.5, 0.5]
    """
    x = _floatify(_to_array(x))
    e = exp(x - max(x, axis, keepdims=True))
    return e / sum(e, axis, keepdims=True)


def any(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
    """True where any element over ``axis`` is nonzero (JAX's signature; ``where``: a mask
    of the elements to include, broadcast to ``a``; an empty selection is False).

    Example:
        >>> qb.any(qb.array([0, 1])).item()
        True
        >>> qb.any(qb.array([0, 1]), where=qb.array([True, False])).item()
        False
    """
    _no_out("any", out)
    x = _to_array(a)
    if not x.dtype.is_bool:
        x = x != 0
    return _reduce("any", "reduce_max", _masked("any", x, where, False), axis, keepdims)


def all(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
    """True where every element over ``axis`` is nonzero (JAX's signature; ``where``: a mask
    of the elements to include, broadcast to ``a``; an empty selection is True).

    Example:
        >>> qb.all(qb.array([0, 1])).item()
        False
        >>> qb.all(qb.array([0, 1]), where=qb.array([False, True])).item()
        True
    """
    _no_out("all", out)
    x = _to_array(a)
    if not x.dtype.is_bool:
        x = x != 0
    return _reduce("all", "reduce_min", _masked("all", x, where, True), axis, keepdims)


def _arg(name, x, axis, keepdims):
    keepdims = _bool_arg(name, "keepdims", keepdims)
    x = _to_array(x)
    if x.dtype.is_bool:
        x = astype(x, int32)
    shape = x.shape
    if axis is None:
        flat = reshape(x, (x.size,))
        r = bind(_op(name, dim=0, index=int64.code), flat)
        return reshape(r, (1,) * len(shape)) if keepdims else r
    a = _norm_axis(name, axis, len(shape), shape)
    r = bind(_op(name, dim=a, index=int64.code), x)
    return _keep(r, (a,), shape) if keepdims else r


def argmax(x, axis=None, keepdims=False):
    """Index (int64) of the first maximum along ``axis`` (None: of the flattened array);
    NaN counts as the maximum.

    Example:
        >>> qb.argmax(qb.array([1.0, 3.0, 3.0])).item()
        1
    """
    return _arg("argmax", x, axis, keepdims)


def argmin(x, axis=None, keepdims=False):
    """Index (int64) of the first minimum along ``axis`` (None: of the flattened array).

    Example:
        >>> qb.argmin(qb.array([[3, 1], [0, 2]]), axis=1).tolist()
        [1, 0]
    """
    return _arg("argmin", x, axis, keepdims)


# ---------------------------------------------------------------------------------------------
# Shape manipulation


def _order_arg(op, order):
    """``order`` of ``op`` checked: "C" (row-major) or "F" (column-major), as JAX's."""
    if order == "C" or order == "F":
        return order
    if isinstance(order, str) and order in ("A", "K"):
        raise UnsupportedOperationError(f"{op}: order={order!r} is not supported (JAX and Quabla take 'C' or 'F')", op=op)
    raise _errors.InvalidArgumentError(f"{op}: order must be 'C' or 'F', got {_short_repr(order)}")


def reshape(a, shape, order="C", *, copy=None, out_sharding=None):
    """Reshapes ``a``; one extent may be -1. ``order="C"`` reads and writes the elements in
    row-major order, ``"F"`` in column-major order (as NumPy's and JAX's). ``copy`` and
    ``out_sharding`` are accepted and ignored (arrays are immutable).

    Example:
        >>> qb.reshape(qb.arange(6), (2, -1)).shape
        (2, 3)
        >>> qb.reshape(qb.arange(6), (3, 2), order="F").tolist()
        [[0, 3], [1, 4], [2, 5]]
    """
    x = _to_array(a)
    if _order_arg("reshape", order) == "F":
        shape = _ints_arg("reshape", "shape", shape)
        return transpose(reshape(transpose(x), shape[::-1]))
    shape = _ints_arg("reshape", "shape", shape)
    n = x.size
    if shape.count(-1) > 1:
        raise ShapeError(f"reshape: can only specify one unknown dimension, got shape {_shape_str(shape)}")
    if -1 in shape:
        rest = 1
        for d in shape:
            if d != -1:
                rest *= d
        if rest <= 0 or n % rest:
            raise ShapeError(f"reshape: cannot reshape a tensor of shape {_shape_str(x.shape)} ({n} elements) into shape {_shape_str(shape)}")
        shape = tuple(n // rest if d == -1 else d for d in shape)
    if builtins.any(d <= 0 for d in shape) or math.prod(shape) != n:
        raise ShapeError(f"reshape: cannot reshape a tensor of shape {_shape_str(x.shape)} ({n} elements) into shape {_shape_str(shape)}")
    if shape == x.shape:
        return x
    return bind(_op("reshape", shape=shape), x)


def ravel(a, order="C", *, out_sharding=None):
    """The elements of ``a`` as a 1-D array, in row-major (``order="C"``) or column-major
    (``"F"``) order. ``out_sharding`` is accepted and ignored.

    Example:
        >>> qb.ravel(qb.ones((2, 2))).shape
        (4,)
        >>> qb.ravel(qb.array([[1, 2], [3, 4]]), order="F").tolist()
        [1, 3, 2, 4]
    """
    x = _to_array(a)
    if _order_arg("ravel", order) == "F":
        x = transpose(x)
    return reshape(x, (x.size,))


def transpose(x, axes=None):
    """Permutes the axes (default: reverses them). Result axis i is input axis axes[i].

    Example:
        >>> qb.transpose(qb.ones((2, 3))).shape
        (3, 2)
    """
    x = _to_array(x)
    nd = x.ndim
    if axes is None:
        perm = tuple(range(nd - 1, -1, -1))
    else:
        given = _ints_arg("transpose", "axes", axes)
        perm = tuple(_norm_axis("transpose", a, nd, x.shape) for a in given)
        if sorted(perm) != list(range(nd)):
            raise ShapeError(f"transpose: axes {given} are not a permutation of the axes of a tensor of shape {_shape_str(x.shape)}")
    if perm == tuple(range(nd)):
        return x
    return bind(_op("transpose", perm=perm), x)


def swapaxes(x, axis1, axis2):
    """Swaps two axes.

    Example:
        >>> qb.swapaxes(qb.ones((2, 3, 4)), 0, -1).shape
        (4, 3, 2)
    """
    x = _to_array(x)
    a = _norm_axis("swapaxes", axis1, x.ndim, x.shape)
    b = _norm_axis("swapaxes", axis2, x.ndim, x.shape)
    perm = list(range(x.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, perm)


def expand_dims(x, axis):
    """Inserts extent-1 axes at the positions ``axis`` (an int or a tuple) of the result.

    Example:
        >>> qb.expand_dims(qb.ones((2, 3)), -1).shape
        (2, 3, 1)
    """
    x = _to_array(x)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    nd = x.ndim + len(axes)
    pos = _norm_axes("expand_dims", tuple(axes), (1,) * nd)
    it = iter(x.shape)
    shape = tuple(1 if i in pos else next(it) for i in range(nd))
    return reshape(x, shape)


def squeeze(x, axis=None):
    """Removes extent-1 axes (all of them, or those in ``axis``).

    Example:
        >>> qb.squeeze(qb.ones((1, 3, 1))).shape
        (3,)
    """
    x = _to_array(x)
    if axis is None:
        axes = tuple(i for i, d in enumerate(x.shape) if d == 1)
    else:
        axes = _norm_axes("squeeze", axis, x.shape)
        for a in axes:
            if x.shape[a] != 1:
                raise ShapeError(f"squeeze: cannot squeeze axis {a} of extent {x.shape[a]} of a tensor of shape {_shape_str(x.shape)}")
    return reshape(x, tuple(d for i, d in enumerate(x.shape) if i not in axes))


def _common(op, xs):
    """``xs`` as arrays of their common dtype (no broadcasting). Python numbers and weak
    traced numbers are weak, as in JAX: they take the arrays' dtype (``[uint8 array, 1]`` stays
    uint8, ``[float32 array, 0.5]`` float32) unless every operand is one."""
    xs = _arrays_arg(op, "arrays", xs)
    if not xs:
        raise _errors.InvalidArgumentError(f"{op}: needs at least one array")
    weak = [_is_scalar(x) or _weak(x) for x in xs]
    arrs = [x if w and _is_scalar(x) else _to_array(x) for x, w in zip(xs, weak)]
    dt = None
    for a, w in zip(arrs, weak):
        if not w:
            dt = a.dtype if dt is None else _dt.result_type(op, dt, a.dtype)
    if dt is None:  # only weak operands: the join of their default dtypes
        arrs = [_to_array(a) for a in arrs]
        weak = [False] * len(arrs)
        dt = arrs[0].dtype
        for a in arrs[1:]:
            dt = _dt.result_type(op, dt, a.dtype)
    for a, w in zip(arrs, weak):
        if w:
            dt = _dt.weak_result(dt, a if _is_scalar(a) else _WEAK_SAMPLE[a.dtype.kind])
    return [_to_array(a, dt) if _is_scalar(a) else astype(a, dt) for a in arrs]


def concatenate(arrays, axis=0):
    """Joins arrays along an existing axis.

    Example:
        >>> qb.concatenate([qb.ones((2, 1)), qb.zeros((2, 2))], axis=1).shape
        (2, 3)
    """
    xs = _common("concatenate", arrays)
    s0 = xs[0].shape
    if not s0:
        raise ShapeError("concatenate: zero-dimensional arrays cannot be concatenated")
    a = _norm_axis("concatenate", axis, len(s0), s0)
    for x in xs[1:]:
        s = x.shape
        if len(s) != len(s0) or builtins.any(i != a and p != q for i, (p, q) in enumerate(zip(s, s0))):
            raise ShapeError(
                "concatenate: all input shapes must match except along axis "
                f"{a}, got " + ", ".join(_shape_str(x.shape) for x in xs)
            )
    op = _op("concatenate", dim=a)
    r = xs[0]
    for x in xs[1:]:
        r = bind(op, r, x)
    return r


concat = concatenate


def stack(arrays, axis=0):
    """Joins arrays of equal shape along a new axis.

    Example:
        >>> qb.stack([qb.ones(3), qb.zeros(3)]).shape
        (2, 3)
    """
    xs = _common("stack", arrays)
    s0 = xs[0].shape
    for x in xs[1:]:
        if x.shape != s0:
            raise ShapeError("stack: all input arrays must have the same shape, got " + ", ".join(_shape_str(x.shape) for x in xs))
    a = _norm_axis("stack", axis, len(s0) + 1, s0)
    return concatenate([expand_dims(x, a) for x in xs], axis=a)


def split(x, indices_or_sections, axis=0):
    """Splits ``x`` along ``axis`` into equal sections (an int) or at the given indices.

    Example:
        >>> [p.shape for p in qb.split(qb.arange(6), [1, 4])]
        [(1,), (3,), (2,)]
    """
    x = _to_array(x)
    a = _norm_axis("split", axis, x.ndim, x.shape)
    n = x.shape[a]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        if k <= 0 or n % k:
            raise ShapeError(f"split: axis {a} of extent {n} (shape {_shape_str(x.shape)}) does not split into {k} equal sections")
        bounds = [i * (n // k) for i in range(k + 1)]
    else:
        idx = _ints_arg("split", "indices_or_sections", indices_or_sections)
        bounds = [0] + [builtins.min(builtins.max(i + n if i < 0 else i, 0), n) for i in idx] + [n]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        if hi <= lo:
            raise ShapeError(f"split: section [{lo}:{hi}] of axis {a} (shape {_shape_str(x.shape)}) would be empty")
        out.append(_slice_axis(x, a, lo, hi, 1))
    return out


def _slice_axis(x, a, lo, hi, step):
    shape = x.shape
    start = [0] * len(shape)
    limit = list(shape)
    strides = [1] * len(shape)
    start[a], limit[a], strides[a] = lo, hi, step
    if lo == 0 and hi == shape[a] and step == 1:
        return x
    return bind(_op("slice", start_indices=tuple(start), limit_indices=tuple(limit), strides=tuple(strides)), x)


# ---------------------------------------------------------------------------------------------
# Products


def _dot_general(a, b, lb, rb, lc, rc):
    return bind(_op("dot_general", lhs_batching_dimensions=_t(lb), rhs_batching_dimensions=_t(rb), lhs_contracting_dimensions=_t(lc), rhs_contracting_dimensions=_t(rc)), a, b)


def _prod_operands(op, a, b):
    return _common(op, [a, b])


def _bool_product(f, *xs, **kw):
    """``f`` (a sum of products) of bool operands: computed on int32 and true where nonzero,
    JAX's bool result (an or of ands)."""
    return not_equal(f(*[astype(x, int32) for x in xs], **kw), 0)


def matmul(a, b):
    """Matrix product with NumPy's rules: 1-D operands are promoted to matrices and the
    added axis removed; leading (batch) axes broadcast. The ``@`` operator.

    Example:
        >>> qb.matmul(qb.ones((5, 2, 3)), qb.ones((3, 4))).shape
        (5, 2, 4)
    """
    a, b = _prod_operands("matmul", a, b)
    if a.dtype.is_bool:
        return _bool_product(matmul, a, b)
    sa, sb = a.shape, b.shape
    if not sa or not sb:
        raise ShapeError(f"matmul: operands must have at least one dimension, got shapes {_shape_str(sa)} and {_shape_str(sb)}")
    a1, b1 = len(sa) == 1, len(sb) == 1
    if a1:
        a = reshape(a, (1,) + sa)
    if b1:
        b = reshape(b, sb + (1,))
    sa, sb = a.shape, b.shape
    if sa[-1] != sb[-2]:
        raise ShapeError(
            f"matmul: contracting dimensions differ: shapes {_shape_str(sa if not a1 else sa[1:])} and "
            f"{_shape_str(sb if not b1 else sb[:-1])} ({sa[-1]} != {sb[-2]})"
        )
    batch = _bcast_shapes("matmul", sa[:-2], sb[:-2]) if (len(sa) > 2 or len(sb) > 2) else ()
    nb = len(batch)
    if nb and len(sb) == 2 and sa[:-2] == batch:
        # A batched lhs against a matrix: one product over the lhs's leading dims (no copy of
        # the matrix per batch element); the result dims are already [batch..., M, N].
        r = _dot_general(a, b, (), (), (len(sa) - 1,), (0,))
        out = batch + (() if a1 else (sa[-2],)) + (() if b1 else (sb[-1],))
        return reshape(r, out) if r.shape != out else r
    if sa[:-2] != batch:
        a = broadcast_to(a, batch + sa[-2:])
    if sb[:-2] != batch:
        b = broadcast_to(b, batch + sb[-2:])
    r = _dot_general(a, b, range(nb), range(nb), (nb + 1,), (nb,))
    out = batch + (() if a1 else (sa[-2],)) + (() if b1 else (sb[-1],))
    return reshape(r, out) if r.shape != out else r


def dot(a, b):
    """NumPy's ``dot``: products of scalars, inner products of vectors, matrix products, and
    for N-D operands a sum over the last axis of ``a`` and the second-to-last of ``b``.

    Example:
        >>> qb.dot(qb.array([1.0, 2.0]), qb.array([3.0, 4.0])).item()
        11.0
    """
    a, b = _prod_operands("dot", a, b)
    if a.dtype.is_bool:
        return _bool_product(dot, a, b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    ca = a.ndim - 1
    cb = 0 if b.ndim == 1 else b.ndim - 2
    if a.shape[ca] != b.shape[cb]:
        raise ShapeError(f"dot: shapes {_shape_str(a.shape)} and {_shape_str(b.shape)} not aligned: {a.shape[ca]} (dim {ca}) != {b.shape[cb]} (dim {cb})")
    r = _dot_general(a, b, (), (), (ca,), (cb,))
    return r


def tensordot(a, b, axes=2):
    """Sum of products over the last ``axes`` axes of ``a`` and the first of ``b`` (an int),
    or over the axis lists ``axes = (a_axes, b_axes)``.

    Example:
        >>> qb.tensordot(qb.ones((2, 3, 4)), qb.ones((3, 4, 5))).shape
        (2, 5)
    """
    a, b = _prod_operands("tensordot", a, b)
    if a.dtype.is_bool:
        return _bool_product(tensordot, a, b, axes=axes)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > a.ndim or n > b.ndim:
            raise ShapeError(f"tensordot: axes={n} does not fit shapes {_shape_str(a.shape)} and {_shape_str(b.shape)}")
        la, lb = tuple(range(a.ndim - n, a.ndim)), tuple(range(n))
    else:
        if not isinstance(axes, (tuple, list)) or len(axes) != 2:
            raise ArgumentTypeError(f"tensordot: axes must be an int or a pair (a_axes, b_axes), got {type(axes).__name__} {_short_repr(axes)}")
        la, lb = (_ints_arg("tensordot", "axes", v) for v in axes)
        if len(la) != len(lb):
            raise ShapeError(f"tensordot: axes lists {la} and {lb} differ in length")
        la = tuple(_norm_axis("tensordot", x, a.ndim, a.shape) for x in la)
        lb = tuple(_norm_axis("tensordot", x, b.ndim, b.shape) for x in lb)
    for p, q in zip(la, lb):
        if a.shape[p] != b.shape[q]:
            raise ShapeError(f"tensordot: shape mismatch for sum: {_shape_str(a.shape)} axis {p} ({a.shape[p]}) and {_shape_str(b.shape)} axis {q} ({b.shape[q]})")
    return _dot_general(a, b, (), (), la, lb)


def _einsum_ellipsis(s, operands):
    """Rewrites ``...`` in einsum subscripts as fresh letters (right-aligned across operands,
    NumPy's broadcasting: extent-1 axes are broadcast first); returns the subscripts and the
    operands."""
    ins, arrow, out = s.partition("->")
    specs = ins.split(",")
    if len(specs) != len(operands):
        raise _errors.InvalidArgumentError(f"einsum: {s!r} names {len(specs)} operands, got {len(operands)}")
    xs = [_to_array(x) for x in operands]
    used = set(s)
    free = [c for c in string.ascii_letters if c not in used]
    ranks = []
    for k, (sp, x) in enumerate(zip(specs, xs)):
        if sp.count("...") > 1 or sp.replace("...", "").count(".") or (sp.count(".") and "..." not in sp):
            raise _errors.InvalidArgumentError(f"einsum: invalid subscripts {sp!r}")
        if "..." in sp:
            r = x.ndim - (len(sp) - 3)
            if r < 0:
                raise ShapeError(f"einsum: operand {k} has shape {_shape_str(x.shape)} but subscripts {sp!r} name more axes")
            ranks.append(r)
        else:
            ranks.append(0)
    nell = builtins.max(ranks) if ranks else 0
    if nell > len(free):
        raise _errors.InvalidArgumentError("einsum: too many axes under '...'")
    ell = "".join(free[:nell])
    extents = [1] * nell
    for sp, x, r in zip(specs, xs, ranks):
        if "..." in sp:
            i = sp.index("...")
            for j, d in enumerate(x.shape[i:i + r]):
                e = nell - r + j
                if d != 1:
                    if extents[e] not in (1, d):
                        raise ShapeError(f"einsum: axes under '...' do not broadcast: extents {extents[e]} and {d}")
                    extents[e] = d
    new_specs, new_xs = [], []
    for sp, x, r in zip(specs, xs, ranks):
        if "..." not in sp:
            new_specs.append(sp)
            new_xs.append(x)
            continue
        i = sp.index("...")
        letters = ell[nell - r:]
        target = list(x.shape)
        for j in range(r):
            if x.shape[i + j] == 1 and extents[nell - r + j] != 1:
                target[i + j] = extents[nell - r + j]
        if tuple(target) != x.shape:
            x = bind(_op("broadcast_in_dim", dims=tuple(range(x.ndim)), shape=tuple(target)), x)
        new_specs.append(sp[:i] + letters + sp[i + 3:])
        new_xs.append(x)
    if arrow:
        if out.count("...") > 1 or out.replace("...", "").count("."):
            raise _errors.InvalidArgumentError(f"einsum: invalid output subscripts {out!r}")
        out = out.replace("...", ell)
    else:
        counts = {}
        for c in "".join(new_specs):
            counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    return ",".join(new_specs) + "->" + out, new_xs


_EINSUM_OPTIMIZE = ("auto", "greedy", "optimal", "eager", "dp", "branch-all", "branch-2", "random-greedy")


def einsum(subscripts, *operands, out=None, optimize="auto", precision=None, preferred_element_type=None):
    """Einstein summation over explicit subscripts (``"ij,jk->ik"``; implicit output when
    ``->`` is omitted; ``...`` stands for broadcast leading axes; a repeated index within one
    operand takes its diagonal, ``"ii->"`` is a trace), as ``jax.numpy.einsum``. Products
    become ``dot_general``, other sums ``reduce_sum``. With three or more operands and
    ``optimize`` true or a strategy name (JAX's default ``"auto"``), the pairs are contracted
    greedily, smallest intermediate first; ``optimize=False`` contracts left to right (an
    explicit contraction path, as opt_einsum's list, is accepted and contracts greedily).
    ``precision`` is accepted and ignored; ``preferred_element_type`` converts the operands
    to that dtype first. NumPy's interleaved form ``einsum(x, [0, 1], y, [1, 2], [0, 2])``
    (integer subscripts in 0..51 and ``...``; the output list optional) is accepted too.

    Example:
        >>> qb.einsum("bij,bjk->bik", qb.ones((2, 3, 4)), qb.ones((2, 4, 5))).shape
        (2, 3, 5)
        >>> qb.einsum(qb.ones((2, 3)), [0, 1], qb.ones((3, 4)), [1, 2], [0, 2]).shape
        (2, 4)
        >>> qb.einsum("...ij,jk->...ik", qb.ones((2, 3, 4)), qb.ones((4, 5))).shape
        (2, 3, 5)
        >>> qb.einsum("ii->", qb.eye(3)).item()
        3.0
    """
    if out is not None:
        raise UnsupportedOperationError("einsum: out= is not supported (arrays are immutable)", op="einsum")
    if not (isinstance(optimize, (bool, list, tuple)) or optimize is None or optimize in _EINSUM_OPTIMIZE):
        raise _errors.InvalidArgumentError(f"einsum: optimize must be a bool, a strategy name ({', '.join(_EINSUM_OPTIMIZE)}) or a contraction path, got {optimize!r}")
    greedy = bool(optimize) if not isinstance(optimize, (list, tuple)) else True
    if not isinstance(subscripts, str) and operands and isinstance(operands[0], (list, tuple)):
        subscripts, operands = _einsum_interleaved(subscripts, operands)
    if preferred_element_type is not None:
        want = _dt.dtype(preferred_element_type, "einsum")
        operands = tuple(astype(_to_array(x), want) for x in operands)
    if not isinstance(subscripts, str):
        raise ArgumentTypeError(f"einsum: subscripts must be a string such as 'ij,jk->ik', got {type(subscripts).__name__} {_short_repr(subscripts)}")
    s = subscripts.replace(" ", "")
    if "." in s:
        s, operands = _einsum_ellipsis(s, operands)
    if "->" in s:
        ins, out = s.split("->")
    else:
        ins = s
        counts = {}
        for c in ins.replace(",", ""):
            counts[c] = counts.get(c, 0) + 1
        out = "".join(sorted(c for c, k in counts.items() if k == 1))
    specs = ins.split(",")
    if len(specs) != len(operands):
        raise _errors.InvalidArgumentError(f"einsum: {subscripts!r} names {len(specs)} operands, got {len(operands)}")
    xs = list(_common("einsum", operands))
    if xs[0].dtype.is_bool:
        return _bool_product(lambda *ys: einsum(f"{ins}->{out}", *ys, optimize=optimize), *xs)
    sizes = {}
    for k, (sp, x) in enumerate(zip(specs, xs)):
        if builtins.any(c not in string.ascii_letters for c in sp):
            raise _errors.InvalidArgumentError(f"einsum: invalid subscripts {sp!r}")
        if len(sp) != x.ndim:
            raise ShapeError(f"einsum: operand {k} has shape {_shape_str(x.shape)} but subscripts {sp!r} name {len(sp)} axes")
        while len(set(sp)) != len(sp):
            # A repeated index: the diagonal over its two axes, as the operand's last axis.
            c = next(c for c in sp if sp.count(c) > 1)
            i = sp.index(c)
            j = sp.index(c, i + 1)
            if x.shape[i] != x.shape[j]:
                raise ShapeError(f"einsum: index {c!r} repeated in {specs[k]!r} has extents {x.shape[i]} and {x.shape[j]} (operand {k} of shape {_shape_str(x.shape)})")
            x = _diagonal(x, i, j)
            sp = "".join(ch for n, ch in enumerate(sp) if n not in (i, j)) + c
            specs[k] = sp
        xs[k] = x
        for c, d in zip(sp, x.shape):
            if sizes.setdefault(c, d) != d:
                raise ShapeError(f"einsum: index {c!r} has extent {sizes[c]} and {d} (operand {k} of shape {_shape_str(x.shape)})")
    for c in out:
        if c not in sizes:
            raise _errors.InvalidArgumentError(f"einsum: output index {c!r} does not appear in the inputs")
    # Sum out indices that appear in a single operand and not in the output.
    terms = []
    for k, (sp, x) in enumerate(zip(specs, xs)):
        others = "".join(specs[:k] + specs[k + 1:]) + out
        drop = tuple(i for i, c in enumerate(sp) if c not in others)
        if drop:
            x = bind(_op("reduce_sum", dims=drop), x)
            sp = "".join(c for i, c in enumerate(sp) if i not in drop)
        terms.append((sp, x))
    while len(terms) > 1:
        a, b = _einsum_pair(terms, out, sizes) if greedy and len(terms) > 2 else (0, 1)
        (cur_sp, cur), (sp, x) = terms[a], terms[b]
        rest = [t for n, t in enumerate(terms) if n not in (a, b)]
        keep = out + "".join(t[0] for t in rest)
        batch = [c for c in cur_sp if c in sp and c in keep]
        contract = [c for c in cur_sp if c in sp and c not in keep]
        cur = _dot_general(
            cur, x,
            [cur_sp.index(c) for c in batch], [sp.index(c) for c in batch],
            [cur_sp.index(c) for c in contract], [sp.index(c) for c in contract],
        )
        cur_sp = "".join(batch) + "".join(c for c in cur_sp if c not in batch and c not in contract) + "".join(
            c for c in sp if c not in batch and c not in contract
        )
        terms = [(cur_sp, cur)] + rest
    cur_sp, cur = terms[0]
    drop = tuple(i for i, c in enumerate(cur_sp) if c not in out)
    if drop:
        cur = bind(_op("reduce_sum", dims=drop), cur)
        cur_sp = "".join(c for c in cur_sp if c in out)
    return transpose(cur, [cur_sp.index(c) for c in out]) if cur_sp != out else cur


_EINSUM_LETTERS = string.ascii_letters


def _einsum_sublist(lst, what):
    """The subscript string of an interleaved-form sublist (ints 0..51 and ``...``)."""
    if not isinstance(lst, (list, tuple)):
        raise ArgumentTypeError(f"einsum: {what} must be a list of ints and Ellipsis (the interleaved form), got {type(lst).__name__} {_short_repr(lst)}")
    out = []
    for v in lst:
        if v is Ellipsis:
            out.append("...")
        elif isinstance(v, (int, np.integer)) and not isinstance(v, bool) and 0 <= v < len(_EINSUM_LETTERS):
            out.append(_EINSUM_LETTERS[int(v)])
        else:
            raise _errors.InvalidArgumentError(f"einsum: {what} holds {v!r}; subscripts of the interleaved form are ints in [0, {len(_EINSUM_LETTERS)}) or Ellipsis")
    return "".join(out)


def _einsum_interleaved(first, rest):
    """``einsum(x, [0, 1], y, [1, 2], [0, 2])`` as a subscript string and the operands."""
    args = (first,) + tuple(rest)
    ops, subs = list(args[0::2]), list(args[1::2])
    out = None
    if len(ops) > len(subs):  # an odd count: the last item is the output sublist
        out = ops.pop()
    spec = ",".join(_einsum_sublist(v, f"the sublist of operand {i}") for i, v in enumerate(subs))
    if out is not None:
        spec += "->" + _einsum_sublist(out, "the output sublist")
    return spec, tuple(ops)


def _einsum_pair(terms, out, sizes):
    """The pair of ``terms`` whose product is smallest (fewest elements, then fewest
    multiply-adds): opt_einsum's greedy choice."""
    best = None
    for a in range(len(terms)):
        for b in range(a + 1, len(terms)):
            keep = out + "".join(t[0] for n, t in enumerate(terms) if n not in (a, b))
            both = set(terms[a][0]) | set(terms[b][0])
            result = math.prod(sizes[c] for c in both if c in keep)
            cost = math.prod(sizes[c] for c in both)
            if best is None or (result, cost) < best[0]:
                best = ((result, cost), (a, b))
    return best[1]


def _diagonal(x, i, j):
    """The diagonal of axes ``i`` < ``j`` of ``x`` as its last axis (a gather of the
    flattened pair)."""
    n = x.shape[i]
    perm = [d for d in range(x.ndim) if d not in (i, j)] + [i, j]
    y = transpose(x, perm)
    lead = tuple(y.shape[:-2])
    y = reshape(y, lead + (n * n,))
    idx = arange(n, dtype=int64) * (n + 1)
    return take(y, idx, axis=len(lead))


# ---------------------------------------------------------------------------------------------
# Indexing


def take(x, indices, axis=None):
    """Elements of ``x`` at integer ``indices`` along ``axis`` (None: of the flattened array):
    the gather the package's own compositions use (the public ``qb.take``, JAX's with its
    modes, is python/quabla/_indexing.py's). The result shape is ``x.shape[:axis] +
    indices.shape + x.shape[axis+1:]``. Concrete negative indices count from the end and
    out-of-range ones raise IndexError; traced indices wrap once from the end and are clamped.

    Example:
        >>> qb.take(qb.array([10, 20, 30]), qb.array([2, 0])).tolist()
        [30, 10]
    """
    x = _to_array(x)
    if axis is None:
        x = ravel(x)
        axis = 0
    a = _norm_axis("take", axis, x.ndim, x.shape)
    n = x.shape[a]
    if type(indices) is Tracer:
        idx = indices
        if idx.dtype.is_float or idx.dtype.is_bool:
            raise DTypeError(f"take: indices must be integers, got {idx.dtype.name} of shape {_shape_str(idx.shape)}")
        idx = where(idx < 0, idx + n, idx)
    else:
        try:
            arr = np.asarray(indices)
        except ValueError:
            raise ArgumentTypeError(f"take: indices must be an array of integers, got a ragged {type(indices).__name__} {_short_repr(indices)}") from None
        if arr.dtype.kind not in "iu":
            raise DTypeError(f"take: indices must be integers, got dtype {arr.dtype} of shape {_shape_str(arr.shape)}")
        if arr.size == 0:
            raise ShapeError("take: empty index arrays are not supported (zero-extent result)")
        if (arr >= n).any() or (arr < -n).any():
            raise _errors.InvalidIndexError(f"take: index out of range for axis {a} of extent {n} (shape {_shape_str(x.shape)})")
        idx = _from_numpy(np.where(arr < 0, arr + n, arr).astype(np.int64))
    if idx.ndim == 0:
        r = bind(_op("gather", axis=a), x, reshape(idx, (1,)))
        return reshape(r, x.shape[:a] + x.shape[a + 1:])
    return bind(_op("gather", axis=a), x, idx)


def _expand_index(key, shape):
    """`key` (a tuple of index items) with its ellipsis, or the missing trailing axes, spelled
    as full slices: one item per axis of `shape` (plus the `None`s)."""
    nd = len(shape)
    n_real = builtins.sum(1 for k in key if k is not None and k is not Ellipsis)
    if builtins.sum(1 for k in key if k is Ellipsis) > 1:
        raise _errors.InvalidIndexError("an index can only have a single ellipsis ('...')")
    if n_real > nd:
        raise _errors.InvalidIndexError(f"too many indices for a tensor of shape {_shape_str(shape)}: {n_real} were given")
    out = []
    for k in key:
        if k is Ellipsis:
            out.extend([slice(None)] * (nd - n_real))
        else:
            out.append(k)
    if not builtins.any(k is Ellipsis for k in key):
        out.extend([slice(None)] * (nd - n_real))
    return out


def getitem(x, key):
    """``x[key]`` for ints, slices (any step), ``None``, ``...`` and one concrete integer
    array (basic indexing; ``Tensor.__getitem__`` sends keys with integer arrays or traced
    indices to :func:`quabla._indexing.getitem`). An int out of bounds is wrapped once from
    the end and clamped, as JAX's default gather (``arange(10)[11]`` is 9, ``[-11]`` is 0)."""
    if not isinstance(key, tuple):
        key = (key,)
    for k in key:
        if type(k) is Tracer:
            raise TracerError(
                f"indexing with a traced value {k!r} needs a concrete index; use qb.take for integer-array indexing "
                "or qb.where for selection"
            )
    shape = x.shape
    nd = len(shape)
    exp = _expand_index(key, shape)
    start, limit, strides = [0] * nd, list(shape), [1] * nd
    out_shape = []
    gathers = []  # (input axis, numpy index array)
    array_at = None
    d = 0
    for k in exp:
        if k is None:
            out_shape.append(("new", 1))
            continue
        n = shape[d]
        if isinstance(k, slice):
            lo, hi, st = k.indices(n)
            r = range(lo, hi, st)
            if len(r) == 0:
                raise ShapeError(f"index {k} of axis {d} (extent {n}) selects no elements: zero-extent results are not supported")
            if st > 0:
                start[d], limit[d], strides[d] = r[0], r[-1] + 1, st
            else:
                gathers.append((d, np.array(list(r), dtype=np.int64)))
            out_shape.append(("keep", len(r)))
        elif isinstance(k, (int, np.integer)) and not isinstance(k, bool):
            # Out of bounds: wrapped once from the end, then clamped (JAX's gather default).
            i = int(k)
            i = builtins.min(builtins.max(i + n if i < 0 else i, 0), n - 1)
            start[d], limit[d] = i, i + 1
        else:
            arr = np.asarray(k.numpy() if isinstance(k, Tensor) else k)
            if arr.dtype == np.bool_:
                raise UnsupportedOperationError("boolean mask indexing gives a data-dependent shape; use qb.where", op="getitem")
            if arr.dtype.kind not in "iu":
                raise _errors.InvalidIndexError(f"only integers, slices, None, ... and integer arrays are valid indices, got {type(k).__name__}")
            if array_at is not None:
                raise UnsupportedOperationError("indexing with more than one integer array is not supported; use qb.take", op="getitem")
            array_at = d
            gathers.append((d, arr))
            out_shape.append(("array", arr.shape))
        d += 1
    if array_at is not None and builtins.any(isinstance(k, (int, np.integer)) and not isinstance(k, bool) for k in exp):
        raise UnsupportedOperationError("mixing integer and integer-array indices is not supported; index in two steps", op="getitem")
    if (start, limit, strides) != ([0] * nd, list(shape), [1] * nd):
        x = bind(_op("slice", start_indices=tuple(start), limit_indices=tuple(limit), strides=tuple(strides)), x)
    # Gathers, last axis first so that earlier axis numbers stay valid.
    for d, arr in sorted(gathers, key=lambda g: -g[0]):
        x = take(x, arr, axis=d)
    final = []
    for kind, v in out_shape:
        if kind == "array":
            final.extend(v)
        else:
            final.append(v)
    return reshape(x, tuple(final))


# ---------------------------------------------------------------------------------------------
# Creation


def array(obj, dtype=None):
    """A new Tensor from ``obj`` (always copies foreign data; a Tensor's immutable storage is
    shared): NumPy arrays keep their dtype, Python floats give float64, ints int64, bools
    bool_, nested lists of any depth are accepted.

    Raises:
        DTypeError: float16 and other unsupported dtypes.
        ShapeError: empty (zero-extent) or ragged data.

    Example:
        >>> qb.array([[1, 2], [3, 4]]).dtype
        quabla.int64
    """
    if type(obj) is Tracer:
        return obj if dtype is None else astype(obj, dtype)
    if isinstance(obj, Tensor):
        return _q.share(obj) if dtype is None or _dt.dtype(dtype, "array") is obj.dtype else astype(obj, dtype)
    if isinstance(obj, (list, tuple)) and _has_tracer(obj):
        return stack([array(o) for o in obj]) if dtype is None else astype(stack([array(o) for o in obj]), dtype)
    if _is_scalar(obj):
        d = _dt.dtype(dtype, "array") if dtype is not None else _dt.scalar_dtype(obj)
        return _q.full((), obj, d.code)
    try:
        a = np.asarray(obj)
    except ValueError as e:
        raise ShapeError(f"array: cannot build a tensor from {type(obj).__name__}: {e}") from None
    if a.dtype == object:
        raise DTypeError(f"array: cannot build a tensor from {type(obj).__name__} (elements are not numbers of one kind)")
    if a.dtype.kind in "USV":
        raise DTypeError(f"array: cannot build a tensor from {type(obj).__name__} {_short_repr(obj)} (strings and raw bytes are not numbers)")
    if a.size == 0:
        raise ShapeError(f"array: zero-extent shape {_shape_str(a.shape)} is not supported (quabla tensors have positive extents)")
    if isinstance(obj, (list, tuple)) and dtype is None and a.dtype.kind == "i" and a.dtype != np.int64:
        a = a.astype(np.int64)
    return _from_numpy(a, dtype)


def _has_tracer(obj):
    for o in obj:
        if type(o) is Tracer:
            return True
        if isinstance(o, (list, tuple)) and _has_tracer(o):
            return True
    return False


def asarray(obj, dtype=None):
    """Like :func:`array`, but returns ``obj`` itself when it already is a Tensor (or
    Tracer) of the requested dtype.

    Example:
        >>> x = qb.array([1.0]); qb.asarray(x) is x
        True
    """
    if is_array(obj) and (dtype is None or _dt.dtype(dtype, "asarray") is obj.dtype):
        return obj
    return array(obj, dtype)


def _int_arg(op, name, v):
    """``v`` as a Python int (ints and NumPy integers; bools and floats are rejected, as NumPy does)."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, Tracer):
        raise _errors.ConcretizationTypeError(f"{op}: {name} must be a static Python int, got a traced value")
    if type(v) is Tensor and v.ndim == 0 and v.dtype.is_int:
        return int(v.item())
    raise ArgumentTypeError(f"{op}: {name} must be an integer, got {type(v).__name__} {_short_repr(v)}")


def _np_alloc(op, fn, *args, **kw):
    """``fn(*args, **kw)``, a NumPy constructor whose size the user chose: its allocation
    failure is an OutOfMemoryError naming ``op``."""
    try:
        return fn(*args, **kw)
    except MemoryError as e:
        raise _errors.OutOfMemoryError(f"{op}: the host allocator could not provide the result ({e})") from None


def _short_repr(v):
    r = repr(v)
    return r if len(r) <= 40 else r[:37] + "..."


def _ints_arg(op, name, v):
    """``v`` (an int or a sequence of ints) as a tuple of Python ints; anything else (bools,
    floats, strings, nested sequences, tensors of other kinds) is an ArgumentTypeError naming
    ``op`` and the argument ``name``."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
        return (int(v),)
    if isinstance(v, Tracer):
        raise _errors.ConcretizationTypeError(f"{op}: {name} must be static Python ints, got a traced value")
    if isinstance(v, np.ndarray) and v.ndim == 1 and v.dtype.kind in "iu":
        return tuple(int(d) for d in v)
    if type(v) is Tensor and v.ndim == 1 and v.dtype.is_int:
        return tuple(v.tolist())
    # Any other iterable of ints (a tuple, list, range, generator); not strings, mappings,
    # sets or arrays of other kinds.
    if isinstance(v, (str, bytes, bytearray, dict, set, frozenset, np.ndarray, Tensor)) or not hasattr(v, "__iter__"):
        raise ArgumentTypeError(f"{op}: {name} must be an int or a sequence of ints, got {type(v).__name__} {_short_repr(v)}")
    return tuple(_int_arg(op, f"each entry of {name}", d) for d in v)


def _arrays_arg(op, name, v):
    """``v``, a sequence of arrays (a list or tuple, or an array of rank >= 1 split along
    its first axis, as NumPy), as a list; ArgumentTypeError otherwise."""
    if isinstance(v, (tuple, list)):
        return list(v)
    if (is_array(v) or isinstance(v, np.ndarray)) and v.ndim >= 1:
        return list(v)
    raise ArgumentTypeError(f"{op}: {name} must be a sequence of arrays, got {type(v).__name__} {_short_repr(v)}")


def _shape_arg(op, shape, dtype=None):
    """A shape tuple of Python ints; with ``dtype``, also checks that the tensor can exist
    (a byte size that neither overflows nor exceeds QUABLA_MAX_BYTES: ArraySizeError)."""
    shape = _ints_arg(op, "shape", shape)
    if builtins.any(d <= 0 for d in shape):
        raise ShapeError(f"{op}: shape {_shape_str(shape)} has a zero or negative extent (quabla tensors have positive extents)")
    if builtins.any(d >= 2**63 for d in shape):
        raise ArraySizeError(f"{op}: shape {_shape_str(shape)} is too big: an extent does not fit in 64 bits")
    if dtype is not None:
        _q.check_shape(op, list(shape), dtype.code)
    return shape


def _full(op, shape, value, d):
    """``_q.full`` of ``shape``; inside a trace, past ``_STAGED_MIN`` elements, the broadcast
    of a scalar constant of the trace (a concrete fill entered the program as a dense
    constant: ``x * ones((4096, 1024))`` a 16 MB literal, 49 ms of first call against 17)."""
    t = _current_trace()
    if t is not None and math.prod(shape) > _STAGED_MIN:
        return _trace_fill(t, value, d, tuple(shape))
    return _q.full(list(shape), value, d.code, op)


def zeros(shape, dtype=None):
    """A tensor of zeros (default dtype float64).

    Example:
        >>> qb.zeros((2, 3), dtype=qb.float32).shape
        (2, 3)
    """
    return _full("zeros", _shape_arg("zeros", shape), 0, _dt.dtype(float64 if dtype is None else dtype, "zeros"))


def ones(shape, dtype=None):
    """A tensor of ones (default dtype float64).

    Example:
        >>> qb.ones(3).tolist()
        [1.0, 1.0, 1.0]
    """
    return _full("ones", _shape_arg("ones", shape), 1, _dt.dtype(float64 if dtype is None else dtype, "ones"))


def full(shape, fill_value, dtype=None, *, device=None, out_sharding=None):
    """A tensor filled with ``fill_value`` (dtype from the value when not given: an array or
    NumPy scalar keeps its dtype and is broadcast to ``shape``, as JAX's). ``device`` and
    ``out_sharding`` are accepted and ignored (one host device).

    Example:
        >>> qb.full((2,), 7).tolist()
        [7, 7]
        >>> qb.full((2, 2), qb.array([1.0, 2.0])).tolist()
        [[1.0, 2.0], [1.0, 2.0]]
    """
    if is_array(fill_value) or isinstance(fill_value, (np.ndarray, np.generic)):
        shape = _shape_arg("full", shape)
        return broadcast_to(_to_array(fill_value, dtype), shape)
    d = _dt.dtype(dtype, "full") if dtype is not None else _dt.scalar_dtype(fill_value)
    return _full("full", _shape_arg("full", shape), fill_value, d)


def _like(op, x, value, dtype, shape=None):
    """``value`` with the shape (``shape`` when given) and the dtype (``dtype`` when given) of
    ``x``; an array ``value`` is converted and broadcast to that shape."""
    if type(x) is not Tracer:
        x = _to_array(x)
    d = _dt.dtype(dtype, op) if dtype is not None else x.dtype
    shp = tuple(x.shape) if shape is None else _shape_arg(op, shape, d)
    if is_array(value) or isinstance(value, (np.ndarray, np.generic, list, tuple)):
        v = _to_array(value, d)
        if not _broadcastable(tuple(v.shape), shp):
            raise ShapeError(f"{op}: fill_value of shape {_shape_str(v.shape)} does not broadcast to shape {_shape_str(shp)}")
        return broadcast_to(v, shp)
    if not isinstance(value, (bool, int, float)):
        raise DTypeError(f"{op}: the fill value must be a number or an array, got {type(value).__name__}")
    if type(x) is Tracer:
        return _fill(value, d, shp, x)
    return _full(op, shp, value, d)


def _broadcastable(src, dst):
    """Whether shape ``src`` broadcasts to shape ``dst`` (NumPy's rules, one way)."""
    return len(src) <= len(dst) and builtins.all(a == 1 or a == b for a, b in zip(src[::-1], dst[::-1]))


def zeros_like(a, dtype=None, shape=None, *, device=None, out_sharding=None):
    """Zeros with the shape (and by default the dtype) of ``a``; ``shape`` (an int or a
    tuple) overrides the shape, as JAX's. ``device`` and ``out_sharding`` are accepted and
    ignored.

    Example:
        >>> qb.zeros_like(qb.ones((2,), dtype=qb.int32)).dtype
        quabla.int32
        >>> qb.zeros_like(qb.ones(2), shape=(2, 3)).shape
        (2, 3)
    """
    return _like("zeros_like", a, 0, dtype, shape)


def ones_like(a, dtype=None, shape=None, *, device=None, out_sharding=None):
    """Ones with the shape (and by default the dtype) of ``a``; ``shape`` overrides the shape.
    ``device`` and ``out_sharding`` are accepted and ignored.

    Example:
        >>> qb.ones_like(qb.zeros(2)).tolist()
        [1.0, 1.0]
    """
    return _like("ones_like", a, 1, dtype, shape)


def full_like(a, fill_value, dtype=None, shape=None, *, device=None, out_sharding=None):
    """``fill_value`` (a number, or an array broadcast to the result) with the shape (and by
    default the dtype) of ``a``; ``shape`` overrides the shape. ``device`` and
    ``out_sharding`` are accepted and ignored.

    Example:
        >>> qb.full_like(qb.zeros(2), 3).tolist()
        [3.0, 3.0]
        >>> qb.full_like(qb.zeros((2, 2)), qb.array([1, 2])).tolist()
        [[1.0, 2.0], [1.0, 2.0]]
    """
    return _like("full_like", a, fill_value, dtype, shape)


def arange(start, stop=None, step=1, dtype=None):
    """Evenly spaced values in [start, stop) (NumPy's rules; integer arguments give int64).

    Example:
        >>> qb.arange(3).tolist()
        [0, 1, 2]
    """
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if (v is not None or name != "stop") and not isinstance(v, (int, float, np.integer, np.floating)):
            raise ArgumentTypeError(f"arange: {name} must be a real number, got {type(v).__name__}")
    if step == 0:
        raise ZeroStepError(f"arange: step must not be zero (start={start}, stop={stop})")
    lo, hi = (0, start) if stop is None else (start, stop)
    try:
        span = (hi - lo) / step
    except OverflowError:
        span = math.inf
    if not math.isfinite(span):
        raise ArraySizeError(f"arange: the range (start={start}, stop={stop}, step={step}) has no finite length")
    count = math.ceil(span)
    if count > 0:
        d = _dt.dtype(dtype, "arange") if dtype is not None else (float64 if builtins.any(isinstance(v, (float, np.floating)) for v in (start, stop, step)) else int64)
        _shape_arg("arange", (count,), d)
    if count > _STAGED_MIN and _current_trace() is not None:
        staged = _staged_arange(lo, step, count, d)
        if staged is not None:
            return staged
    a = _np_alloc("arange", np.arange, start, stop, step) if count > 0 and stop is not None else _np_alloc("arange", np.arange, start, step=step) if count > 0 else np.zeros(0)
    if a.size == 0:
        raise ShapeError(f"arange: the range (start={start}, stop={stop}, step={step}) is empty (zero-extent tensors are not supported)")
    return _from_numpy(a, dtype)


def _staged_arange(lo, step, count, d):
    """``arange`` of ``count`` values from ``lo`` by ``step`` as an iota of the program (a
    NumPy range entered a trace as a dense constant: ``arange(1, 1000001)`` 4 MB of program,
    550 ms of first call), where that is exact: integral start and step, every value and
    product on the way representable in ``d`` (integers, or floats within their mantissa);
    None otherwise (NumPy's own float arithmetic is kept)."""
    if isinstance(lo, bool) or isinstance(step, bool) or not builtins.all(isinstance(v, (int, np.integer)) or (isinstance(v, (float, np.floating)) and float(v).is_integer()) for v in (lo, step)):
        return None
    lo, step = int(lo), int(step)
    bound = builtins.max(builtins.abs(lo), builtins.abs(lo + count * step), builtins.abs(count * step))
    if d.is_float:
        if bound >= 2 ** (24 if d.itemsize == 4 else 53):
            return None
    elif d.is_bool or bound >= 2 ** (8 * d.itemsize - 1) or (d.is_unsigned and builtins.min(lo, lo + (count - 1) * step) < 0):
        return None
    r = _iota((count,), 0)
    if step != 1:
        r = multiply(r, step)
    if lo != 0:
        r = add(r, lo)
    return astype(r, d)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """``num`` evenly spaced values from start to stop (default dtype float64), with JAX's
    signature: ``endpoint`` (include stop), ``retstep`` (also return the step), array or
    traced ``start``/``stop`` (the samples go along ``axis`` of the broadcast shape).

    Example:
        >>> qb.linspace(0.0, 1.0, 3).tolist()
        [0.0, 0.5, 1.0]
        >>> qb.linspace(0.0, 1.0, 4, endpoint=False, retstep=True)[1]
        0.25
    """
    num = _int_arg("linspace", "num", num)
    endpoint, retstep = _bool_arg("linspace", "endpoint", endpoint), _bool_arg("linspace", "retstep", retstep)
    if num <= 0:
        raise ShapeError(f"linspace: num={num} gives an empty tensor (zero-extent tensors are not supported)")
    div = (num - 1) if endpoint else num
    static = builtins.all(isinstance(v, (int, float, np.integer, np.floating)) for v in (start, stop))
    if static:
        _shape_arg("linspace", (num,), _dt.dtype(dtype, "linspace") if dtype is not None else float64)
        # Python ints beyond int64 would make NumPy compute on objects: as floats, like JAX.
        start, stop = (float(v) if isinstance(v, int) and not -(2**63) <= v < 2**63 else v for v in (start, stop))
        if num > _STAGED_MIN and div > 0 and _current_trace() is not None and builtins.all(type(v) in (int, float) for v in (start, stop)):
            # Inside a trace NumPy's formula in float64 by the program (an iota times the
            # step plus start, the last value stop; the same float64 operations, so the same
            # values) instead of a dense constant.
            step = (float(stop) - float(start)) / div
            if step != 0 and math.isfinite(step):
                dt = _dt.dtype(dtype, "linspace") if dtype is not None else float64
                i = _iota((num,), 0)
                y = add(multiply(astype(i, float64), step), float(start))
                if endpoint and num > 1:
                    y = where(equal(i, num - 1), float(stop), y)
                r = astype(y if dt.is_float else floor(y), dt)
                return (r, step) if retstep else r
        r = _from_numpy(_np_alloc("linspace", np.linspace, start, stop, num, endpoint=endpoint), dtype)
        if retstep:
            step = (float(stop) - float(start)) / div if div > 0 else math.nan
            return r, step
        return r
    s0, s1 = _binary_operands("linspace", start, stop)
    dt = _dt.dtype(dtype, "linspace") if dtype is not None else _dt.to_inexact(s0.dtype)
    s0, s1 = _binary_operands("linspace", astype(s0, dt), astype(s1, dt))
    shape = s0.shape
    nd = len(shape) + 1
    ax = _norm_axis("linspace", axis, nd, shape + (num,))
    _shape_arg("linspace", shape + (num,), dt)
    t = _from_numpy(_np_alloc("linspace", np.arange, num, dtype=dt.np) / (div if div > 0 else 1))
    bshape = shape + (num,)
    s0e = broadcast_to(reshape(s0, shape + (1,)), bshape)
    s1e = broadcast_to(reshape(s1, shape + (1,)), bshape)
    r = s0e + (s1e - s0e) * broadcast_to(t, bshape)
    if endpoint and num > 1:
        last = _from_numpy(np.arange(num) == num - 1)
        r = where(broadcast_to(last, bshape), s1e, r)
    if ax != nd - 1:
        perm = list(range(nd - 1))
        perm.insert(ax, nd - 1)
        r = transpose(r, perm)
    if retstep:
        return r, (s1 - s0) / div if div > 0 else (s1 - s0) * math.nan
    return r


def _iota(shape, dim):
    """int64 indices along ``dim`` of an array of ``shape``: an iota of the program inside a
    trace (a NumPy range there entered the program as a dense constant: ``tril`` of 1024^2 a
    1M-element mask, 365 ms of first call), a constant outside."""
    shape = _shape_arg("iota", tuple(int(d) for d in shape), int64)
    if _current_trace() is not None:
        return bind(_op("iota", dim=dim, ty=(shape, int64.code)))
    a = np.arange(shape[dim], dtype=np.int64).reshape([-1 if i == dim else 1 for i in range(len(shape))])
    return _from_numpy(_np_alloc("iota", np.ascontiguousarray, np.broadcast_to(a, shape)))


def eye(n, m=None, k=0, dtype=None):
    """An n x m matrix with ones on diagonal ``k`` (default dtype float64).

    Example:
        >>> qb.eye(2).tolist()
        [[1.0, 0.0], [0.0, 1.0]]
    """
    n = _int_arg("eye", "N", n)
    m = n if m is None else _int_arg("eye", "M", m)
    k = _int_arg("eye", "k", k)
    dt = _dt.dtype(dtype, "eye") if dtype is not None else float64
    _shape_arg("eye", (n, m), dt)
    if _current_trace() is not None and n * m > _STAGED_MIN:
        # Inside a trace a large identity is computed by the program (two iotas compared):
        # from NumPy it entered as a dense constant (eye(4096): 128 MB of IR and object code).
        return astype(equal(_iota((n, m), 1) - _iota((n, m), 0), k), dt)
    return _from_numpy(_np_alloc("eye", np.eye, n, m, k), dtype)


# Inside a trace, eye / tri of more elements than this are iotas of the program.
_STAGED_MIN = 4096


def devices():
    """The device names this build compiles for: ``"cpu"``, ``"cuda:0"``, ``"cuda:1"``, ... (one
    per GPU) where the CUDA driver and a GPU are present (the CUDA executor,
    runtime/src/cuda.rs; ``"cuda"`` is accepted everywhere as ``"cuda:0"``), ``"mlx"`` where
    ``mlx.core`` imports (the MLX executor, python/src/mlx.rs and python/quabla/_mlx.py; checked
    once), and ``"xla"`` where jax and jaxlib are installed (the XLA executor,
    python/quabla/_xla.py).

    Example:
        >>> qb.devices()[0]
        'cpu'
    """
    from .sharding import available

    return list(_q.devices()) + (["xla"] if available() else [])


def device_put(x, device=None):
    """``x`` (an array or a pytree of arrays and array-likes) placed on ``device``, as
    ``jax.device_put``: ``"cpu"`` (the default) host memory, ``"cuda"`` / ``"cuda:N"`` the
    memory of a GPU, ``"mlx"`` an MLX array; a ``qb.sharding.NamedSharding`` places it on XLA
    devices (:func:`qb.sharding.device_put`). A program compiled for the device reads such
    inputs without a copy, and its results stay there until read (``x.device`` says where a
    tensor is; ``.numpy()`` copies to the host). Arrays already on the device are returned as
    they are. Inside a traced function the values are returned unchanged (a traced program
    runs on the device it was compiled for).

    Example:
        >>> y = qb.device_put(qb.ones((2,)), "cpu")
        >>> y.device, y.tolist()
        ('cpu', [1.0, 1.0])
    """
    from . import tree as _tree
    from .sharding import NamedSharding, device_put as _sharded_put

    if isinstance(device, NamedSharding):
        return _tree.map(lambda a: _sharded_put(a, device), x)
    if device is None:
        device = "cpu"
    if not isinstance(device, str):
        raise ArgumentTypeError(f"device_put: device must be a device name such as 'cpu' or 'cuda:0', or a qb.sharding.NamedSharding, got {type(device).__name__}")
    if device == "xla":
        raise UnsupportedOperationError(
            "device_put: arrays go to XLA devices through a sharding: qb.device_put(x, qb.sharding.NamedSharding(mesh, spec))", op="device_put", device=device
        )
    name = _q.canonical_device(device, "device_put")

    def put(a):
        if isinstance(a, Tracer):
            return a
        return _q.device_put(_to_array(a), name)

    return _tree.map(put, x)


# ---------------------------------------------------------------------------------------------
# Dynamic slicing (JAX's lax.dynamic_slice / lax.dynamic_update_slice)


def _start_indices(what, start_indices, shape, allow_negative_indices=True):
    """The start indices as 0-d integer arrays of one dtype (int64 if any is int64); with
    ``allow_negative_indices`` (a bool or one per dim) a negative start counts from the end
    (``start + extent``), as in JAX, before the op clamps it."""
    rank = len(shape)
    if is_array(start_indices):
        s = start_indices
        if s.ndim != 1:
            raise ShapeError(f"{what}: start_indices must be a sequence of scalars or a 1-d array, got shape {_shape_str(s.shape)}")
        starts = [s[i] for i in range(s.shape[0])]
    else:
        try:
            starts = list(start_indices)
        except TypeError:
            raise ArgumentTypeError(f"{what}: start_indices must be a sequence of integer scalars, got {type(start_indices).__name__}") from None
    if len(starts) != rank:
        raise ShapeError(f"{what}: needs one start index per dimension of the operand (rank {rank}), got {len(starts)}")
    arrs = []
    for k, s in enumerate(starts):
        a = _to_array(s) if is_array(s) else _to_array(int(s) if isinstance(s, (int, np.integer)) and not isinstance(s, bool) else s)
        if a.shape != () or not a.dtype.is_int:
            raise DTypeError(f"{what}: start index {k} must be an integer scalar, got {a.dtype.name}{list(a.shape)}")
        arrs.append(a)
    wide = int64 if builtins.any(a.dtype is int64 for a in arrs) else (arrs[0].dtype if arrs else int64)
    arrs = [a if a.dtype is wide else astype(a, wide) for a in arrs]
    neg = [bool(allow_negative_indices)] * rank if isinstance(allow_negative_indices, (bool, np.bool_)) else [bool(v) for v in allow_negative_indices]
    if len(neg) != rank:
        raise ShapeError(f"{what}: allow_negative_indices needs one entry per dimension (rank {rank}), got {len(neg)}")
    out = []
    for a, e, wrap in zip(arrs, shape, neg):
        if wrap and type(a) is Tracer:
            a = where(a < 0, a + e, a)
        elif wrap and int(a.item()) < 0:
            a = _to_array(int(a.item()) + e, wide)
        out.append(a)
    return out


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    """The window of shape ``slice_sizes`` of ``operand`` at ``start_indices`` (JAX's
    ``lax.dynamic_slice``): the starts may be traced integers; a negative start counts from
    the end (unless ``allow_negative_indices`` is False for its dim), then starts are clamped
    to ``[0, extent - size]`` so the window stays inside the operand.

    Example:
        >>> qb.dynamic_slice(qb.arange(6), (4,), (3,)).tolist()
        [3, 4, 5]
    """
    x = _to_array(operand)
    sizes = _ints_arg("dynamic_slice", "slice_sizes", slice_sizes)
    if len(sizes) != x.ndim or builtins.any(s < 1 or s > e for s, e in zip(sizes, x.shape)):
        raise ShapeError(f"dynamic_slice: slice_sizes {sizes} must have one entry per dimension with 1 <= size <= extent of operand shape {_shape_str(x.shape)}")
    starts = _start_indices("dynamic_slice", start_indices, x.shape, allow_negative_indices)
    if x.ndim == 0:
        return x
    return bind(_op("dynamic_slice", slice_sizes=sizes), x, *starts)


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    """``operand`` with the window at ``start_indices`` replaced by ``update`` (JAX's
    ``lax.dynamic_update_slice``): the starts may be traced integers; a negative start counts
    from the end (unless ``allow_negative_indices`` is False for its dim), then starts are
    clamped to ``[0, extent - update extent]``. ``update`` must have the operand's rank and dtype.

    Example:
        >>> qb.dynamic_update_slice(qb.zeros(4), qb.ones(2), (1,)).tolist()
        [0.0, 1.0, 1.0, 0.0]
    """
    x = _to_array(operand)
    u = _to_array(update)
    if u.ndim != x.ndim or builtins.any(a > b for a, b in zip(u.shape, x.shape)):
        raise ShapeError(f"dynamic_update_slice: update shape {_shape_str(u.shape)} must have the rank of operand shape {_shape_str(x.shape)} and fit inside it")
    if u.dtype is not x.dtype:
        raise DTypeError(f"dynamic_update_slice: update dtype {u.dtype.name} must equal operand dtype {x.dtype.name}")
    starts = _start_indices("dynamic_update_slice", start_indices, x.shape, allow_negative_indices)
    if x.ndim == 0:
        return u
    return bind(_op("dynamic_update_slice"), x, u, *starts)
