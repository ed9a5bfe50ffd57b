"""``qb.lax``: ``jax.lax``'s names over Quabla's ops, so ``from quabla import lax`` runs the
``lax`` calls of existing JAX programs.

The functions keep ``jax.lax``'s signatures and its stricter rules: the array operands of an
elementwise function share one dtype (a mismatch is a DTypeError, where ``jax.numpy`` would
promote), each function accepts the dtypes ``jax.lax`` accepts (``lax.sin`` of an integer
array is a DTypeError), and operands have equal shapes, a rank-0 operand broadcasting
(``lax.add(x, 1.0)``). Where JAX turns a Python scalar into an int64/float64 array and then
rejects the mix (``lax.add(float32_array, 2.0)``), Quabla lets the scalar take the array's
dtype. The control flow (``scan``, ``cond``, ``while_loop``...) is Quabla's own and the
convolutions are those of the top-level package; ``gather``/``scatter`` with dimension
numbers and the collectives (``psum``...) are not provided here.
"""

import builtins
import enum
import math

import numpy as np

from . import _ops as _o
from . import dtypes as _dt
from . import tree as _tree
from ._bits import population_count as _popcount
from ._bits import shift_left as _shl
from ._bits import shift_right_arithmetic as _sra
from ._bits import shift_right_logical as _srl
from ._control import associative_scan, cond, fori_loop, scan, stop_gradient, switch, while_loop
from ._conv import conv, conv_general_dilated, conv_transpose, cumlogsumexp, cummax, cummin
from ._conv import cumprod as _cumprod
from ._conv import cumsum as _cumsum
from ._conv import reduce_window as _reduce_window
from ._indexing import take_along_axis as _take_along_axis
from ._select import lexsort as _lexsort
from ._numpy import flip as _flip
from ._numpy import sort as _npsort
from ._numpy import tile as _tile
from ._numpy import top_k as _top_k
from ._ops import _fill, _int_arg, _ints_arg, _op, _shape_str, _to_array, astype, bind, dynamic_slice, dynamic_update_slice
from ._trace import is_array
from .errors import ArgumentTypeError, DTypeError, InvalidArgumentError, ShapeError

__all__ = [
    # enums
    "Precision", "RoundingMethod",
    # elementwise
    "add", "sub", "mul", "div", "rem", "neg", "abs", "sign", "max", "min", "pow", "integer_pow", "square",
    "reciprocal", "sqrt", "rsqrt", "cbrt", "exp", "exp2", "expm1", "log", "log1p", "logistic", "tanh", "sin",
    "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "erfc",
    "erf_inv", "lgamma", "digamma", "floor", "ceil", "round", "is_finite", "eq", "ne", "lt", "le", "gt", "ge",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "and_", "or_", "xor", "not_", "shift_left",
    "shift_right_logical", "shift_right_arithmetic", "population_count", "clz", "select", "select_n", "clamp",
    "convert_element_type",
    # shapes
    "broadcast", "broadcast_in_dim", "broadcast_to_rank", "iota", "broadcasted_iota", "full", "full_like",
    "reshape", "transpose", "squeeze", "expand_dims", "collapse", "rev", "tile", "concatenate", "split", "pad",
    # slicing
    "slice", "slice_in_dim", "index_in_dim", "dynamic_slice", "dynamic_slice_in_dim", "dynamic_index_in_dim",
    "dynamic_update_slice", "dynamic_update_slice_in_dim", "dynamic_update_index_in_dim",
    # products and reductions
    "dot", "dot_general", "batch_matmul", "reduce", "reduce_sum", "reduce_max", "reduce_min", "reduce_prod",
    "reduce_and", "reduce_or", "reduce_xor", "argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin",
    "cumlogsumexp", "sort", "sort_key_val", "top_k",
    # control flow
    "scan", "map", "fori_loop", "while_loop", "cond", "switch", "associative_scan", "stop_gradient",
    "optimization_barrier",
    # convolutions and windows
    "conv_general_dilated", "conv", "conv_with_general_padding", "conv_transpose", "reduce_window",
]


class Precision(enum.Enum):
    """Stand-in for ``jax.lax.Precision``, so ``precision=lax.Precision.HIGHEST`` is accepted.

    Quabla computes products in the operands' dtype whatever the precision (f32 products are
    f32 on the CPU, as JAX's HIGHEST).

    Example:
        >>> qb.lax.Precision.HIGHEST.name
        'HIGHEST'
    """

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2


class RoundingMethod(enum.IntEnum):
    """How :func:`round` breaks ties (``jax.lax.RoundingMethod``).

    Example:
        >>> int(qb.lax.RoundingMethod.TO_NEAREST_EVEN)
        1
    """

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


# ---------------------------------------------------------------------------------------------
# Operands

_KIND_WORDS = {"f": "floating", "i": "signed integer", "u": "unsigned integer", "b": "bool"}


def _check_kind(name, x, kinds):
    if x.dtype.kind not in kinds:
        allowed = ", ".join(_KIND_WORDS[k] for k in kinds)
        raise DTypeError(f"lax.{name}: does not accept dtype {x.dtype.name} (operand of shape {_shape_str(x.shape)}); accepted: {allowed}")
    return x


def _arg(name, x, kinds="fiub"):
    return _check_kind(name, _to_array(x), kinds)


def _is_scalar(x):
    return isinstance(x, (bool, int, float)) and not isinstance(x, np.generic)


def _weak_like(name, s, x):
    """The Python scalar ``s`` as an array of ``x``'s dtype and shape (DTypeError when it does
    not fit the dtype's kind)."""
    d = _dt.weak_result(x.dtype, s)
    if d is not x.dtype:
        raise DTypeError(f"lax.{name}: the Python scalar {s!r} does not fit the dtype {x.dtype.name} of the other operand (shape {_shape_str(x.shape)})")
    return _fill(s, d, x.shape, x)


def _same(name, xs, kinds="fiub", what="operands"):
    """The operands as arrays of one dtype and shape: arrays must share a dtype, Python
    scalars take the arrays' dtype, rank-0 operands broadcast to the common shape."""
    xs = [x if _is_scalar(x) else _to_array(x) for x in xs]
    arrays = [x for x in xs if not _is_scalar(x)]
    if not arrays:
        xs = [_to_array(x) for x in xs]
        arrays = xs
    d = arrays[0].dtype
    for a in arrays[1:]:
        if a.dtype is not d:
            got = ", ".join(f"{b.dtype.name}{list(b.shape)}" for b in arrays)
            raise DTypeError(f"lax.{name}: {what} must have the same dtype, got {got} (jnp functions promote; convert with lax.convert_element_type)")
    shapes = {a.shape for a in arrays if a.ndim}
    if len(shapes) > 1:
        raise ShapeError(f"lax.{name}: {what} must have equal shapes (or be rank 0), got " + " and ".join(_shape_str(s) for s in sorted(shapes)))
    shape = shapes.pop() if shapes else ()
    ref = builtins.max(arrays, key=lambda a: a.ndim)
    out = []
    for x in xs:
        if _is_scalar(x):
            x = _weak_like(name, x, ref)
        elif x.shape != shape:
            x = _o.broadcast_to(x, shape)
        out.append(x)
    _check_kind(name, out[0], kinds)
    return out


def _dtype_arg(name, d):
    return _dt.dtype(d, f"lax.{name}")


def _axis(name, a, nd, shape):
    return _o._norm_axis(f"lax.{name}", a, nd, shape)


# ---------------------------------------------------------------------------------------------
# Elementwise, from tables

def _unary(name, impl, kinds, summary, example, out):
    op = _op(impl) if isinstance(impl, str) else None

    def f(x):
        x = _arg(name, x, kinds)
        return bind(op, x) if op is not None else impl(x)

    accepted = ", ".join(_KIND_WORDS[k] for k in kinds)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""{summary} (``jax.lax.{name}``); accepts {accepted} dtypes, other dtypes raise DTypeError.

    Example:
        >>> {example}
        {out}
    """
    return f


def _square(x):
    return x * x


def _clz(x):
    bits = 8 * x.dtype.itemsize
    y = x
    s = 1
    while s < bits:
        y = bind(_op("or"), y, _srl(y, _fill(s, y.dtype, y.shape, y)))
        s *= 2
    return _fill(bits, x.dtype, x.shape, x) - _popcount(y)


_F = "f"
_UNARY = [
    ("neg", "neg", "fiu", "Elementwise negation", "qb.lax.neg(qb.array([1, -2])).tolist()", "[-1, 2]"),
    ("sign", "sign", "fiu", "Elementwise sign: -1, 0 or 1", "qb.lax.sign(qb.array([-3.0, 0.0, 2.0])).tolist()", "[-1.0, 0.0, 1.0]"),
    ("abs", "abs", "fi", "Elementwise absolute value", "qb.lax.abs(qb.array([-1.5, 2.0])).tolist()", "[1.5, 2.0]"),
    ("square", _square, "fiu", "Elementwise x * x", "qb.lax.square(qb.array([3, -2])).tolist()", "[9, 4]"),
    ("sqrt", "sqrt", _F, "Elementwise square root", "qb.lax.sqrt(qb.array([4.0])).tolist()", "[2.0]"),
    ("rsqrt", "rsqrt", _F, "Elementwise 1 / sqrt(x)", "qb.lax.rsqrt(qb.array([4.0])).tolist()", "[0.5]"),
    ("cbrt", "cbrt", _F, "Elementwise real cube root", "qb.lax.cbrt(qb.array([-8.0])).tolist()", "[-2.0]"),
    ("exp", "exp", _F, "Elementwise e**x", "qb.lax.exp(qb.array([0.0])).tolist()", "[1.0]"),
    ("exp2", "exp2", _F, "Elementwise 2**x", "qb.lax.exp2(qb.array([3.0])).tolist()", "[8.0]"),
    ("expm1", "expm1", _F, "Elementwise exp(x) - 1", "qb.lax.expm1(qb.array([0.0])).tolist()", "[0.0]"),
    ("log", "log", _F, "Elementwise natural logarithm", "qb.lax.log(qb.array([1.0])).tolist()", "[0.0]"),
    ("log1p", "log1p", _F, "Elementwise log(1 + x)", "qb.lax.log1p(qb.array([0.0])).tolist()", "[0.0]"),
    ("logistic", "logistic", _F, "Elementwise 1 / (1 + exp(-x))", "qb.lax.logistic(qb.array([0.0])).tolist()", "[0.5]"),
    ("tanh", "tanh", _F, "Elementwise hyperbolic tangent", "qb.lax.tanh(qb.array([0.0])).tolist()", "[0.0]"),
    ("sin", "sin", _F, "Elementwise sine", "qb.lax.sin(qb.array([0.0])).tolist()", "[0.0]"),
    ("cos", "cos", _F, "Elementwise cosine", "qb.lax.cos(qb.array([0.0])).tolist()", "[1.0]"),
    ("tan", "tan", _F, "Elementwise tangent", "qb.lax.tan(qb.array([0.0])).tolist()", "[0.0]"),
    ("asin", "asin", _F, "Elementwise inverse sine", "qb.lax.asin(qb.array([0.0])).tolist()", "[0.0]"),
    ("acos", "acos", _F, "Elementwise inverse cosine", "qb.lax.acos(qb.array([1.0])).tolist()", "[0.0]"),
    ("atan", "atan", _F, "Elementwise inverse tangent", "qb.lax.atan(qb.array([0.0])).tolist()", "[0.0]"),
    ("sinh", "sinh", _F, "Elementwise hyperbolic sine", "qb.lax.sinh(qb.array([0.0])).tolist()", "[0.0]"),
    ("cosh", "cosh", _F, "Elementwise hyperbolic cosine", "qb.lax.cosh(qb.array([0.0])).tolist()", "[1.0]"),
    ("asinh", "asinh", _F, "Elementwise inverse hyperbolic sine", "qb.lax.asinh(qb.array([0.0])).tolist()", "[0.0]"),
    ("acosh", "acosh", _F, "Elementwise inverse hyperbolic cosine", "qb.lax.acosh(qb.array([1.0])).tolist()", "[0.0]"),
    ("atanh", "atanh", _F, "Elementwise inverse hyperbolic tangent", "qb.lax.atanh(qb.array([0.0])).tolist()", "[0.0]"),
    ("erf", "erf", _F, "Elementwise error function", "qb.lax.erf(qb.array([0.0])).tolist()", "[0.0]"),
    ("erfc", "erfc", _F, "Elementwise complementary error function 1 - erf(x)", "qb.lax.erfc(qb.array([0.0])).tolist()", "[1.0]"),
    ("erf_inv", "erf_inv", _F, "Elementwise inverse error function", "qb.lax.erf_inv(qb.array([0.0])).tolist()", "[0.0]"),
    ("lgamma", "lgamma", _F, "Elementwise log|Gamma(x)|", "round(qb.lax.lgamma(qb.array([3.0])).item(), 6)", "0.693147"),
    ("digamma", "digamma", _F, "Elementwise digamma (the derivative of lgamma)", "round(qb.lax.digamma(qb.array([1.0])).item(), 6)",
     "-0.577216"),
    ("floor", "floor", _F, "Elementwise floor", "qb.lax.floor(qb.array([-1.5])).tolist()", "[-2.0]"),
    ("ceil", "ceil", _F, "Elementwise ceiling", "qb.lax.ceil(qb.array([-1.5])).tolist()", "[-1.0]"),
    ("is_finite", "is_finite", _F, "Elementwise test for finite values (bool result)",
     "qb.lax.is_finite(qb.array([1.0, float('inf')])).tolist()", "[True, False]"),
    ("bitwise_not", "not", "iub", "Elementwise bitwise not (logical not of bools)", "qb.lax.bitwise_not(qb.array([True])).tolist()", "[False]"),
    ("population_count", _popcount, "iu", "Elementwise number of set bits", "qb.lax.population_count(qb.array([7, 8])).tolist()", "[3, 1]"),
    ("clz", _clz, "iu", "Elementwise number of leading zero bits of the dtype's bit pattern",
     "qb.lax.clz(qb.array([1, 256], dtype=qb.int32)).tolist()", "[31, 23]"),
]

for _row in _UNARY:
    globals()[_row[0]] = _unary(*_row)
not_ = bitwise_not  # noqa: F821 - defined by the table


def _binary(name, impl, kinds, summary, example, out):
    op = _op(impl) if isinstance(impl, str) else None

    def f(x, y):
        x, y = _same(name, (x, y), kinds)
        return bind(op, x, y) if op is not None else impl(x, y)

    accepted = ", ".join(_KIND_WORDS[k] for k in kinds)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""{summary} (``jax.lax.{name}``): the operands have one dtype ({accepted}) and equal
    shapes, or are rank 0; a Python scalar takes the other operand's dtype.

    Example:
        >>> {example}
        {out}
    """
    return f


def _cmp(direction):
    op = _op("compare", direction=direction)
    return lambda x, y: bind(op, x, y)


_BINARY = [
    ("add", "add", "fiu", "Elementwise x + y", "qb.lax.add(qb.array([1.0, 2.0]), 1.0).tolist()", "[2.0, 3.0]"),
    ("sub", "sub", "fiu", "Elementwise x - y", "qb.lax.sub(qb.array([3, 4]), 1).tolist()", "[2, 3]"),
    ("mul", "mul", "fiu", "Elementwise x * y", "qb.lax.mul(qb.array([3, 4]), 2).tolist()", "[6, 8]"),
    ("div", "div", "fiu", "Elementwise x / y; integer division truncates toward zero (x / 0 is -1 for integers)",
     "qb.lax.div(qb.array([7, -7]), 2).tolist()", "[3, -3]"),
    ("rem", "rem", "fiu", "Elementwise remainder of truncated division (the sign of x, as C's fmod and %)",
     "qb.lax.rem(qb.array([7, -7]), 3).tolist()", "[1, -1]"),
    ("max", "max", "fiub", "Elementwise maximum (NaN propagates)", "qb.lax.max(qb.array([1.0, 5.0]), 2.0).tolist()", "[2.0, 5.0]"),
    ("min", "min", "fiub", "Elementwise minimum (NaN propagates)", "qb.lax.min(qb.array([1.0, 5.0]), 2.0).tolist()", "[1.0, 2.0]"),
    ("atan2", "atan2", _F, "Elementwise arc tangent of x / y in the quadrant of (y, x)", "qb.lax.atan2(0.0, 1.0).item()", "0.0"),
    ("bitwise_and", "and", "iub", "Elementwise bitwise and (logical and of bools)", "qb.lax.bitwise_and(qb.array([6]), 3).tolist()", "[2]"),
    ("bitwise_or", "or", "iub", "Elementwise bitwise or (logical or of bools)", "qb.lax.bitwise_or(qb.array([6]), 3).tolist()", "[7]"),
    ("bitwise_xor", "xor", "iub", "Elementwise bitwise xor (logical xor of bools)", "qb.lax.bitwise_xor(qb.array([6]), 3).tolist()", "[5]"),
    ("shift_left", _shl, "iu", "Elementwise x << y (0 once y reaches the bit width)", "qb.lax.shift_left(qb.array([1]), 3).tolist()", "[8]"),
    ("shift_right_logical", _srl, "iu", "Elementwise logical x >> y (zeros enter from the top)",
     "qb.lax.shift_right_logical(qb.array([-8], dtype=qb.int32), 28).tolist()", "[15]"),
    ("shift_right_arithmetic", _sra, "iu", "Elementwise arithmetic x >> y (the sign bit enters from the top)",
     "qb.lax.shift_right_arithmetic(qb.array([-8]), 1).tolist()", "[-4]"),
    ("eq", _cmp("eq"), "fiub", "Elementwise x == y (bool result)", "qb.lax.eq(qb.array([1, 2]), 2).tolist()", "[False, True]"),
    ("ne", _cmp("ne"), "fiub", "Elementwise x != y (bool result)", "qb.lax.ne(qb.array([1, 2]), 2).tolist()", "[True, False]"),
    ("lt", _cmp("lt"), "fiub", "Elementwise x < y (bool result)", "qb.lax.lt(qb.array([1, 2]), 2).tolist()", "[True, False]"),
    ("le", _cmp("le"), "fiub", "Elementwise x <= y (bool result)", "qb.lax.le(qb.array([1, 2]), 2).tolist()", "[True, True]"),
    ("gt", _cmp("gt"), "fiub", "Elementwise x > y (bool result)", "qb.lax.gt(qb.array([1, 2]), 1).tolist()", "[False, True]"),
    ("ge", _cmp("ge"), "fiub", "Elementwise x >= y (bool result)", "qb.lax.ge(qb.array([1, 2]), 2).tolist()", "[False, True]"),
]

for _row in _BINARY:
    globals()[_row[0]] = _binary(*_row)
and_, or_, xor = bitwise_and, bitwise_or, bitwise_xor  # noqa: F821 - defined by the table
del _row


def reciprocal(x):
    """Elementwise 1 / x (``jax.lax.reciprocal``); integer division for integer dtypes.

    Example:
        >>> qb.lax.reciprocal(qb.array([4.0])).tolist()
        [0.25]
    """
    x = _arg("reciprocal", x, "fiu")
    return bind(_op("div"), _fill(1, x.dtype, x.shape, x), x)


def pow(x, y):  # noqa: A001 - jax.lax's name
    """Elementwise x ** y (``jax.lax.pow``): ``x`` floating, ``y`` of ``x``'s dtype or any
    integer dtype (then converted to ``x``'s dtype); shapes equal or rank 0.

    Example:
        >>> qb.lax.pow(qb.array([2.0, 3.0]), 2).tolist()
        [4.0, 9.0]
    """
    if _is_scalar(y) and not isinstance(y, bool):
        y = float(y)
    if not _is_scalar(y):
        y = _arg("pow", y, "fiu")
        if y.dtype.is_int:
            x = _arg("pow", x, "f")
            y = astype(y, x.dtype)
    x, y = _same("pow", (x, y), "f")
    return bind(_op("pow"), x, y)


def integer_pow(x, y):
    """Elementwise x ** y for a static Python int ``y`` (``jax.lax.integer_pow``), by repeated
    multiplication; a negative ``y`` is ``1 / x ** -y`` (floating dtypes only).

    Example:
        >>> qb.lax.integer_pow(qb.array([2, 3]), 3).tolist()
        [8, 27]
    """
    x = _arg("integer_pow", x, "fiu")
    y = _int_arg("lax.integer_pow", "y", y)
    if y < 0 and not x.dtype.is_float:
        raise DTypeError(f"lax.integer_pow: a negative exponent {y} needs a floating operand, got {x.dtype.name} of shape {_shape_str(x.shape)}")
    n = builtins.abs(y)
    acc = None
    base = x
    while n:
        if n & 1:
            acc = base if acc is None else acc * base
        n >>= 1
        if n:
            base = base * base
    if acc is None:
        return _fill(1, x.dtype, x.shape, x)
    return 1.0 / acc if y < 0 else acc


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):  # noqa: A001 - jax.lax's name
    """Elementwise rounding to an integral value (``jax.lax.round``): ties away from zero by
    default, to even with ``rounding_method=RoundingMethod.TO_NEAREST_EVEN`` (or 1).

    Example:
        >>> qb.lax.round(qb.array([0.5, 1.5, -2.5])).tolist()
        [1.0, 2.0, -3.0]
        >>> qb.lax.round(qb.array([0.5, 1.5, -2.5]), qb.lax.RoundingMethod.TO_NEAREST_EVEN).tolist()
        [0.0, 2.0, -2.0]
    """
    x = _arg("round", x, "f")
    if isinstance(rounding_method, str):
        rounding_method = RoundingMethod[rounding_method] if rounding_method in RoundingMethod.__members__ else rounding_method
    if rounding_method not in (0, 1) or isinstance(rounding_method, bool):
        raise InvalidArgumentError(f"lax.round: rounding_method must be RoundingMethod.AWAY_FROM_ZERO or TO_NEAREST_EVEN, got {rounding_method!r}")
    if int(rounding_method) == 1:
        return bind(_op("round"), x)
    ax = bind(_op("abs"), x)
    t = bind(_op("floor"), ax)
    t = _o.where(ax - t >= 0.5, t + 1.0, t)
    # NaN and inf stay (t is x's magnitude), a zero keeps its sign; the derivative is zero.
    return _o.where(x < 0, -t, _o.where(x == 0, stop_gradient(x), t))


def select(pred, on_true, on_false):
    """``on_true`` where ``pred`` is True, else ``on_false`` (``jax.lax.select``): no
    broadcasting, except a rank-0 ``pred``; both cases have one dtype and shape.

    Example:
        >>> qb.lax.select(qb.array([True, False]), qb.array([1.0, 2.0]), qb.array([3.0, 4.0])).tolist()
        [1.0, 4.0]
    """
    return select_n(pred, on_false, on_true)


def select_n(which, *cases):
    """``cases[which]`` elementwise (``jax.lax.select_n``): ``which`` is bool (two cases) or an
    integer array, rank 0 or of the cases' shape; the cases share one dtype and shape. An
    out-of-range ``which`` gives the last case (undefined in JAX).

    Example:
        >>> qb.lax.select_n(qb.array([0, 2, 1]), qb.array([1, 1, 1]), qb.array([2, 2, 2]), qb.array([3, 3, 3])).tolist()
        [1, 3, 2]
    """
    if not cases:
        raise InvalidArgumentError("lax.select_n: needs at least one case")
    w = _to_array(which)
    cs = _same("select_n", cases, what="cases")
    shape = cs[0].shape
    if w.ndim and w.shape != shape:
        raise ShapeError(f"lax.select_n: which must be rank 0 or of the cases' shape {_shape_str(shape)}, got {_shape_str(w.shape)}")
    if w.dtype.is_bool:
        if len(cs) > 2:
            raise InvalidArgumentError(f"lax.select_n: a bool which selects between at most 2 cases, got {len(cs)}")
    elif w.dtype.kind not in "iu":
        raise DTypeError(f"lax.select_n: which must be bool or an integer, got {w.dtype.name}")
    if len(cs) == 1:
        return cs[0]
    if w.shape != shape:
        w = _o.broadcast_to(w, shape)
    sel = _op("select")
    if w.dtype.is_bool:
        return bind(sel, w, cs[1], cs[0])
    out = cs[0]
    for i in range(1, len(cs)):
        out = bind(sel, w >= i, cs[i], out)
    return out


def clamp(min, x, max):  # noqa: A002 - jax.lax's names
    """``x`` clipped to ``[min, max]`` elementwise (``jax.lax.clamp``): ``min`` and ``max`` are
    rank 0 or of ``x``'s shape, all of one dtype. As in JAX, the gradient reaches ``x`` where
    ``min < x < max``, ``min`` where ``x < min`` and ``max`` where ``x > max``.

    Example:
        >>> qb.lax.clamp(0.0, qb.array([-1.0, 0.5, 3.0]), 1.0).tolist()
        [0.0, 0.5, 1.0]
    """
    x0 = _to_array(x) if not _is_scalar(x) else x
    lo, x, hi = _same("clamp", (min, x0, max), "fiu")
    sel = _op("select")
    inside = bind(sel, (x > lo) & (x < hi), x, stop_gradient(x))
    return bind(sel, x < lo, lo, bind(sel, x > hi, hi, inside))


def convert_element_type(operand, new_dtype):
    """``operand`` converted to ``new_dtype`` (``jax.lax.convert_element_type``): float to
    integer truncates toward zero, number to bool is ``x != 0``.

    Example:
        >>> qb.lax.convert_element_type(qb.array([1.7, -1.7]), qb.int32).tolist()
        [1, -1]
    """
    return astype(_to_array(operand), _dtype_arg("convert_element_type", new_dtype))


# ---------------------------------------------------------------------------------------------
# Shapes


def broadcast_in_dim(operand, shape, broadcast_dimensions, *, out_sharding=None):
    """``operand`` broadcast to ``shape``, its dimension ``i`` becoming the result's
    ``broadcast_dimensions[i]`` (``jax.lax.broadcast_in_dim``; its extents are 1 or equal).

    Example:
        >>> qb.lax.broadcast_in_dim(qb.array([1, 2]), (2, 3), (0,)).tolist()
        [[1, 1, 1], [2, 2, 2]]
    """
    x = _to_array(operand)
    shape = _ints_arg("lax.broadcast_in_dim", "shape", shape)
    dims = _ints_arg("lax.broadcast_in_dim", "broadcast_dimensions", broadcast_dimensions) if len(tuple(broadcast_dimensions)) else ()
    if (len(dims) != x.ndim or len(set(dims)) != len(dims) or builtins.any(not 0 <= d < len(shape) for d in dims)
            or builtins.any(e not in (1, shape[d]) for e, d in zip(x.shape, dims))):
        raise ShapeError(
            f"lax.broadcast_in_dim: operand of shape {_shape_str(x.shape)} cannot be broadcast to {_shape_str(shape)} "
            f"with broadcast_dimensions {dims} (one distinct output dim per operand dim, extents 1 or equal)"
        )
    if builtins.any(d <= 0 for d in shape):
        raise ShapeError(f"lax.broadcast_in_dim: shape {_shape_str(shape)} has a zero or negative extent")
    if list(dims) != sorted(dims):
        perm = sorted(range(len(dims)), key=lambda i: dims[i])
        x = _o.transpose(x, perm)
        dims = tuple(sorted(dims))
    if x.shape == shape:
        return x
    return bind(_op("broadcast_in_dim", dims=dims, shape=shape), x)


def broadcast(operand, sizes, *, out_sharding=None):
    """``operand`` with the dimensions ``sizes`` added in front (``jax.lax.broadcast``).

    Example:
        >>> qb.lax.broadcast(qb.array([1, 2]), (3,)).shape
        (3, 2)
    """
    x = _to_array(operand)
    sizes = _ints_arg("lax.broadcast", "sizes", sizes) if len(tuple(sizes)) else ()
    return broadcast_in_dim(x, sizes + x.shape, tuple(range(len(sizes), len(sizes) + x.ndim)))


def broadcast_to_rank(x, rank):
    """``x`` with leading dimensions of extent 1 added up to rank ``rank``
    (``jax.lax.broadcast_to_rank``).

    Example:
        >>> qb.lax.broadcast_to_rank(qb.array([1, 2]), 3).shape
        (1, 1, 2)
    """
    x = _to_array(x)
    rank = _int_arg("lax.broadcast_to_rank", "rank", rank)
    if rank <= x.ndim:
        return x
    return _o.reshape(x, (1,) * (rank - x.ndim) + x.shape)


def broadcasted_iota(dtype, shape, dimension, *, out_sharding=None):
    """The indices along ``dimension`` of an array of ``shape``, as ``dtype``
    (``jax.lax.broadcasted_iota``).

    Example:
        >>> qb.lax.broadcasted_iota(qb.int32, (2, 3), 1).tolist()
        [[0, 1, 2], [0, 1, 2]]
    """
    d = _dtype_arg("broadcasted_iota", dtype)
    if d.is_bool:
        raise DTypeError("lax.broadcasted_iota: dtype must be numeric, got bool_")
    shape = _o._shape_arg("lax.broadcasted_iota", shape, d)
    dim = _axis("broadcasted_iota", dimension, len(shape), shape)
    return bind(_op("iota", dim=dim, ty=(shape, d.code)))


def iota(dtype, size):
    """``[0, 1, ..., size - 1]`` as ``dtype`` (``jax.lax.iota``).

    Example:
        >>> qb.lax.iota(qb.float32, 3).tolist()
        [0.0, 1.0, 2.0]
    """
    return broadcasted_iota(dtype, (_int_arg("lax.iota", "size", size),), 0)


def full(shape, fill_value, dtype=None, *, sharding=None):
    """An array of ``shape`` filled with ``fill_value`` (``jax.lax.full``).

    Example:
        >>> qb.lax.full((2,), 3, qb.float32).tolist()
        [3.0, 3.0]
    """
    v = fill_value if _is_scalar(fill_value) else _to_array(fill_value)
    if not _is_scalar(v) and v.ndim:
        raise ShapeError(f"lax.full: fill_value must be a scalar, got shape {_shape_str(v.shape)}")
    d = _dtype_arg("full", dtype) if dtype is not None else (_dt.scalar_dtype(v) if _is_scalar(v) else v.dtype)
    shape = _ints_arg("lax.full", "shape", shape) if len(tuple(shape)) else ()
    v = _to_array(v, d) if _is_scalar(v) else astype(v, d)
    return _o.broadcast_to(v, shape) if shape else v


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """An array like ``x`` (its shape and dtype, unless given) filled with ``fill_value``
    (``jax.lax.full_like``).

    Example:
        >>> qb.lax.full_like(qb.array([1, 2]), 7).tolist()
        [7, 7]
    """
    x = _to_array(x)
    return full(x.shape if shape is None else shape, fill_value, x.dtype if dtype is None else dtype)


def reshape(operand, new_sizes, dimensions=None, *, out_sharding=None):
    """``operand`` with shape ``new_sizes`` (``jax.lax.reshape``), its dimensions first put in
    the order ``dimensions`` when given; the sizes must multiply to the operand's size.

    Example:
        >>> qb.lax.reshape(qb.arange(6), (3, 2), (0,)).shape
        (3, 2)
        >>> qb.lax.reshape(qb.array([[1, 2], [3, 4]]), (4,), (1, 0)).tolist()
        [1, 3, 2, 4]
    """
    x = _to_array(operand)
    sizes = _ints_arg("lax.reshape", "new_sizes", new_sizes) if len(tuple(new_sizes)) else ()
    if builtins.any(s <= 0 for s in sizes) or math.prod(sizes) != x.size:
        raise ShapeError(f"lax.reshape: new_sizes {_shape_str(sizes)} do not match the operand of shape {_shape_str(x.shape)} (size {x.size})")
    if dimensions is not None:
        x = transpose(x, dimensions)
    return _o.reshape(x, sizes)


def transpose(operand, permutation):
    """``operand`` with its dimensions permuted: result dim ``i`` is operand dim
    ``permutation[i]`` (``jax.lax.transpose``).

    Example:
        >>> qb.lax.transpose(qb.zeros((2, 3, 4)), (2, 0, 1)).shape
        (4, 2, 3)
    """
    x = _to_array(operand)
    perm = _ints_arg("lax.transpose", "permutation", permutation) if len(tuple(permutation)) else ()
    if sorted(perm) != list(range(x.ndim)):
        raise ShapeError(f"lax.transpose: permutation {perm} is not a permutation of the dims of shape {_shape_str(x.shape)}")
    return x if perm == tuple(range(x.ndim)) else _o.transpose(x, perm)


def squeeze(array, dimensions):
    """``array`` without the dimensions ``dimensions``, each of extent 1 (``jax.lax.squeeze``).

    Example:
        >>> qb.lax.squeeze(qb.zeros((1, 3, 1)), (0, 2)).shape
        (3,)
    """
    x = _to_array(array)
    dims = {_axis("squeeze", d, x.ndim, x.shape) for d in _ints_arg("lax.squeeze", "dimensions", dimensions)} if len(tuple(dimensions)) else set()
    bad = [d for d in dims if x.shape[d] != 1]
    if bad:
        raise ShapeError(f"lax.squeeze: dimensions {sorted(bad)} of shape {_shape_str(x.shape)} do not have extent 1")
    return _o.reshape(x, tuple(e for i, e in enumerate(x.shape) if i not in dims)) if dims else x


def expand_dims(array, dimensions):
    """``array`` with dimensions of extent 1 inserted at the result's positions
    ``dimensions`` (``jax.lax.expand_dims``).

    Example:
        >>> qb.lax.expand_dims(qb.zeros((3,)), (0, 2)).shape
        (1, 3, 1)
    """
    x = _to_array(array)
    raw = _ints_arg("lax.expand_dims", "dimensions", dimensions) if len(tuple(dimensions)) else ()
    nd = x.ndim + len(raw)
    dims = {_axis("expand_dims", d, nd, (None,) * nd) for d in raw}
    if len(dims) != len(raw):
        raise ShapeError(f"lax.expand_dims: repeated dimension in {raw}")
    it = iter(x.shape)
    return _o.reshape(x, tuple(1 if i in dims else next(it) for i in range(nd)))


def collapse(operand, start_dimension, stop_dimension=None):
    """``operand`` with the dimensions ``[start_dimension, stop_dimension)`` merged into one
    (``jax.lax.collapse``).

    Example:
        >>> qb.lax.collapse(qb.zeros((2, 3, 4)), 1).shape
        (2, 12)
    """
    x = _to_array(operand)
    lo = _axis("collapse", start_dimension, x.ndim, x.shape)
    hi = x.ndim if stop_dimension is None else _int_arg("lax.collapse", "stop_dimension", stop_dimension)
    if hi < 0:
        hi += x.ndim
    if not lo <= hi <= x.ndim:
        raise ShapeError(f"lax.collapse: dimensions [{start_dimension}, {stop_dimension}) are not a range of shape {_shape_str(x.shape)}")
    return _o.reshape(x, x.shape[:lo] + (math.prod(x.shape[lo:hi]),) + x.shape[hi:])


def rev(operand, dimensions):
    """``operand`` reversed along ``dimensions`` (``jax.lax.rev``).

    Example:
        >>> qb.lax.rev(qb.array([[1, 2], [3, 4]]), (1,)).tolist()
        [[2, 1], [4, 3]]
    """
    x = _to_array(operand)
    dims = tuple(sorted({_axis("rev", d, x.ndim, x.shape) for d in _ints_arg("lax.rev", "dimensions", dimensions)})) if len(tuple(dimensions)) else ()
    return _flip(x, dims) if dims else x


def tile(operand, reps):
    """``operand`` repeated ``reps[i]`` times along dimension ``i`` (``jax.lax.tile``; one rep
    per dimension).

    Example:
        >>> qb.lax.tile(qb.array([1, 2]), (2,)).tolist()
        [1, 2, 1, 2]
    """
    x = _to_array(operand)
    reps = _ints_arg("lax.tile", "reps", reps) if len(tuple(reps)) else ()
    if len(reps) != x.ndim:
        raise ShapeError(f"lax.tile: reps {reps} must have one entry per dimension of shape {_shape_str(x.shape)}")
    return _tile(x, reps)


def concatenate(operands, dimension):
    """The operands joined along ``dimension`` (``jax.lax.concatenate``): one dtype, equal
    extents elsewhere.

    Example:
        >>> qb.lax.concatenate([qb.array([1]), qb.array([2, 3])], 0).tolist()
        [1, 2, 3]
    """
    xs = [_to_array(x) for x in _o._arrays_arg("lax.concatenate", "operands", operands)]
    if not xs:
        raise InvalidArgumentError("lax.concatenate: needs at least one operand")
    if builtins.any(x.dtype is not xs[0].dtype for x in xs):
        raise DTypeError("lax.concatenate: operands must have the same dtype, got " + ", ".join(f"{x.dtype.name}{list(x.shape)}" for x in xs))
    dim = _int_arg("lax.concatenate", "dimension", dimension)
    return _o.concatenate(xs, axis=dim)


def split(operand, sizes, axis=0):
    """``operand`` cut along ``axis`` into pieces of extents ``sizes`` (``jax.lax.split``).

    Example:
        >>> [p.tolist() for p in qb.lax.split(qb.arange(5), (2, 3))]
        [[0, 1], [2, 3, 4]]
    """
    x = _to_array(operand)
    sizes = _ints_arg("lax.split", "sizes", sizes)
    a = _axis("split", axis, x.ndim, x.shape)
    if sum(sizes) != x.shape[a] or builtins.any(s <= 0 for s in sizes):
        raise ShapeError(f"lax.split: sizes {sizes} must be positive and add up to extent {x.shape[a]} of axis {a} of shape {_shape_str(x.shape)}")
    out, lo = [], 0
    for s in sizes:
        out.append(_o._slice_axis(x, a, lo, lo + s, 1))
        lo += s
    return out


def pad(operand, padding_value, padding_config):
    """``operand`` padded with the scalar ``padding_value`` (``jax.lax.pad``): one
    ``(low, high, interior)`` triple per dimension; ``interior`` values go between
    neighbours, and a negative ``low``/``high`` crops.

    Example:
        >>> qb.lax.pad(qb.array([1, 2, 3]), 0, [(1, -1, 1)]).tolist()
        [0, 1, 0, 2, 0]
    """
    x = _to_array(operand)
    v = _weak_like("pad", padding_value, _to_array(0, x.dtype)) if _is_scalar(padding_value) else _to_array(padding_value)
    if v.ndim or v.dtype is not x.dtype:
        raise DTypeError(f"lax.pad: padding_value must be a scalar of the operand's dtype {x.dtype.name}, got {v.dtype.name}{list(v.shape)}")
    try:
        cfg = [tuple(int(c) for c in t) for t in padding_config]
    except (TypeError, ValueError):
        raise ArgumentTypeError(f"lax.pad: padding_config must be a sequence of (low, high, interior) int triples, got {padding_config!r}") from None
    if len(cfg) != x.ndim or builtins.any(len(t) != 3 or t[2] < 0 for t in cfg):
        raise ShapeError(f"lax.pad: padding_config needs one (low, high, interior >= 0) triple per dimension of shape {_shape_str(x.shape)}, got {cfg}")
    out_shape = tuple(lo + hi + e + (e - 1) * it for e, (lo, hi, it) in zip(x.shape, cfg))
    if builtins.any(d <= 0 for d in out_shape):
        raise ShapeError(f"lax.pad: padding_config {cfg} gives shape {out_shape} from {_shape_str(x.shape)} (quabla arrays have positive extents)")
    if x.ndim == 0:
        return x
    lo = tuple(builtins.max(t[0], 0) for t in cfg)
    hi = tuple(builtins.max(t[1], 0) for t in cfg)
    if builtins.any(lo) or builtins.any(hi) or builtins.any(t[2] for t in cfg):
        x = bind(_op("pad", edge_padding_low=lo, edge_padding_high=hi, interior_padding=tuple(t[2] for t in cfg)), x, v)
    if builtins.any(t[0] < 0 or t[1] < 0 for t in cfg):
        start = tuple(-builtins.min(t[0], 0) for t in cfg)
        limit = tuple(e + builtins.min(t[1], 0) for e, t in zip(x.shape, cfg))
        x = bind(_op("slice", start_indices=start, limit_indices=limit, strides=(1,) * x.ndim), x)
    return x


# ---------------------------------------------------------------------------------------------
# Slicing


def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001 - jax.lax's name
    """The static slice ``[start:limit:stride]`` of every dimension (``jax.lax.slice``): the
    indices are non-negative and within the extents.

    Example:
        >>> qb.lax.slice(qb.arange(10), (1,), (8,), (3,)).tolist()
        [1, 4, 7]
    """
    x = _to_array(operand)
    nd = x.ndim
    s = _ints_arg("lax.slice", "start_indices", start_indices) if len(tuple(start_indices)) else ()
    lim = _ints_arg("lax.slice", "limit_indices", limit_indices) if len(tuple(limit_indices)) else ()
    st = (1,) * nd if strides is None else (_ints_arg("lax.slice", "strides", strides) if len(tuple(strides)) else ())
    if len(s) != nd or len(lim) != nd or len(st) != nd:
        raise ShapeError(f"lax.slice: start_indices {s}, limit_indices {lim} and strides {st} need one entry per dimension of shape {_shape_str(x.shape)}")
    for a, b, c, e in zip(s, lim, st, x.shape):
        if not (0 <= a < b <= e) or c < 1:
            raise ShapeError(
                f"lax.slice: start_indices {s}, limit_indices {lim}, strides {st} must satisfy 0 <= start < limit <= extent "
                f"and stride >= 1 for shape {_shape_str(x.shape)} (quabla arrays have positive extents)"
            )
    if nd == 0 or (s == (0,) * nd and lim == x.shape and st == (1,) * nd):
        return x
    return bind(_op("slice", start_indices=s, limit_indices=lim, strides=st), x)


def _in_dim(name, x, axis):
    return _axis(name, axis, x.ndim, x.shape)


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """:func:`slice` along one ``axis`` (``jax.lax.slice_in_dim``): ``None`` is the start or the
    end, a negative index counts from the end.

    Example:
        >>> qb.lax.slice_in_dim(qb.arange(6), -4, None, 2).tolist()
        [2, 4]
    """
    x = _to_array(operand)
    a = _in_dim("slice_in_dim", x, axis)
    e = x.shape[a]
    lo = 0 if start_index is None else _int_arg("lax.slice_in_dim", "start_index", start_index)
    hi = e if limit_index is None else _int_arg("lax.slice_in_dim", "limit_index", limit_index)
    lo, hi = (lo + e if lo < 0 else lo), (hi + e if hi < 0 else hi)
    starts, limits, strides = [0] * x.ndim, list(x.shape), [1] * x.ndim
    starts[a], limits[a], strides[a] = lo, hi, _int_arg("lax.slice_in_dim", "stride", stride)
    return slice(x, starts, limits, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    """The entry ``index`` (static; negative counts from the end) along ``axis``
    (``jax.lax.index_in_dim``), keeping that dimension with extent 1 unless ``keepdims=False``.

    Example:
        >>> qb.lax.index_in_dim(qb.array([[1, 2], [3, 4]]), -1, 0, False).tolist()
        [3, 4]
    """
    x = _to_array(operand)
    a = _in_dim("index_in_dim", x, axis)
    i = _int_arg("lax.index_in_dim", "index", index)
    e = x.shape[a]
    if not -e <= i < e:
        raise ShapeError(f"lax.index_in_dim: index {i} is out of bounds for axis {a} of shape {_shape_str(x.shape)}")
    i = i + e if i < 0 else i
    r = slice_in_dim(x, i, i + 1, 1, a)
    return r if keepdims else squeeze(r, (a,))


def _starts_in_dim(x, a, start):
    s = _to_array(start) if not isinstance(start, (int, np.integer)) else start
    zero = 0 if isinstance(s, (int, np.integer)) else _to_array(0, s.dtype)
    starts = [zero] * x.ndim
    starts[a] = s
    return starts


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0, *, allow_negative_indices=True):
    """:func:`dynamic_slice` along one ``axis`` (``jax.lax.dynamic_slice_in_dim``).

    Example:
        >>> qb.lax.dynamic_slice_in_dim(qb.arange(6), qb.array(2), 3).tolist()
        [2, 3, 4]
    """
    x = _to_array(operand)
    a = _in_dim("dynamic_slice_in_dim", x, axis)
    sizes = list(x.shape)
    sizes[a] = _int_arg("lax.dynamic_slice_in_dim", "slice_size", slice_size)
    return dynamic_slice(x, _starts_in_dim(x, a, start_index), sizes, allow_negative_indices=allow_negative_indices)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *, allow_negative_indices=True):
    """The entry ``index`` (may be traced) along ``axis`` (``jax.lax.dynamic_index_in_dim``).

    Example:
        >>> qb.lax.dynamic_index_in_dim(qb.array([[1, 2], [3, 4]]), qb.array(1), 1, False).tolist()
        [2, 4]
    """
    x = _to_array(operand)
    a = _in_dim("dynamic_index_in_dim", x, axis)
    r = dynamic_slice_in_dim(x, index, 1, a, allow_negative_indices=allow_negative_indices)
    return r if keepdims else squeeze(r, (a,))


def dynamic_update_slice_in_dim(operand, update, start_index, axis, *, allow_negative_indices=True):
    """:func:`dynamic_update_slice` along one ``axis`` (``jax.lax.dynamic_update_slice_in_dim``).

    Example:
        >>> qb.lax.dynamic_update_slice_in_dim(qb.zeros(4, dtype=qb.int64), qb.array([7, 8]), 1, 0).tolist()
        [0, 7, 8, 0]
    """
    x = _to_array(operand)
    a = _in_dim("dynamic_update_slice_in_dim", x, axis)
    return dynamic_update_slice(x, update, _starts_in_dim(x, a, start_index), allow_negative_indices=allow_negative_indices)


def dynamic_update_index_in_dim(operand, update, index, axis, *, allow_negative_indices=True):
    """``operand`` with entry ``index`` along ``axis`` replaced by ``update`` (with or without
    that dimension) (``jax.lax.dynamic_update_index_in_dim``).

    Example:
        >>> qb.lax.dynamic_update_index_in_dim(qb.zeros((2, 2)), qb.array([1.0, 2.0]), 1, 0).tolist()
        [[0.0, 0.0], [1.0, 2.0]]
    """
    x = _to_array(operand)
    a = _in_dim("dynamic_update_index_in_dim", x, axis)
    u = _to_array(update)
    if u.ndim == x.ndim - 1:
        u = expand_dims(u, (a,))
    return dynamic_update_slice_in_dim(x, u, index, a, allow_negative_indices=allow_negative_indices)


# ---------------------------------------------------------------------------------------------
# Products


def _dims(name, v, nd, shape, what):
    v = (v,) if isinstance(v, (int, np.integer)) else tuple(v)
    ds = _ints_arg(f"lax.{name}", what, v) if v else ()
    out = tuple(_axis(name, d, nd, shape) for d in ds)
    if len(set(out)) != len(out):
        raise ShapeError(f"lax.{name}: repeated dimension in {what} {ds}")
    return out


def _product_operands(name, lhs, rhs, preferred_element_type):
    a, b = _to_array(lhs), _to_array(rhs)
    if preferred_element_type is not None:
        d = _dtype_arg(name, preferred_element_type)
        a, b = astype(a, d), astype(b, d)
    elif a.dtype is not b.dtype:
        raise DTypeError(f"lax.{name}: lhs and rhs must have the same dtype (or pass preferred_element_type), got {a.dtype.name}{list(a.shape)} and {b.dtype.name}{list(b.shape)}")
    if a.dtype.is_bool:
        raise DTypeError(f"lax.{name}: bool operands are not supported; pass preferred_element_type")
    return a, b


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None, *, out_sharding=None):
    """General tensor contraction (``jax.lax.dot_general``): ``dimension_numbers`` is
    ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``; the result's dims are
    the batch dims, then lhs's free dims, then rhs's. ``precision`` is accepted and ignored;
    ``preferred_element_type`` converts the operands first (differing dtypes need it).

    Example:
        >>> qb.lax.dot_general(qb.ones((2, 3, 4)), qb.ones((2, 4, 5)), (((2,), (1,)), ((0,), (0,)))).shape
        (2, 3, 5)
    """
    a, b = _product_operands("dot_general", lhs, rhs, preferred_element_type)
    try:
        (lc, rc), (lb, rb) = dimension_numbers
    except (TypeError, ValueError):
        raise ArgumentTypeError(f"lax.dot_general: dimension_numbers must be ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)), got {dimension_numbers!r}") from None
    lc, lb = _dims("dot_general", lc, a.ndim, a.shape, "lhs contracting dims"), _dims("dot_general", lb, a.ndim, a.shape, "lhs batch dims")
    rc, rb = _dims("dot_general", rc, b.ndim, b.shape, "rhs contracting dims"), _dims("dot_general", rb, b.ndim, b.shape, "rhs batch dims")
    if (len(lc) != len(rc) or len(lb) != len(rb) or set(lc) & set(lb) or set(rc) & set(rb)
            or builtins.any(a.shape[i] != b.shape[j] for i, j in zip(lc + lb, rc + rb))):
        raise ShapeError(
            f"lax.dot_general: dimension_numbers {dimension_numbers} do not fit lhs {_shape_str(a.shape)} and rhs {_shape_str(b.shape)} "
            "(contracting and batch dims pair up with equal extents)"
        )
    return _o._dot_general(a, b, lb, rb, lc, rc)


def dot(lhs, rhs, *, dimension_numbers=None, precision=None, preferred_element_type=None, out_sharding=None):
    """Vector/matrix products (``jax.lax.dot``): without ``dimension_numbers`` the operands are
    1-D or 2-D and lhs's last dim contracts with rhs's first; with them, :func:`dot_general`.

    Example:
        >>> qb.lax.dot(qb.array([[1.0, 2.0]]), qb.array([3.0, 4.0])).tolist()
        [11.0]
    """
    a, b = _to_array(lhs), _to_array(rhs)
    if dimension_numbers is None:
        if not (1 <= a.ndim <= 2 and 1 <= b.ndim <= 2 and a.shape[-1] == b.shape[0]):
            raise ShapeError(f"lax.dot: without dimension_numbers the operands must be 1-D or 2-D with lhs.shape[-1] == rhs.shape[0], got {_shape_str(a.shape)} and {_shape_str(b.shape)}")
        dimension_numbers = (((a.ndim - 1,), (0,)), ((), ()))
    return dot_general(a, b, dimension_numbers, precision, preferred_element_type)


def batch_matmul(lhs, rhs, precision=None):
    """Batched matrix product (``jax.lax.batch_matmul``): the operands have equal leading
    (batch) dims and are matrices in the last two.

    Example:
        >>> qb.lax.batch_matmul(qb.ones((5, 2, 3)), qb.ones((5, 3, 4))).shape
        (5, 2, 4)
    """
    a, b = _to_array(lhs), _to_array(rhs)
    if a.ndim < 2 or a.ndim != b.ndim or a.shape[:-2] != b.shape[:-2]:
        raise ShapeError(f"lax.batch_matmul: operands must have rank >= 2 and equal batch dims, got {_shape_str(a.shape)} and {_shape_str(b.shape)}")
    nb = a.ndim - 2
    return dot_general(a, b, (((a.ndim - 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))), precision)


# ---------------------------------------------------------------------------------------------
# Reductions


def _axes(name, x, axes):
    return tuple(sorted(_dims(name, axes, x.ndim, x.shape, "axes")))


def _reducer(name, opname, kinds, summary, example, out):
    def f(operand, axes):
        x = _arg(name, operand, kinds)
        ax = _axes(name, x, axes)
        return bind(_op(opname, dims=ax), x) if ax and x.ndim else x

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""{summary} over ``axes`` (``jax.lax.{name}``; the dtype is kept).

    Example:
        >>> {example}
        {out}
    """
    return f


reduce_sum = _reducer("reduce_sum", "reduce_sum", "fiu", "Sum", "qb.lax.reduce_sum(qb.array([[1, 2], [3, 4]], dtype=qb.int32), (0,)).tolist()", "[4, 6]")
reduce_prod = _reducer("reduce_prod", "reduce_prod", "fiu", "Product", "qb.lax.reduce_prod(qb.array([[1, 2], [3, 4]]), (1,)).tolist()", "[2, 12]")
reduce_max = _reducer("reduce_max", "reduce_max", "fiub", "Maximum", "qb.lax.reduce_max(qb.array([[1, 2], [3, 0]]), (1,)).tolist()", "[2, 3]")
reduce_min = _reducer("reduce_min", "reduce_min", "fiub", "Minimum", "qb.lax.reduce_min(qb.array([[1, 2], [3, 0]]), (1,)).tolist()", "[1, 0]")


def _tree_reduce(comb, xs, axes):
    """``comb`` (acting elementwise on pytrees of arrays, here lists) folded over ``axes`` as
    a tree of pairwise applications: the axes go last and merge, then halves combine."""
    x0 = xs[0]
    keep = [i for i in range(x0.ndim) if i not in axes]
    n = math.prod(x0.shape[i] for i in axes)
    out_shape = tuple(x0.shape[i] for i in keep)
    xs = [_o.reshape(_o.transpose(x, keep + list(axes)) if keep + list(axes) != list(range(x.ndim)) else x, out_shape + (n,)) for x in xs]
    last = len(out_shape)
    while n > 1:
        h = n // 2
        a = [_o._slice_axis(x, last, 0, h, 1) for x in xs]
        b = [_o._slice_axis(x, last, h, 2 * h, 1) for x in xs]
        c = comb(a, b)
        if n % 2:
            c = [_o.concatenate([ci, _o._slice_axis(x, last, 2 * h, n, 1)], axis=last) for ci, x in zip(c, xs)]
        xs, n = c, n - h
    return [_o.reshape(x, out_shape) for x in xs]


def _bitwise_reducer(name, opname, all_any):
    def f(operand, axes):
        x = _arg(name, operand, "iub")
        ax = _axes(name, x, axes)
        if not ax or x.ndim == 0:
            return x
        if x.dtype.is_bool and all_any is not None:
            return all_any(x, axis=ax)
        op = _op(opname)
        return _tree_reduce(lambda a, b: [bind(op, a[0], b[0])], [x], ax)[0]

    return f


def reduce_and(operand, axes):
    """Bitwise and over ``axes`` (``jax.lax.reduce_and``; ``all`` for bools).

    Example:
        >>> qb.lax.reduce_and(qb.array([[True, False], [True, True]]), (1,)).tolist()
        [False, True]
    """
    return _bitwise_reducer("reduce_and", "and", _o.all)(operand, axes)


def reduce_or(operand, axes):
    """Bitwise or over ``axes`` (``jax.lax.reduce_or``; ``any`` for bools).

    Example:
        >>> qb.lax.reduce_or(qb.array([[1, 2], [4, 0]]), (1,)).tolist()
        [3, 4]
    """
    return _bitwise_reducer("reduce_or", "or", _o.any)(operand, axes)


def reduce_xor(operand, axes):
    """Bitwise xor over ``axes`` (``jax.lax.reduce_xor``), a tree of pairwise xors.

    Example:
        >>> qb.lax.reduce_xor(qb.array([[1, 3], [4, 4]]), (1,)).tolist()
        [2, 0]
    """
    return _bitwise_reducer("reduce_xor", "xor", None)(operand, axes)


_MONOIDS = {}  # filled below: computation -> (reducer, identity(dtype) or None)


def _identity(kind, d):
    if kind == "add" or kind == "or" or kind == "xor":
        return 0
    if kind == "mul":
        return 1
    if kind == "and":
        return True if d.is_bool else (-1 if d.is_signed_int else int(_dt.iinfo(d).max))
    if kind == "max":
        return -math.inf if d.is_float else (False if d.is_bool else int(_dt.iinfo(d).min))
    return math.inf if d.is_float else (True if d.is_bool else int(_dt.iinfo(d).max))


def reduce(operands, init_values, computation, dimensions, out_sharding=None):
    """Reduces ``operands`` (an array or a pytree of arrays of one shape) over ``dimensions``
    with ``computation`` from ``init_values`` (``jax.lax.reduce``).

    ``lax.add``/``mul``/``max``/``min``/``bitwise_*`` (and ``qb.add``, ``qb.maximum``...)
    with their identity as the initial value are the reduction ops; any other
    ``computation(x, y)`` (pytrees like ``init_values``, acting elementwise on arrays, and
    associative as JAX requires) is applied as a tree of pairwise combinations over the
    reduced elements (about log2(n) applications), then once with the initial values.

    Example:
        >>> qb.lax.reduce(qb.array([[1.0, 2.0], [3.0, 4.0]]), 0.0, qb.lax.add, (0,)).tolist()
        [4.0, 6.0]
        >>> qb.lax.reduce(qb.array([1.0, -5.0, 3.0]), 0.0, lambda a, b: qb.lax.max(qb.lax.abs(a), qb.lax.abs(b)), (0,)).item()
        5.0
    """
    xs, td = _tree.flatten(operands)
    inits, itd = _tree.flatten(init_values)
    if len(xs) != len(inits) or not xs:
        raise ShapeError(f"lax.reduce: operands and init_values must have the same number of leaves, got {len(xs)} and {len(inits)}")
    xs = [_to_array(x) for x in xs]
    shape = xs[0].shape
    if builtins.any(x.shape != shape for x in xs):
        raise ShapeError("lax.reduce: operands must have one shape, got " + ", ".join(_shape_str(x.shape) for x in xs))
    inits = [_weak_like("reduce", v, _to_array(0, x.dtype)) if _is_scalar(v) else _to_array(v) for v, x in zip(inits, xs)]
    for v, x in zip(inits, xs):
        if v.ndim or v.dtype is not x.dtype:
            raise DTypeError(f"lax.reduce: each init value must be a scalar of its operand's dtype {x.dtype.name}, got {v.dtype.name}{list(v.shape)}")
    dims = _axes("reduce", xs[0], dimensions)
    mono = _MONOIDS.get(computation) if len(xs) == 1 else None
    if mono is not None:
        kind, red = mono
        v = inits[0]
        ident = _identity(kind, v.dtype)
        if type(v) is not _o.Tensor or v.item() != ident or (kind in ("and", "or", "xor") and v.dtype.is_float):
            mono = None
        else:
            return _tree.unflatten(td, [red(xs[0], dims)])
    if not dims:
        rs = xs
    else:
        def comb(a, b):
            r = computation(_tree.unflatten(itd, a), _tree.unflatten(itd, b))
            return [_to_array(t) for t in _tree.leaves(r)]

        rs = _tree_reduce(comb, xs, dims)
    outs = computation(_tree.unflatten(itd, inits), _tree.unflatten(itd, rs))
    return _tree.unflatten(td, [_to_array(t) for t in _tree.leaves(outs)])


def _argext(name, qbfn):
    def f(operand, axis, index_dtype):
        x = _arg(name, operand)
        a = _axis(name, axis, x.ndim, x.shape)
        d = _dtype_arg(name, index_dtype)
        if not d.is_int:
            raise DTypeError(f"lax.{name}: index_dtype must be an integer dtype, got {d.name}")
        return astype(qbfn(x, axis=a), d)

    return f


def argmax(operand, axis, index_dtype):
    """The index of the largest entry along ``axis``, as ``index_dtype`` (``jax.lax.argmax``;
    the first of ties, a NaN counts as largest).

    Example:
        >>> qb.lax.argmax(qb.array([1.0, 3.0, 2.0]), 0, qb.int32).item()
        1
    """
    return _argext("argmax", _o.argmax)(operand, axis, index_dtype)


def argmin(operand, axis, index_dtype):
    """The index of the smallest entry along ``axis``, as ``index_dtype`` (``jax.lax.argmin``;
    the first of ties, a NaN counts as smallest).

    Example:
        >>> qb.lax.argmin(qb.array([1.0, 3.0, 0.0]), 0, qb.int32).item()
        2
    """
    return _argext("argmin", _o.argmin)(operand, axis, index_dtype)


def cumsum(operand, axis=0, reverse=False):
    """Cumulative sum along ``axis`` (``jax.lax.cumsum``: the dtype is kept; ``reverse`` sums
    from the end).

    Example:
        >>> qb.lax.cumsum(qb.array([1, 2, 3]), reverse=True).tolist()
        [6, 5, 3]
    """
    x = _arg("cumsum", operand, "fiu")
    return _cumsum(x, _axis("cumsum", axis, x.ndim, x.shape), dtype=x.dtype, reverse=reverse)


def cumprod(operand, axis=0, reverse=False):
    """Cumulative product along ``axis`` (``jax.lax.cumprod``: the dtype is kept).

    Example:
        >>> qb.lax.cumprod(qb.array([1.0, 2.0, 3.0])).tolist()
        [1.0, 2.0, 6.0]
    """
    x = _arg("cumprod", operand, "fiu")
    return _cumprod(x, _axis("cumprod", axis, x.ndim, x.shape), dtype=x.dtype, reverse=reverse)


# ---------------------------------------------------------------------------------------------
# Sorting


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """Sorts along ``dimension`` (``jax.lax.sort``): an array, or a tuple/list of arrays of
    one shape sorted together by the first ``num_keys`` of them (lexicographically), each
    operand permuted alike. Sorts are always stable here.

    Differs from JAX in the order of signed zeros: ``-0.0`` and ``0.0`` are equal keys
    (JAX puts ``-0.0`` first); NaNs go last, as in JAX.

    Example:
        >>> qb.lax.sort(qb.array([3.0, 1.0, 2.0])).tolist()
        [1.0, 2.0, 3.0]
        >>> k, v = qb.lax.sort((qb.array([2, 1, 2]), qb.array([10.0, 20.0, 30.0])), num_keys=1)
        >>> v.tolist()
        [20.0, 10.0, 30.0]
    """
    single = not isinstance(operand, (tuple, list))
    xs = [_to_array(operand)] if single else [_to_array(x) for x in operand]
    if not xs:
        raise InvalidArgumentError("lax.sort: needs at least one operand")
    shape = xs[0].shape
    if builtins.any(x.shape != shape for x in xs):
        raise ShapeError("lax.sort: operands must have one shape, got " + ", ".join(_shape_str(x.shape) for x in xs))
    k = _int_arg("lax.sort", "num_keys", num_keys)
    if not 1 <= k <= len(xs):
        raise InvalidArgumentError(f"lax.sort: num_keys must be between 1 and the number of operands {len(xs)}, got {k}")
    if not shape:
        return xs[0] if single else tuple(xs)
    d = _axis("sort", dimension, len(shape), shape)
    if single:
        return _npsort(xs[0], axis=d)
    # The first key is the primary one: lexsort's last.
    perm = _lexsort(xs[k - 1::-1], axis=d)
    return tuple(_take_along_axis(x, perm, axis=d) for x in xs)


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """``keys`` sorted along ``dimension`` and ``values`` permuted alike
    (``jax.lax.sort_key_val``).

    Example:
        >>> k, v = qb.lax.sort_key_val(qb.array([3, 1, 2]), qb.array([30.0, 10.0, 20.0]))
        >>> v.tolist()
        [10.0, 20.0, 30.0]
    """
    return sort((keys, values), dimension, is_stable, 1)


def top_k(operand, k, *, axis=-1):
    """The ``k`` largest entries along ``axis`` in descending order and their int32 indices
    (``jax.lax.top_k``; ties: the lower index first).

    Example:
        >>> v, i = qb.lax.top_k(qb.array([1.0, 3.0, 2.0]), 2)
        >>> v.tolist(), i.tolist()
        ([3.0, 2.0], [1, 2])
    """
    x = _to_array(operand)
    if x.ndim == 0:
        raise ShapeError("lax.top_k: operand must have rank >= 1, got a scalar")
    a = _axis("top_k", axis, x.ndim, x.shape)
    last = x.ndim - 1
    if a != last:
        x = _o.swapaxes(x, a, last)
    v, i = _top_k(x, k)
    i = astype(i, _dt.int32)
    if a != last:
        v, i = _o.swapaxes(v, a, last), _o.swapaxes(i, a, last)
    return v, i


# ---------------------------------------------------------------------------------------------
# Control flow, windows


def map(f, xs, *, batch_size=None):  # noqa: A001 - jax.lax's name
    """``f`` applied to each slice of the pytree ``xs`` along its leading axis, results
    stacked (``jax.lax.map``): a :func:`scan`; with ``batch_size``, ``qb.vmap(f)`` over batches
    of that many slices (the remainder in one more ``vmap``).

    Example:
        >>> qb.lax.map(lambda x: x * 2.0, qb.array([1.0, 2.0])).tolist()
        [2.0, 4.0]
    """
    leaves = _tree.leaves(xs)
    if not leaves:
        raise InvalidArgumentError("lax.map: xs must have at least one array leaf")
    n = _to_array(leaves[0]).shape[0] if _to_array(leaves[0]).ndim else None
    if n is None or builtins.any(_to_array(v).ndim == 0 or _to_array(v).shape[0] != n for v in leaves):
        raise ShapeError("lax.map: every leaf of xs needs the same leading extent, got shapes " + ", ".join(_shape_str(_to_array(v).shape) for v in leaves))
    if batch_size is None:
        return scan(lambda c, x: (c, f(x)), None, xs)[1]
    from ._transforms import vmap

    b = _int_arg("lax.map", "batch_size", batch_size)
    if b <= 0:
        raise InvalidArgumentError(f"lax.map: batch_size must be positive, got {b}")
    nb, rem = divmod(n, b)
    vf = vmap(f)
    parts = []
    if nb:
        head = _tree.map(lambda v: _o.reshape(_o._slice_axis(_to_array(v), 0, 0, nb * b, 1), (nb, b) + _to_array(v).shape[1:]), xs)
        ys = scan(lambda c, x: (c, vf(x)), None, head)[1]
        parts.append(_tree.map(lambda y: _o.reshape(y, (nb * b,) + y.shape[2:]), ys))
    if rem:
        parts.append(vf(_tree.map(lambda v: _o._slice_axis(_to_array(v), 0, nb * b, n, 1), xs)))
    if len(parts) == 1:
        return parts[0]
    return _tree.map(lambda p, q: _o.concatenate([p, q], axis=0), parts[0], parts[1])


def optimization_barrier(operand, /):
    """Returns ``operand`` (a pytree) unchanged (``jax.lax.optimization_barrier``; Quabla has no
    barrier op, so nothing stops the compiler from moving work across it).

    Example:
        >>> qb.lax.optimization_barrier((qb.array(1.0), 2))[1]
        2
    """
    return operand


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, precision=None, preferred_element_type=None):
    """:func:`conv_general_dilated` with NCH.../OIH... layouts (``jax.lax.conv_with_general_padding``).

    Example:
        >>> qb.lax.conv_with_general_padding(qb.ones((1, 1, 5)), qb.ones((1, 1, 3)), (1,), [(1, 1)], None, None).tolist()
        [[[2.0, 3.0, 3.0, 3.0, 2.0]]]
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                precision=precision, preferred_element_type=preferred_element_type)


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None, padding="VALID", base_dilation=None, window_dilation=None):
    """Windowed reduction (``jax.lax.reduce_window``) for the add, max, min and multiply
    monoids: ``computation`` is ``lax.add``/``max``/``min``/``mul`` (or ``qb.add``,
    ``qb.maximum``...) and ``init_value`` its identity; ``window_strides`` default to 1.

    Example:
        >>> qb.lax.reduce_window(qb.arange(5.0), 0.0, qb.lax.add, (2,)).tolist()
        [1.0, 3.0, 5.0, 7.0]
    """
    x = _to_array(operand)
    comp = _WINDOW_WORDS.get(computation, computation) if not is_array(computation) else computation
    if window_strides is None:
        window_strides = (1,) * x.ndim
    return _reduce_window(x, init_value, comp, window_dimensions, window_strides, padding, base_dilation, window_dilation)


_MONOIDS.update({
    add: ("add", reduce_sum), _o.add: ("add", reduce_sum),  # noqa: F821
    mul: ("mul", reduce_prod), _o.multiply: ("mul", reduce_prod),  # noqa: F821
    max: ("max", reduce_max), _o.maximum: ("max", reduce_max),  # noqa: F821
    min: ("min", reduce_min), _o.minimum: ("min", reduce_min),  # noqa: F821
    bitwise_and: ("and", reduce_and), bitwise_or: ("or", reduce_or), bitwise_xor: ("xor", reduce_xor),  # noqa: F821
})
_WINDOW_WORDS = {add: "add", mul: "mul", max: "max", min: "min"}  # noqa: F821

