"""``qb.lax``: ``jax.lax``'s names over Quabla's ops, so ``from quabla import lax`` runs the
``lax`` calls of existing JAX programs.

The functions keep ``jax.lax``'s signatures and its stricter rules: the array operands of an
elementwise function share one dtype (a mismatch is a DTypeError, where ``jax.numpy`` would
promote), each function accepts the dtypes ``jax.lax`` accepts (``lax.sin`` of an integer
array is a DTypeError), and operands have equal shapes, a rank-0 operand broadcasting
(``lax.add(x, 1.0)``). Where JAX turns a Python scalar into an int64/float64 array and then
rejects the mix (``lax.add(float32_array, 2.0)``), Quabla lets the scalar take the array's
dtype. The control flow (``scan``, ``cond``, ``while_loop``...) is Quabla's own and the
convolutions are those of the top-level package. ``gather`` and the ``scatter*`` family take
XLA's dimension numbers (batching dims included) and lower to one take-along-axis gather or
scatter of the flattened operand, so they differentiate and batch as ``x.at[...]`` does.

The collectives (``psum``, ``pmean``, ``pmax``, ``pmin``, ``all_gather``, ``axis_index``,
``axis_size``, ``psum_scatter``, ``ppermute``, ``pshuffle``, ``all_to_all``) work over the
named axes of ``qb.vmap(..., axis_name=...)`` and ``qb.pmap`` (quabla/_collective.py).
``qb.lax.linalg`` is ``jax.lax.linalg`` (quabla/_lax_linalg.py: its signatures and return
conventions, e.g. ``eigh`` returning ``(v, w)``); ``import quabla.lax.linalg`` works too.

Not provided: complex numbers (``complex``,
``conj``, ``real``, ``imag``, ``fft``), ``bitcast_convert_type``, ``rng_bit_generator``,
``ragged_dot*``, ``composite``, tokens (``create_token``, ``after_all``) and the dot
algorithm presets.
"""

import builtins
import enum
import math
import typing

import numpy as np

from . import _ops as _o
from . import dtypes as _dt
from . import random as _random
from .scipy import special as _special
from . import tree as _tree
from ._bits import population_count as _popcount
from ._bits import shift_left as _shl
from ._bits import shift_right_arithmetic as _sra
from ._bits import shift_right_logical as _srl
from ._custom import custom_jvp as _custom_jvp
from ._math import _scale2
from ._math import frexp as _frexp
from ._control import associative_scan, cond, fori_loop, scan, stop_gradient, switch, while_loop
from ._solvers import custom_linear_solve, custom_root
from ._collective import all_gather, all_to_all, axis_index, axis_size, pmax, pmean, pmin, ppermute, pshuffle, psum, psum_scatter
from ._conv import conv, conv_general_dilated, conv_transpose, cumlogsumexp, cummax, cummin
from ._conv import cumprod as _cumprod
from ._conv import cumsum as _cumsum
from ._conv import _pads as _conv_pads
from ._conv import _specs as _conv_specs
from ._conv import _transpose_pads as _conv_transpose_pads
from ._conv import reduce_window as _reduce_window
from . import _lax_linalg as linalg
from ._indexing import _fill_value as _gather_fill_value
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
    # collectives over named vmap axes
    "psum", "pmean", "pmax", "pmin", "all_gather", "axis_index", "axis_size", "psum_scatter", "ppermute", "pshuffle",
    "all_to_all",
    "custom_linear_solve",
    "custom_root",
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
    "ConvDimensionNumbers", "conv_dimension_numbers", "conv_general_permutations", "conv_general_shape_tuple",
    "conv_shape_tuple", "conv_transpose_shape_tuple", "reduce_window_shape_tuple", "padtype_to_pads",
    "conv_general_dilated_patches", "conv_general_dilated_local",
    # gather and scatter
    "GatherScatterMode", "GatherDimensionNumbers", "ScatterDimensionNumbers", "gather", "scatter", "scatter_add",
    "scatter_sub", "scatter_mul", "scatter_min", "scatter_max", "scatter_apply", "index_take",
    # shapes, dtypes, placement, randomness
    "broadcast_shapes", "broadcast_like", "dtype", "empty", "stack", "unstack", "platform_dependent",
    "with_sharding_constraint", "rng_uniform", "approx_max_k", "approx_min_k",
    # bits and special functions
    "reduce_precision", "nextafter", "mulhi", "igamma", "igammac", "igamma_grad_a", "random_gamma_grad", "polygamma",
    "zeta", "betainc", "bessel_i0e", "bessel_i1e",
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



# ---------------------------------------------------------------------------------------------
# Gather and scatter with XLA dimension numbers
#
# Both are lowered onto Quabla's take-along-axis ops: the flat position in the operand of every
# element of the output (gather) or of the updates (scatter) is computed from the start
# indices and iotas of the window offsets, and one `gather {axis=0}` / take-form `scatter*` of
# the flattened operand does the work. Their derivative and batching rules are those of the
# take form (the gather's VJP a scatter-add, the scatter-add's a gather...).


class GatherScatterMode(enum.Enum):
    """How :func:`gather` and the scatters treat out-of-bounds indices
    (``jax.lax.GatherScatterMode``): ``CLIP`` clamps each start index so that its whole window
    is in bounds; ``FILL_OR_DROP`` gives ``fill_value`` for a gathered window with any element
    out of bounds and drops a scattered one; ``PROMISE_IN_BOUNDS`` clamps gathers and drops
    scatters (what XLA does). ``ONE_HOT`` exists for JAX's enum's sake; gathers and scatters
    reject it, as JAX's do.

    Example:
        >>> qb.lax.GatherScatterMode.from_any("clip").name
        'CLIP'
    """

    CLIP = 1
    FILL_OR_DROP = 2
    PROMISE_IN_BOUNDS = 3
    ONE_HOT = 4

    @staticmethod
    def from_any(s):
        """The mode named by ``s``: a mode, ``"clip"``, ``"fill"``/``"drop"``/None
        (``FILL_OR_DROP``), ``"promise_in_bounds"`` or ``"one_hot"``.

        Args:
            s: a ``GatherScatterMode``, a mode string or None.

        Returns:
            The ``GatherScatterMode``; an InvalidArgumentError for anything else.

        Example:
            >>> qb.lax.GatherScatterMode.from_any(None).name
            'FILL_OR_DROP'
        """
        if isinstance(s, GatherScatterMode):
            return s
        if s is None or (isinstance(s, str) and s in ("fill", "drop")):
            return GatherScatterMode.FILL_OR_DROP
        if isinstance(s, str) and s in _MODE_WORDS:
            return _MODE_WORDS[s]
        raise InvalidArgumentError(f"lax.GatherScatterMode: unknown gather/scatter mode {s!r} (use 'clip', 'fill', 'drop', 'promise_in_bounds' or a GatherScatterMode)")


_MODE_WORDS = {"clip": GatherScatterMode.CLIP, "promise_in_bounds": GatherScatterMode.PROMISE_IN_BOUNDS, "one_hot": GatherScatterMode.ONE_HOT}


class GatherDimensionNumbers(typing.NamedTuple):
    """The dimension numbers of :func:`gather` (``jax.lax.GatherDimensionNumbers``, XLA's):
    ``offset_dims`` (the output dims that walk a window), ``collapsed_slice_dims`` (operand
    dims of slice size 1 left out of the output), ``start_index_map`` (the operand dim of
    each entry of an index vector), ``operand_batching_dims`` and
    ``start_indices_batching_dims`` (operand dims paired with dims of the indices).

    Example:
        >>> qb.lax.GatherDimensionNumbers((1,), (0,), (0,)).offset_dims
        (1,)
    """

    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


class ScatterDimensionNumbers(typing.NamedTuple):
    """The dimension numbers of the scatters (``jax.lax.ScatterDimensionNumbers``, XLA's):
    ``update_window_dims`` (the dims of the updates that walk a window),
    ``inserted_window_dims`` (operand dims of window size 1 absent from the updates),
    ``scatter_dims_to_operand_dims`` (the operand dim of each entry of an index vector),
    ``operand_batching_dims`` and ``scatter_indices_batching_dims`` (operand dims paired
    with dims of the indices).

    Example:
        >>> qb.lax.ScatterDimensionNumbers((), (0,), (0,)).inserted_window_dims
        (0,)
    """

    update_window_dims: tuple
    inserted_window_dims: tuple
    scatter_dims_to_operand_dims: tuple
    operand_batching_dims: tuple = ()
    scatter_indices_batching_dims: tuple = ()


_GATHER_FIELDS = GatherDimensionNumbers._fields
_SCATTER_FIELDS = ScatterDimensionNumbers._fields


def _dnums(name, dn, fields):
    """The dimension numbers ``dn`` (a NamedTuple of ours or JAX's, or a plain tuple in the
    fields' order) as a dict of int tuples."""
    if dn is None or isinstance(dn, (str, bytes, dict)) or not hasattr(dn, "__len__"):
        raise ArgumentTypeError(f"lax.{name}: dimension_numbers must be a {name.split('_')[0].capitalize()}DimensionNumbers with fields {fields}, got {type(dn).__name__}")
    vals = [getattr(dn, f) for f in fields] if builtins.all(hasattr(dn, f) for f in fields) else list(dn)
    if not len(fields) - 2 <= len(vals) <= len(fields):
        raise ArgumentTypeError(f"lax.{name}: dimension_numbers needs the fields {fields}, got {dn!r}")
    vals += [()] * (len(fields) - len(vals))
    out = {}
    for f, v in zip(fields, vals):
        if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
            v = (v,)
        if v is None or isinstance(v, (str, bytes)) or not hasattr(v, "__len__"):
            raise ArgumentTypeError(f"lax.{name}: dimension_numbers.{f} must be a tuple of ints, got {v!r}")
        out[f] = _ints_arg(f"lax.{name}", f"dimension_numbers.{f}", tuple(v)) if len(v) else ()
    return out


def _mode(name, mode, default):
    m = default if mode is None else GatherScatterMode.from_any(mode)
    if m is GatherScatterMode.ONE_HOT:
        raise InvalidArgumentError(f"lax.{name}: mode ONE_HOT is not supported by gathers and scatters (as in JAX)")
    return m


def _index_operand(name, indices, what):
    i = _to_array(indices)
    if i.dtype.kind not in "iu":
        raise DTypeError(f"lax.{name}: {what} must have an integer dtype, got {i.dtype.name} of shape {_shape_str(i.shape)}")
    if i.ndim == 0:
        raise ShapeError(f"lax.{name}: {what} must have rank >= 1 (the last dim is the index vector), got a scalar")
    return astype(i, _dt.int64) if i.dtype is not _dt.int64 else i


def _check_dims(name, field, dims, n, *, ordered=False):
    if len(set(dims)) != len(dims) or builtins.any(not 0 <= d < n for d in dims) or (ordered and list(dims) != sorted(dims)):
        rule = "sorted, unique" if ordered else "unique"
        raise ShapeError(f"lax.{name}: dimension_numbers.{field} {dims} must be {rule} and in [0, {n})")


def _iota64(rank, dim, n):
    """int64 ``[0, n)`` along ``dim`` of a rank-``rank`` array, extent 1 elsewhere."""
    shape = [1] * rank
    shape[dim] = n
    return bind(_op("iota", dim=dim, ty=(tuple(shape), _dt.int64.code)))


def _component(idx, k):
    """Entry ``k`` of the index vectors (the last dim) of ``idx``: the batch shape."""
    q = idx.ndim
    c = _o._slice_axis(idx, q - 1, k, k + 1, 1) if idx.shape[-1] > 1 else idx
    return _o.reshape(c, idx.shape[:-1])


def _spread(t, batch_shape, batch_pos, rank):
    """``t`` (of ``batch_shape``) reshaped to rank ``rank``: its dims at ``batch_pos``, 1 elsewhere."""
    shape = [1] * rank
    for p, e in zip(batch_pos, batch_shape):
        shape[p] = e
    return _o.reshape(t, tuple(shape))


def _strides(shape):
    return [math.prod(shape[d + 1:]) for d in range(len(shape))]


def _flat_gather(xf, pos):
    if pos.ndim == 0:
        return _o.reshape(bind(_op("gather", axis=0), xf, _o.reshape(pos, (1,))), ())
    return bind(_op("gather", axis=0), xf, pos)


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False, indices_are_sorted=False, mode=None, fill_value=None):
    """XLA's gather (``jax.lax.gather``): slices of ``operand`` of extents ``slice_sizes`` at
    the start indices given by the last dim of ``start_indices``, laid out by
    ``dimension_numbers`` (a :class:`GatherDimensionNumbers`).

    Computed as one gather of the flattened operand at the flat position of every output
    element, so it differentiates (a scatter-add) and batches as Quabla's take does. Slice
    sizes of 0 are not supported (Quabla has no zero-size arrays).

    Args:
        operand: the array to slice.
        start_indices: an integer array whose last dim holds the index vectors.
        dimension_numbers: a :class:`GatherDimensionNumbers` (or JAX's).
        slice_sizes: one extent per operand dim (1 for the collapsed and batching dims).
        unique_indices: accepted and ignored.
        indices_are_sorted: accepted and ignored.
        mode: None or ``"promise_in_bounds"`` (the default: start indices clamped, as XLA),
            ``"clip"`` (clamped), ``"fill"`` (a window with any element out of bounds is
            ``fill_value``), or a :class:`GatherScatterMode`.
        fill_value: the value of out-of-bounds windows with ``mode="fill"``; default NaN for
            floats, the most negative value of signed ints, the largest of unsigned ones,
            True for bools.

    Returns:
        The gathered array (the operand's dtype): its dims are the indices' batch dims with
        the window dims placed at ``offset_dims``.

    Example:
        >>> dn = qb.lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
        >>> qb.lax.gather(qb.array([10, 11, 12]), qb.array([[2], [0]]), dn, (1,)).tolist()
        [12, 10]
    """
    name = "gather"
    x = _to_array(operand)
    idx = _index_operand(name, start_indices, "start_indices")
    dn = _dnums(name, dimension_numbers, _GATHER_FIELDS)
    m = _mode(name, mode, GatherScatterMode.PROMISE_IN_BOUNDS)
    r, q = x.ndim, idx.ndim
    if r == 0:
        raise ShapeError("lax.gather: operand must have rank >= 1, got a scalar")
    sizes = _shape_tuple("gather", "slice_sizes", slice_sizes)
    offset, collapsed, smap = dn["offset_dims"], dn["collapsed_slice_dims"], dn["start_index_map"]
    obatch, ibatch = dn["operand_batching_dims"], dn["start_indices_batching_dims"]
    out_rank = len(offset) + q - 1
    _check_dims(name, "offset_dims", offset, out_rank, ordered=True)
    _check_dims(name, "collapsed_slice_dims", collapsed, r, ordered=True)
    _check_dims(name, "operand_batching_dims", obatch, r, ordered=True)
    _check_dims(name, "start_index_map", smap, r)
    _check_dims(name, "start_indices_batching_dims", ibatch, q - 1)
    if set(collapsed) & set(obatch) or set(smap) & set(obatch):
        raise ShapeError(f"lax.gather: operand_batching_dims {obatch} must not be collapsed_slice_dims {collapsed} or in start_index_map {smap}")
    if len(offset) + len(collapsed) + len(obatch) != r:
        raise ShapeError(f"lax.gather: offset_dims {offset}, collapsed_slice_dims {collapsed} and operand_batching_dims {obatch} must account for the {r} dims of the operand {_shape_str(x.shape)}")
    if idx.shape[-1] != len(smap):
        raise ShapeError(f"lax.gather: the index vectors (last dim of start_indices {_shape_str(idx.shape)}) must have len(start_index_map) = {len(smap)} entries")
    if len(sizes) != r or builtins.any(not 1 <= s <= e for s, e in zip(sizes, x.shape)):
        raise ShapeError(f"lax.gather: slice_sizes {sizes} needs one extent in [1, extent] per dim of the operand {_shape_str(x.shape)}")
    if builtins.any(sizes[d] != 1 for d in collapsed + obatch):
        raise ShapeError(f"lax.gather: collapsed and batching dims {collapsed + obatch} need slice size 1, got slice_sizes {sizes}")
    if len(ibatch) != len(obatch) or builtins.any(x.shape[a] != idx.shape[b] for a, b in zip(obatch, ibatch)):
        raise ShapeError(f"lax.gather: operand_batching_dims {obatch} of {_shape_str(x.shape)} and start_indices_batching_dims {ibatch} of {_shape_str(idx.shape)} must pair up with equal extents")
    batch_shape = idx.shape[:-1]
    batch_pos = [i for i in range(out_rank) if i not in offset]
    windows = [d for d in range(r) if d not in collapsed and d not in obatch]
    out_shape = [0] * out_rank
    for p, e in zip(batch_pos, batch_shape):
        out_shape[p] = e
    for p, d in zip(offset, windows):
        out_shape[p] = sizes[d]
    out_shape = tuple(out_shape)
    strides = _strides(x.shape)
    pos, valid = None, None
    for d in range(r):
        term = None
        if d in smap:
            s = _component(idx, smap.index(d))
            hi = x.shape[d] - sizes[d]
            if m is GatherScatterMode.FILL_OR_DROP:
                ok = (s >= 0) & (s <= hi)
                valid = ok if valid is None else valid & ok
            s = _o.clip(s, 0, hi)
            term = _spread(s * strides[d], batch_shape, batch_pos, out_rank)
        elif d in obatch:
            j = ibatch[obatch.index(d)]
            term = _iota64(out_rank, batch_pos[j], batch_shape[j]) * strides[d]
        if d in windows:
            p = offset[windows.index(d)]
            t = _iota64(out_rank, p, sizes[d]) * strides[d]
            term = t if term is None else term + t
        if term is not None:
            pos = term if pos is None else pos + term
    if pos is None:
        pos = _to_array(0, _dt.int64)
    if pos.shape != out_shape:
        pos = _o.broadcast_to(pos, out_shape)
    g = _flat_gather(_o.reshape(x, (x.size,)), pos)
    if valid is not None:
        fv = full((), _gather_fill_value(x.dtype, fill_value), x.dtype)
        g = _o.where(_o.broadcast_to(_spread(valid, batch_shape, batch_pos, out_rank), out_shape), g, fv)
    return g


def _scatter_positions(name, x, idx, u, dn, m):
    """The flat position in ``x`` of every update element (-1 for a dropped window)."""
    r, q, ur = x.ndim, idx.ndim, u.ndim
    uwd, iwd, s2o = dn["update_window_dims"], dn["inserted_window_dims"], dn["scatter_dims_to_operand_dims"]
    obatch, ibatch = dn["operand_batching_dims"], dn["scatter_indices_batching_dims"]
    if r == 0:
        raise ShapeError(f"lax.{name}: operand must have rank >= 1, got a scalar")
    _check_dims(name, "update_window_dims", uwd, ur, ordered=True)
    _check_dims(name, "inserted_window_dims", iwd, r, ordered=True)
    _check_dims(name, "operand_batching_dims", obatch, r, ordered=True)
    _check_dims(name, "scatter_dims_to_operand_dims", s2o, r)
    _check_dims(name, "scatter_indices_batching_dims", ibatch, q - 1)
    if set(iwd) & set(obatch) or set(s2o) & set(obatch):
        raise ShapeError(f"lax.{name}: operand_batching_dims {obatch} must not be inserted_window_dims {iwd} or in scatter_dims_to_operand_dims {s2o}")
    if len(uwd) + len(iwd) + len(obatch) != r:
        raise ShapeError(f"lax.{name}: update_window_dims {uwd}, inserted_window_dims {iwd} and operand_batching_dims {obatch} must account for the {r} dims of the operand {_shape_str(x.shape)}")
    if idx.shape[-1] != len(s2o):
        raise ShapeError(f"lax.{name}: the index vectors (last dim of scatter_indices {_shape_str(idx.shape)}) must have len(scatter_dims_to_operand_dims) = {len(s2o)} entries")
    batch_shape = idx.shape[:-1]
    batch_pos = [i for i in range(ur) if i not in uwd]
    if tuple(u.shape[p] for p in batch_pos) != batch_shape:
        raise ShapeError(f"lax.{name}: the scatter dims of updates {_shape_str(u.shape)} (those not in update_window_dims {uwd}) must equal the batch dims {_shape_str(batch_shape)} of scatter_indices")
    windows = [d for d in range(r) if d not in iwd and d not in obatch]
    wsize = [1] * r
    for d, p in zip(windows, uwd):
        wsize[d] = u.shape[p]
        if wsize[d] > x.shape[d]:
            raise ShapeError(f"lax.{name}: update window dim {p} of updates {_shape_str(u.shape)} is larger than operand dim {d} of {_shape_str(x.shape)}")
    if len(ibatch) != len(obatch) or builtins.any(x.shape[a] != idx.shape[b] for a, b in zip(obatch, ibatch)):
        raise ShapeError(f"lax.{name}: operand_batching_dims {obatch} of {_shape_str(x.shape)} and scatter_indices_batching_dims {ibatch} of {_shape_str(idx.shape)} must pair up with equal extents")
    strides = _strides(x.shape)
    pos, valid = None, None
    for d in range(r):
        term = None
        if d in s2o:
            s = _component(idx, s2o.index(d))
            hi = x.shape[d] - wsize[d]
            if m is GatherScatterMode.CLIP:
                s = _o.clip(s, 0, hi)
            else:
                ok = (s >= 0) & (s <= hi)
                valid = ok if valid is None else valid & ok
            term = _spread(s * strides[d], batch_shape, batch_pos, ur)
        elif d in obatch:
            j = ibatch[obatch.index(d)]
            term = _iota64(ur, batch_pos[j], batch_shape[j]) * strides[d]
        if d in windows:
            p = uwd[windows.index(d)]
            t = _iota64(ur, p, wsize[d]) * strides[d]
            term = t if term is None else term + t
        if term is not None:
            pos = term if pos is None else pos + term
    if pos is None:
        pos = _to_array(0, _dt.int64)
    if pos.shape != u.shape:
        pos = _o.broadcast_to(pos, u.shape)
    if valid is not None:
        pos = _o.where(_o.broadcast_to(_spread(valid, batch_shape, batch_pos, ur), u.shape), pos, -1)
    return pos


def _scatter_updates(name, x, updates):
    if _is_scalar(updates):
        if _dt.weak_result(x.dtype, updates) is not x.dtype:
            raise DTypeError(f"lax.{name}: the Python scalar update {updates!r} does not fit the operand's dtype {x.dtype.name}")
        return _to_array(updates, x.dtype)
    u = _to_array(updates)
    if u.dtype is not x.dtype:
        raise DTypeError(f"lax.{name}: updates must have the operand's dtype {x.dtype.name}, got {u.dtype.name}{list(u.shape)}")
    return u


def _flat_scatter(opname, x, pos, u):
    xf = _o.reshape(x, (x.size,))
    if pos.ndim == 0:
        pos, u = _o.reshape(pos, (1,)), _o.reshape(u, (1,))
    op = _op(opname, update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), index_vector_dim=pos.ndim)
    return _o.reshape(bind(op, xf, pos, u), x.shape)


def _scatter(name, opname, kinds, operand, scatter_indices, updates, dimension_numbers, mode, negate=False):
    x = _arg(name, operand, kinds)
    idx = _index_operand(name, scatter_indices, "scatter_indices")
    u = _scatter_updates(name, x, updates)
    dn = _dnums(name, dimension_numbers, _SCATTER_FIELDS)
    m = _mode(name, mode, GatherScatterMode.FILL_OR_DROP)
    pos = _scatter_positions(name, x, idx, u, dn, m)
    if negate:
        u = bind(_op("neg"), u)
    return _flat_scatter(opname, x, pos, u)


_SCATTER_DOC = """{summary} (``jax.lax.{name}``): each window of ``updates`` lands on ``operand``
    at the start index given by the last dim of ``scatter_indices``, laid out by
    ``dimension_numbers`` (a :class:`ScatterDimensionNumbers`).{extra}

    Computed as one take-form scatter of the flattened operand at the flat position of
    every update element, so it differentiates and batches as ``x.at[i]`` updates do.

    Args:
        operand: the array to update.
        scatter_indices: an integer array whose last dim holds the index vectors.
        updates: the windows, of the operand's dtype.
        dimension_numbers: a :class:`ScatterDimensionNumbers` (or JAX's).
        indices_are_sorted: accepted and ignored.
        unique_indices: accepted and ignored.
        mode: None, ``"fill"``/``"drop"`` or ``"promise_in_bounds"`` (a window with any
            element out of bounds is dropped), ``"clip"`` (start indices clamped so the
            window fits), or a :class:`GatherScatterMode`.

    Returns:
        The updated copy of ``operand``.

    Example:
        >>> dn = qb.lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
        >>> qb.lax.{name}(qb.array([1, 2, 3]), qb.array([[2], [0], [2]]), qb.array([5, 6, 7]), dn).tolist()
        {out}
    """


def _scatter_fn(name, opname, kinds, summary, extra, out, negate=False):
    def f(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return _scatter(name, opname, kinds, operand, scatter_indices, updates, dimension_numbers, mode, negate)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = _SCATTER_DOC.format(summary=summary, name=name, extra=extra, out=out)
    return f


scatter = _scatter_fn("scatter", "scatter", "fiub", "Scatter-update: updates replace the operand's elements",
                      " Of several updates of one element the last (in row-major order of the updates) wins, as XLA on the CPU; its gradient reaches that update only.",
                      "[6, 2, 7]")
scatter_add = _scatter_fn("scatter_add", "scatter_add", "fiu", "Scatter-add: updates are added, duplicates accumulate", "", "[7, 2, 15]")
scatter_sub = _scatter_fn("scatter_sub", "scatter_add", "fiu", "Scatter-subtract: updates are subtracted, duplicates accumulate", "", "[-5, 2, -9]", negate=True)
scatter_mul = _scatter_fn("scatter_mul", "scatter_mul", "fiu", "Scatter-multiply: the elements are multiplied by the updates",
                          " Gradients are defined for repeated indices too (JAX has them for unique indices only).", "[6, 2, 105]")
scatter_min = _scatter_fn("scatter_min", "scatter_min", "fiu", "Scatter-min: the elements become the minimum of themselves and the updates",
                          " Gradients split among ties, as JAX's.", "[1, 2, 3]")
scatter_max = _scatter_fn("scatter_max", "scatter_max", "fiu", "Scatter-max: the elements become the maximum of themselves and the updates",
                          " Gradients split among ties, as JAX's.", "[6, 2, 7]")


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(), indices_are_sorted=False, unique_indices=False, mode=None):
    """``operand`` with ``func`` applied to the elements that the windows of shape
    ``update_shape`` at ``scatter_indices`` cover (``jax.lax.scatter_apply``): an element
    covered ``k`` times gets ``func`` applied ``k`` times, as in JAX.

    ``func`` is applied to the whole operand (as many times as the most covered element
    needs) and the results kept where they belong, so it must act elementwise (JAX calls it
    on scalars). Under a trace the repetitions are a ``while_loop``. As in JAX, no
    derivatives are defined.

    Args:
        operand: the array to update.
        scatter_indices: an integer array whose last dim holds the index vectors.
        func: an elementwise function of one array.
        dimension_numbers: a :class:`ScatterDimensionNumbers` (or JAX's).
        update_shape: the shape of the updates the windows are cut from.
        indices_are_sorted: accepted and ignored.
        unique_indices: accepted and ignored.
        mode: as :func:`scatter`.

    Returns:
        The updated copy of ``operand``.

    Example:
        >>> dn = qb.lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
        >>> qb.lax.scatter_apply(qb.ones(4), qb.array([[1], [1], [2]]), lambda v: v * 3.0, dn, update_shape=(3,)).tolist()
        [1.0, 9.0, 3.0, 1.0]
    """
    name = "scatter_apply"
    if not callable(func):
        raise ArgumentTypeError(f"lax.scatter_apply: func must be callable, got {type(func).__name__}")
    x = _to_array(operand)
    idx = _index_operand(name, scatter_indices, "scatter_indices")
    shape = _o._shape_arg("lax.scatter_apply", _shape_tuple("scatter_apply", "update_shape", update_shape))
    dn = _dnums(name, dimension_numbers, _SCATTER_FIELDS)
    m = _mode(name, mode, GatherScatterMode.FILL_OR_DROP)
    ones = _o.ones(shape, _dt.int32)
    pos = _scatter_positions(name, x, idx, ones, dn, m)
    count = _flat_scatter("scatter_add", _o.zeros(x.shape, _dt.int32), pos, ones)

    def step(i, v):
        return _o.where(count > i, _to_array(func(v)), v)

    if type(count) is _o.Tensor:
        for i in range(int(_o.max(count).item())):
            x = step(i, x)
        return x
    top = _o.max(count)
    return while_loop(lambda c: c[0] < top, lambda c: (c[0] + 1, step(c[0], c[1])), (_to_array(0, _dt.int32), x))[1]


def index_take(src, idxs, axes):
    """The elements of ``src`` at the index arrays ``idxs`` along ``axes``
    (``jax.lax.index_take``): ``idxs`` are 1-D of one length, one per axis, taken modulo the
    axes' extents; the result's first dim walks them, the other dims of ``src`` follow.

    Args:
        src: the array to index.
        idxs: a sequence of 1-D integer arrays of one length.
        axes: the axis of each index array.

    Returns:
        ``src[idxs[0], idxs[1], ...]`` along ``axes``, the indexed dims replaced by one
        leading dim.

    Example:
        >>> qb.lax.index_take(qb.array([[1, 2], [3, 4]]), [qb.array([1, 0])], (0,)).tolist()
        [[3, 4], [1, 2]]
    """
    x = _to_array(src)
    ax = _shape_tuple("index_take", "axes", axes)
    ix = [_index_operand("index_take", i, "idxs") for i in _o._arrays_arg("lax.index_take", "idxs", idxs)]
    if len(ix) != len(ax) or not ix or builtins.any(i.ndim != 1 or i.shape != ix[0].shape for i in ix):
        raise ShapeError(f"lax.index_take: idxs must be 1-D arrays of one length, one per axis of axes {ax}, got shapes " + ", ".join(_shape_str(i.shape) for i in ix))
    ax = tuple(_axis("index_take", a, x.ndim, x.shape) for a in ax)
    ind = _o.stack([_o.remainder(i, x.shape[a]) for i, a in zip(ix, ax)], axis=1)
    sizes = tuple(1 if d in ax else e for d, e in enumerate(x.shape))
    dn = GatherDimensionNumbers(tuple(range(1, x.ndim - len(ax) + 1)), tuple(sorted(ax)), ax)
    return gather(x, ind, dn, sizes)


# ---------------------------------------------------------------------------------------------
# Convolution and window shape helpers


class ConvDimensionNumbers(typing.NamedTuple):
    """The layouts of a convolution as dim permutations (``jax.lax.ConvDimensionNumbers``):
    ``lhs_spec`` (batch, feature, spatial...), ``rhs_spec`` (out feature, in feature,
    spatial...), ``out_spec`` (batch, feature, spatial...).

    Example:
        >>> qb.lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2)).rhs_spec
        (3, 2, 0, 1)
    """

    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


def _shape_tuple(name, arg, v):
    try:
        return _ints_arg(f"lax.{name}", arg, tuple(v)) if len(tuple(v)) else ()
    except TypeError:
        raise ArgumentTypeError(f"lax.{name}: {arg} must be a sequence of ints, got {v!r}") from None


def conv_general_permutations(dimension_numbers):
    """The dim permutations of three layout strings (``jax.lax.conv_general_permutations``):
    for each of lhs/rhs/out, the positions of (N, C) / (O, I) / (N, C) and then of the
    spatial letters, in the rhs's order of them.

    Args:
        dimension_numbers: three layout strings such as ``("NHWC", "HWIO", "NHWC")``.

    Returns:
        ``(lhs_perm, rhs_perm, out_perm)``, tuples of ints.

    Example:
        >>> qb.lax.conv_general_permutations(("NHWC", "HWIO", "NHWC"))
        ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    """
    if not isinstance(dimension_numbers, (tuple, list)) or len(dimension_numbers) != 3 or not builtins.all(isinstance(s, str) for s in dimension_numbers):
        raise ArgumentTypeError(f"lax.conv_general_permutations: dimension_numbers must be three layout strings, got {dimension_numbers!r}")
    if len({len(s) for s in dimension_numbers}) != 1:
        raise ShapeError(f"lax.conv_general_permutations: the layout strings {dimension_numbers!r} must have one length")
    return _conv_specs("lax.conv_general_permutations", tuple(dimension_numbers), len(dimension_numbers[0]))


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    """``dimension_numbers`` as a :class:`ConvDimensionNumbers` for operands of the given
    shapes (``jax.lax.conv_dimension_numbers``): None is the NCH.../OIH.../NCH... layout,
    three layout strings are permuted, a ``ConvDimensionNumbers`` is returned as it is.

    Args:
        lhs_shape: the input's shape.
        rhs_shape: the kernel's shape (of the input's rank).
        dimension_numbers: None, three layout strings or a ``ConvDimensionNumbers``.

    Returns:
        The ``ConvDimensionNumbers``.

    Example:
        >>> qb.lax.conv_dimension_numbers((1, 5, 5, 3), (3, 3, 3, 8), ("NHWC", "HWIO", "NHWC")).lhs_spec
        (0, 3, 1, 2)
    """
    if isinstance(dimension_numbers, ConvDimensionNumbers) or type(dimension_numbers).__name__ == "ConvDimensionNumbers":
        return ConvDimensionNumbers(*(tuple(int(i) for i in s) for s in dimension_numbers))
    ls, rs = _shape_tuple("conv_dimension_numbers", "lhs_shape", lhs_shape), _shape_tuple("conv_dimension_numbers", "rhs_shape", rhs_shape)
    if len(ls) != len(rs):
        raise ShapeError(f"lax.conv_dimension_numbers: lhs and rhs must have one rank, got shapes {_shape_str(ls)} and {_shape_str(rs)}")
    if dimension_numbers is None:
        s = tuple(range(len(ls)))
        return ConvDimensionNumbers(s, s, s)
    if not isinstance(dimension_numbers, (tuple, list)) or len(dimension_numbers) != 3 or not builtins.all(isinstance(s, str) for s in dimension_numbers):
        raise ArgumentTypeError(f"lax.conv_dimension_numbers: dimension_numbers must be None, three layout strings or a ConvDimensionNumbers, got {dimension_numbers!r}")
    return ConvDimensionNumbers(*_conv_specs("lax.conv_dimension_numbers", tuple(dimension_numbers), len(ls)))


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """The explicit ``(low, high)`` padding of each spatial dim for ``"SAME"`` (the odd
    unit at the end), ``"SAME_LOWER"`` (at the start) or ``"VALID"``
    (``jax.lax.padtype_to_pads``).

    Args:
        in_shape: the spatial extents of the input.
        window_shape: the spatial extents of the window.
        window_strides: the strides.
        padding: ``"SAME"``, ``"SAME_LOWER"`` or ``"VALID"``.

    Returns:
        A list of ``(low, high)`` int pairs.

    Example:
        >>> qb.lax.padtype_to_pads((5,), (2,), (2,), "SAME")
        [(0, 1)]
    """
    name = "padtype_to_pads"
    shapes = [_shape_tuple(name, a, v) for a, v in (("in_shape", in_shape), ("window_shape", window_shape), ("window_strides", window_strides))]
    if len({len(s) for s in shapes}) != 1:
        raise ShapeError(f"lax.padtype_to_pads: in_shape, window_shape and window_strides must have one length, got {shapes}")
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "SAME_LOWER", "VALID"):
        raise InvalidArgumentError(f"lax.padtype_to_pads: padding must be 'SAME', 'SAME_LOWER' or 'VALID', got {padding!r}")
    return [tuple(p) for p in _conv_pads("lax.padtype_to_pads", padding, *shapes)]


def _stride_dim(d, w, s):
    return (d - w) // s + 1 if d >= w else 0


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """The output shape of a convolution with operands in the canonical layouts (NC...,
    OI...) (``jax.lax.conv_shape_tuple``).

    Args:
        lhs_shape: the input's shape (batch, feature, spatial...).
        rhs_shape: the kernel's shape (out feature, in feature, spatial...).
        strides: the window strides.
        pads: ``(low, high)`` pairs or a padding string.
        batch_group_count: divides the output batch.

    Returns:
        The output shape, a tuple of ints.

    Example:
        >>> qb.lax.conv_shape_tuple((1, 3, 8, 8), (4, 3, 3, 3), (2, 2), "SAME")
        (1, 4, 4, 4)
    """
    name = "conv_shape_tuple"
    ls, rs = _shape_tuple(name, "lhs_shape", lhs_shape), _shape_tuple(name, "rhs_shape", rhs_shape)
    st = _shape_tuple(name, "strides", strides)
    if len(ls) < 2 or len(rs) != len(ls) or len(st) != len(ls) - 2:
        raise ShapeError(f"lax.conv_shape_tuple: lhs_shape {ls}, rhs_shape {rs} and strides {st} do not fit (equal ranks >= 2, one stride per spatial dim)")
    if isinstance(pads, str):
        pads = padtype_to_pads(ls[2:], rs[2:], st, pads)
    pads = _conv_pads("lax.conv_shape_tuple", pads, ls[2:], rs[2:], st)
    padded = [d + lo + hi for d, (lo, hi) in zip(ls[2:], pads)]
    if builtins.any(p < 0 for p in padded):
        raise ShapeError(f"lax.conv_shape_tuple: the padding {pads} removes more than the extents {ls[2:]}")
    g = _int_arg("lax.conv_shape_tuple", "batch_group_count", batch_group_count)
    if g < 1 or ls[0] % g:
        raise InvalidArgumentError(f"lax.conv_shape_tuple: batch_group_count {g} must be positive and divide the batch {ls[0]}")
    return (ls[0] // g, rs[0]) + tuple(_stride_dim(p, k, s) for p, k, s in zip(padded, rs[2:], st))


def _perms(name, dimension_numbers, rank):
    if dimension_numbers is None:
        s = tuple(range(rank))
        return s, s, s
    if isinstance(dimension_numbers, (tuple, list)) and len(dimension_numbers) == 3 and builtins.all(isinstance(s, str) for s in dimension_numbers):
        return _conv_specs(f"lax.{name}", tuple(dimension_numbers), rank)
    return tuple(conv_dimension_numbers((0,) * rank, (0,) * rank, dimension_numbers))


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """The output shape of :func:`conv_general_dilated` without dilation, in the layouts of
    ``dimension_numbers`` (``jax.lax.conv_general_shape_tuple``).

    Args:
        lhs_shape: the input's shape.
        rhs_shape: the kernel's shape.
        window_strides: the strides.
        padding: ``(low, high)`` pairs or a padding string.
        dimension_numbers: three layout strings (or a ``ConvDimensionNumbers``).

    Returns:
        The output shape in the out layout.

    Example:
        >>> qb.lax.conv_general_shape_tuple((1, 8, 8, 3), (3, 3, 3, 4), (1, 1), "VALID", ("NHWC", "HWIO", "NHWC"))
        (1, 6, 6, 4)
    """
    name = "conv_general_shape_tuple"
    ls, rs = _shape_tuple(name, "lhs_shape", lhs_shape), _shape_tuple(name, "rhs_shape", rhs_shape)
    lp, rp, op = _perms(name, dimension_numbers, len(ls))
    out = conv_shape_tuple(tuple(ls[i] for i in lp), tuple(rs[i] for i in rp), window_strides, padding)
    res = [0] * len(out)
    for j, p in enumerate(op):
        res[p] = out[j]
    return tuple(res)


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """The output shape of :func:`conv_transpose` in the layouts of ``dimension_numbers``
    (``jax.lax.conv_transpose_shape_tuple``): ``(in - 1) * stride - k + 2`` plus the
    padding's total per spatial dim.

    Args:
        lhs_shape: the input's shape.
        rhs_shape: the kernel's shape.
        window_strides: the strides.
        padding: ``"SAME"``, ``"VALID"`` or ``(low, high)`` pairs.
        dimension_numbers: three layout strings (or a ``ConvDimensionNumbers``).

    Returns:
        The output shape in the out layout.

    Example:
        >>> qb.lax.conv_transpose_shape_tuple((1, 4, 4, 3), (3, 3, 3, 8), (2, 2), "SAME", ("NHWC", "HWIO", "NHWC"))
        (1, 8, 8, 8)
    """
    name = "conv_transpose_shape_tuple"
    ls, rs = _shape_tuple(name, "lhs_shape", lhs_shape), _shape_tuple(name, "rhs_shape", rhs_shape)
    lp, rp, op = _perms(name, dimension_numbers, len(ls))
    lt, rt = tuple(ls[i] for i in lp), tuple(rs[i] for i in rp)
    st = _shape_tuple(name, "window_strides", window_strides)
    if len(st) != len(lt) - 2:
        raise ShapeError(f"lax.conv_transpose_shape_tuple: window_strides {st} needs one stride per spatial dim of {ls}")
    if isinstance(padding, str):
        if padding.upper() not in ("SAME", "VALID"):
            raise InvalidArgumentError(f"lax.conv_transpose_shape_tuple: padding must be 'SAME', 'VALID' or (low, high) pairs, got {padding!r}")
        pads = [_conv_transpose_pads(k, s, padding.upper()) for k, s in zip(rt[2:], st)]
    else:
        pads = _conv_pads("lax.conv_transpose_shape_tuple", padding, lt[2:], rt[2:], st)
    space = [(i - 1) * s - k + 2 + lo + hi for i, k, s, (lo, hi) in zip(lt[2:], rt[2:], st, pads)]
    out = (lt[0], rt[0]) + tuple(space)
    res = [0] * len(out)
    for j, p in enumerate(op):
        res[p] = out[j]
    return tuple(res)


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding, base_dilation=None, window_dilation=None):
    """The output shape of :func:`reduce_window` (``jax.lax.reduce_window_shape_tuple``).

    Args:
        operand_shape: the operand's shape.
        window_dimensions: the window's extents.
        window_strides: the strides.
        padding: one ``(low, high)`` pair per dim.
        base_dilation: dilation of the operand (default 1).
        window_dilation: dilation of the window (default 1).

    Returns:
        The output shape, a tuple of ints.

    Example:
        >>> qb.lax.reduce_window_shape_tuple((6, 5), (2, 2), (2, 1), ((0, 0), (1, 0)))
        (3, 5)
    """
    name = "reduce_window_shape_tuple"
    s = _shape_tuple(name, "operand_shape", operand_shape)
    w = _shape_tuple(name, "window_dimensions", window_dimensions)
    st = _shape_tuple(name, "window_strides", window_strides)
    n = len(s)
    pads = _conv_pads(f"lax.{name}", padding, s, w, st) if not isinstance(padding, str) else None
    if pads is None or len(w) != n or len(st) != n:
        raise ShapeError(f"lax.reduce_window_shape_tuple: window_dimensions {w}, window_strides {st} and padding {padding!r} need one entry (a pair for padding) per dim of {s}")
    bd = (1,) * n if base_dilation is None else _shape_tuple(name, "base_dilation", base_dilation)
    wd = (1,) * n if window_dilation is None else _shape_tuple(name, "window_dilation", window_dilation)
    if len(bd) != n or len(wd) != n:
        raise ShapeError(f"lax.reduce_window_shape_tuple: base_dilation {bd} and window_dilation {wd} need one entry per dim of {s}")
    dil = [0 if d == 0 else (d - 1) * b + 1 for d, b in zip(s, bd)]
    wdil = [0 if d == 0 else (d - 1) * b + 1 for d, b in zip(w, wd)]
    return tuple(_stride_dim(d + lo + hi, k, t) for d, (lo, hi), k, t in zip(dil, pads, wdil, st))


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None, rhs_dilation=None, dimension_numbers=None, precision=None, preferred_element_type=None):
    """The patches a convolution with a kernel of spatial shape ``filter_shape`` would see
    (``jax.lax.conv_general_dilated_patches``): the output's feature dim has
    ``C * prod(filter_shape)`` entries, the input feature major and the window position
    (row-major) minor; computed as :func:`conv_general_dilated` with an identity kernel and
    ``feature_group_count = C``, as JAX.

    Args:
        lhs: the input.
        filter_shape: the window's spatial extents.
        window_strides: the strides.
        padding: ``"SAME"``, ``"VALID"`` or ``(low, high)`` pairs.
        lhs_dilation: input dilation.
        rhs_dilation: window dilation.
        dimension_numbers: as :func:`conv_general_dilated`.
        precision: accepted and ignored.
        preferred_element_type: the output dtype.

    Returns:
        The patches, in the out layout of ``dimension_numbers``.

    Example:
        >>> qb.lax.conv_general_dilated_patches(qb.arange(4.0).reshape(1, 1, 4), (2,), (1,), "VALID")[0].tolist()
        [[0.0, 1.0, 2.0], [1.0, 2.0, 3.0]]
    """
    x = _arg("conv_general_dilated_patches", lhs, "f")
    fs = _shape_tuple("conv_general_dilated_patches", "filter_shape", filter_shape)
    if len(fs) != x.ndim - 2 or builtins.any(k < 1 for k in fs):
        raise ShapeError(f"lax.conv_general_dilated_patches: filter_shape {fs} needs one positive extent per spatial dim of the input {_shape_str(x.shape)}")
    dn = conv_dimension_numbers(x.shape, (1, 1) + fs, dimension_numbers)
    s = math.prod(fs)
    c = x.shape[dn.lhs_spec[1]]
    eye = np.broadcast_to(np.eye(s, dtype=x.dtype.np), (c, s, s)).reshape((c * s, 1) + fs)
    perm = [0] * x.ndim
    for j, p in enumerate(dn.rhs_spec):
        perm[p] = j
    kernel = _o._from_numpy(np.ascontiguousarray(np.transpose(eye, perm)))
    return conv_general_dilated(x, kernel, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers=dn,
                                feature_group_count=c, preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape, lhs_dilation=None, rhs_dilation=None, dimension_numbers=None, precision=None):
    """An unshared (locally connected) convolution (``jax.lax.conv_general_dilated_local``):
    each output position has its own kernel. ``rhs`` has the layout of ``dimension_numbers``'
    rhs with its input-feature dim holding ``C * prod(filter_shape)`` entries (as
    :func:`conv_general_dilated_patches`) and its spatial dims the output's spatial extents.

    Args:
        lhs: the input.
        rhs: the per-position kernels.
        window_strides: the strides.
        padding: ``"SAME"``, ``"VALID"`` or ``(low, high)`` pairs.
        filter_shape: the window's spatial extents.
        lhs_dilation: input dilation.
        rhs_dilation: window dilation.
        dimension_numbers: as :func:`conv_general_dilated`.
        precision: accepted and ignored.

    Returns:
        The output, in the out layout of ``dimension_numbers``.

    Example:
        >>> x, w = qb.ones((1, 1, 4)), qb.ones((2, 2, 3))
        >>> qb.lax.conv_general_dilated_local(x, w, (1,), "VALID", (2,)).tolist()
        [[[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]]
    """
    x = _arg("conv_general_dilated_local", lhs, "f")
    w = _to_array(rhs)
    patches = conv_general_dilated_patches(x, filter_shape, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers)
    fs = _shape_tuple("conv_general_dilated_local", "filter_shape", filter_shape)
    ls, rs, os_ = conv_dimension_numbers(x.shape, (1, 1) + fs, dimension_numbers)
    if w.ndim != x.ndim:
        raise ShapeError(f"lax.conv_general_dilated_local: rhs of shape {_shape_str(w.shape)} must have the input's rank {x.ndim}")
    lb = list(os_[2:])
    order = sorted(range(len(lb)), key=lambda k: lb[k])
    rb = [rs[2:][k] for k in order]
    lb = sorted(lb)
    out = dot_general(patches, w, (([os_[1]], [rs[1]]), (lb, rb)))
    # The result's dims: the spatial (batch) dims, then the patches' batch dim, then rhs's
    # out-feature dim; put the last two at the out layout's batch and feature positions.
    n = out.ndim
    rest = list(range(n - 2))
    perm = [None] * n
    perm[os_[0]], perm[os_[1]] = n - 2, n - 1
    it = iter(rest)
    perm = [p if p is not None else next(it) for p in perm]
    return _o.transpose(out, perm)


# ---------------------------------------------------------------------------------------------
# Shapes, dtypes, placement


def broadcast_shapes(*shapes):
    """The NumPy broadcast of ``shapes`` (``jax.lax.broadcast_shapes``).

    Args:
        *shapes: tuples of ints.

    Returns:
        The broadcast shape, a tuple of ints; a ShapeError when they do not broadcast.

    Example:
        >>> qb.lax.broadcast_shapes((2, 1), (3,))
        (2, 3)
    """
    ss = [_shape_tuple("broadcast_shapes", "each shape", s) if not isinstance(s, (int, np.integer)) else (int(s),) for s in shapes]
    if not ss:
        return ()
    try:
        return tuple(int(d) for d in np.broadcast_shapes(*ss))
    except ValueError:
        raise ShapeError("lax.broadcast_shapes: shapes " + ", ".join(_shape_str(s) for s in ss) + " do not broadcast") from None


def broadcast_like(arr, like_arr):
    """``arr`` broadcast to the shape of ``like_arr`` (``jax.lax.broadcast_like``).

    Args:
        arr: the array to broadcast.
        like_arr: an array (or anything with a ``shape``) whose shape is the target.

    Returns:
        The broadcast array, of ``arr``'s dtype.

    Example:
        >>> qb.lax.broadcast_like(qb.array([1, 2]), qb.zeros((3, 2))).tolist()
        [[1, 2], [1, 2], [1, 2]]
    """
    x = _to_array(arr)
    shape = like_arr.shape if hasattr(like_arr, "shape") else _to_array(like_arr).shape
    return _o.broadcast_to(x, tuple(shape))


def dtype(x):
    """The dtype of a value or dtype-like (``jax.lax.dtype``): an array's dtype, int64 /
    float64 / bool for Python scalars (JAX with x64), or the dtype a name or type denotes.

    Args:
        x: an array, a scalar, or a dtype-like (``qb.float32``, ``"int32"``, ``np.uint8``).

    Returns:
        The Quabla dtype.

    Example:
        >>> qb.lax.dtype(qb.ones(2, dtype=qb.float32)).name, qb.lax.dtype(1.0).name
        ('float32', 'float64')
    """
    if is_array(x):
        return x.dtype
    if _is_scalar(x):
        return _dt.scalar_dtype(x)
    if isinstance(x, (np.ndarray, np.generic)):
        return _dt.dtype(x.dtype, "lax.dtype")
    return _dtype_arg("dtype", x)


def empty(shape, dtype, *, out_sharding=None):  # noqa: A002 - jax.lax's name
    """An array of ``shape`` and ``dtype`` whose values are unspecified
    (``jax.lax.empty``); Quabla's are zeros.

    Args:
        shape: an int or a tuple of ints.
        dtype: the dtype.
        out_sharding: accepted and ignored.

    Returns:
        The array.

    Example:
        >>> qb.lax.empty((2,), qb.int32).shape
        (2,)
    """
    return _o.zeros(shape, _dtype_arg("empty", dtype))


def stack(operands, axis=0):
    """The arrays ``operands`` (one shape and dtype) joined along a new dim ``axis``
    (``jax.lax.stack``).

    Args:
        operands: a sequence of arrays.
        axis: the position of the new dim.

    Returns:
        The stacked array.

    Example:
        >>> qb.lax.stack([qb.array([1, 2]), qb.array([3, 4])], axis=1).tolist()
        [[1, 3], [2, 4]]
    """
    xs = [_to_array(x) for x in _o._arrays_arg("lax.stack", "operands", operands)]
    if not xs:
        raise InvalidArgumentError("lax.stack: needs at least one operand")
    if builtins.any(x.dtype is not xs[0].dtype for x in xs):
        raise DTypeError("lax.stack: operands must have the same dtype, got " + ", ".join(f"{x.dtype.name}{list(x.shape)}" for x in xs))
    if builtins.any(x.shape != xs[0].shape for x in xs):
        raise ShapeError("lax.stack: operands must have one shape, got " + ", ".join(_shape_str(x.shape) for x in xs))
    a = _axis("stack", axis, xs[0].ndim + 1, xs[0].shape + (len(xs),))
    return _o.stack(xs, axis=a)


def unstack(x, axis=0):
    """The slices of ``x`` along ``axis``, that dim removed (``jax.lax.unstack``).

    Args:
        x: an array of rank >= 1.
        axis: the dim to split.

    Returns:
        A tuple of ``x.shape[axis]`` arrays.

    Example:
        >>> [v.tolist() for v in qb.lax.unstack(qb.array([[1, 2], [3, 4]]), axis=1)]
        [[1, 3], [2, 4]]
    """
    x = _to_array(x)
    if x.ndim == 0:
        raise ShapeError("lax.unstack: x must have rank >= 1, got a scalar")
    a = _axis("unstack", axis, x.ndim, x.shape)
    keep = x.shape[:a] + x.shape[a + 1:]
    return tuple(_o.reshape(_o._slice_axis(x, a, i, i + 1, 1), keep) for i in range(x.shape[a]))


def platform_dependent(*args, default=None, **per_platform):
    """``per_platform[p](*args)`` for the platform ``p`` the program runs on
    (``jax.lax.platform_dependent``): Quabla picks the ``cpu`` branch, else ``default``.

    Args:
        *args: the branches' arguments.
        default: the branch for platforms without one of their own.
        **per_platform: branches by platform name (``cpu``, ``cuda``, ``tpu``...).

    Returns:
        The chosen branch's result; InvalidArgumentError when there is neither a ``cpu``
        branch nor a default.

    Example:
        >>> qb.lax.platform_dependent(qb.array(2.0), cpu=lambda x: x * 3, default=lambda x: x).item()
        6.0
    """
    f = per_platform.get("cpu", default)
    if f is None:
        raise InvalidArgumentError(f"lax.platform_dependent: no branch for the platform 'cpu' and no default (branches: {sorted(per_platform)})")
    if not callable(f):
        raise ArgumentTypeError(f"lax.platform_dependent: branches must be callable, got {type(f).__name__}")
    return f(*args)


def with_sharding_constraint(x, shardings):
    """``x`` (a pytree) unchanged (``jax.lax.with_sharding_constraint``: Quabla runs on one
    device, where a sharding constraint has nothing to do).

    Args:
        x: a pytree of arrays.
        shardings: accepted and ignored.

    Returns:
        ``x``.

    Example:
        >>> qb.lax.with_sharding_constraint(qb.array([1.0]), None).tolist()
        [1.0]
    """
    return x


_RNG_CALLS = [0]


def rng_uniform(a, b, shape):
    """Uniform random numbers in ``[a, b)`` of ``shape`` (``jax.lax.rng_uniform``, a
    stateful generator JAX discourages): each eager call draws with a fresh key from a
    counter; under ``jit`` the key is fixed when the program is traced, so a compiled
    function returns the same numbers on every call (use ``qb.random`` for real work).

    Args:
        a: the lower bound, a scalar (float or integer dtype).
        b: the upper bound, a scalar of ``a``'s dtype.
        shape: the result's shape.

    Returns:
        An array of ``shape`` and the bounds' dtype.

    Example:
        >>> v = qb.lax.rng_uniform(qb.array(2.0), qb.array(3.0), (4,))
        >>> bool(((v >= 2.0) & (v < 3.0)).all())
        True
    """
    lo, hi = _same("rng_uniform", (a, b), "fiu")
    if lo.ndim:
        raise ShapeError(f"lax.rng_uniform: a and b must be scalars, got shape {_shape_str(lo.shape)}")
    shape = _shape_tuple("rng_uniform", "shape", shape)
    _RNG_CALLS[0] += 1
    key = _random.PRNGKey(_RNG_CALLS[0] + 0x5EED)
    if lo.dtype.is_float:
        return _random.uniform(key, shape, lo.dtype, lo, hi)
    return _random.randint(key, shape, lo, hi, lo.dtype)


# ---------------------------------------------------------------------------------------------
# Floating-point bit manipulations from float arithmetic (Quabla has no bitcast)

# (mantissa bits, exponent bits, min normal exponent) of the float dtypes.
_FLOAT_BITS = {"float32": (23, 8, -126), "float64": (52, 11, -1022)}


def _like(v, x):
    return _fill(v, x.dtype, x.shape, x)


def _reduce_precision_impl(x, eb, mb):
    m_src, e_src, emin = _FLOAT_BITS[x.dtype.name]
    y = x
    if mb < m_src:
        ax = bind(_op("abs"), x)
        fin = bind(_op("is_finite"), x) & (x != 0)
        safe = _o.where(fin, ax, 1.0)
        _, e = _frexp(safe)
        e1 = _o.maximum(astype(e, x.dtype) - 1.0, float(emin))
        # |x| / 2**e1 is in [1, 2): scaled to [2**mb, 2**(mb + 1)) its integral part is the
        # kept mantissa; rounding there is XLA's round to nearest even on the bit pattern.
        raw = _scale2(safe, mb - e1)
        t = bind(_op("round"), raw)
        if mb == 0:
            # The kept bit is the exponent's lowest: a tie goes up when the biased exponent
            # (e1 + an odd bias) is odd, i.e. when e1 is even.
            even = bind(_op("floor"), e1 * 0.5) * 2.0 == e1
            t = _o.where(raw == 1.5, _o.where(even, _like(2.0, raw), _like(1.0, raw)), t)
        r = _scale2(t, e1 - mb)
        y = _o.where(fin, _o.where(x < 0, -r, r), x)
    if eb < e_src:
        bias = 2 ** (eb - 1) - 1
        ay = bind(_op("abs"), y)
        y = _o.where(ay >= 2.0 ** (bias + 1), _o.where(y < 0, _like(-math.inf, y), _like(math.inf, y)), y)
        y = _o.where(ay < 2.0 ** (1 - bias), y * _like(0.0, y), y)
    return y


def reduce_precision(operand, exponent_bits, mantissa_bits):
    """``operand`` rounded to a float format with ``exponent_bits`` and ``mantissa_bits``
    (``jax.lax.reduce_precision``, XLA's): the mantissa rounds to nearest even, values past
    the format's range become infinities and values below its smallest normal number become
    zeros of their sign; NaN stays NaN. ``(8, 7)`` of float32 is bfloat16's rounding,
    ``(5, 10)`` float16's. The result keeps the operand's dtype. Its derivative passes the
    tangent through unchanged (JAX rounds the tangent to the format too: the same where it
    is representable there).

    Computed from float arithmetic (frexp-style scaling and a round-to-even), bit-exact with
    XLA for normal inputs; subnormal inputs and results are zeros (Quabla flushes them),
    where XLA keeps them when the exponent is not reduced.

    Args:
        operand: a float array.
        exponent_bits: the exponent width, >= 1.
        mantissa_bits: the mantissa width, >= 0.

    Returns:
        The rounded array.

    Example:
        >>> qb.lax.reduce_precision(qb.array([1.0 + 2.0 ** -11, 1.0 + 3 * 2.0 ** -11, 70000.0]), 5, 10).tolist()
        [1.0, 1.001953125, inf]
    """
    x = _to_array(operand) if not _is_scalar(operand) else _to_array(float(operand))
    _check_kind("reduce_precision", x, "f")
    eb = _int_arg("lax.reduce_precision", "exponent_bits", exponent_bits)
    mb = _int_arg("lax.reduce_precision", "mantissa_bits", mantissa_bits)
    if eb < 1 or mb < 0:
        raise InvalidArgumentError(f"lax.reduce_precision: exponent_bits must be >= 1 and mantissa_bits >= 0, got {eb} and {mb}")
    return _reduce_precision_rule(eb, mb)(x)


_RP_RULES = {}


def _reduce_precision_rule(eb, mb):
    f = _RP_RULES.get((eb, mb))
    if f is None:
        @_custom_jvp
        def f(x):
            return _reduce_precision_impl(x, eb, mb)

        f.defjvp(lambda primals, tangents: (f(primals[0]), tangents[0]))
        _RP_RULES[(eb, mb)] = f
    return f


def nextafter(x1, x2):
    """The next representable float after ``x1`` in the direction of ``x2``, elementwise
    (``jax.lax.nextafter``, C's ``nextafter``): ``x2`` where they are equal, NaN where
    either is NaN.

    Computed from float arithmetic (the mantissa from frexp stepped by one unit in the last
    place), exact for normal numbers; from 0 the result is the smallest subnormal of the sign
    of ``x2`` and from the smallest normal toward 0 the largest subnormal, as in JAX, but
    subnormal inputs count as 0 (Quabla flushes them), and a step from a subnormal is not
    computed.

    Args:
        x1: a float array.
        x2: an array of ``x1``'s dtype (a Python scalar takes it).

    Returns:
        The array of ``x1``'s dtype and shape.

    Example:
        >>> qb.lax.nextafter(qb.array([1.0], dtype=qb.float32), 2.0).tolist()
        [1.0000001192092896]
    """
    x, y = _same("nextafter", (x1, x2), "f")
    m_src, _, emin = _FLOAT_BITS[x.dtype.name]
    p = m_src + 1
    finfo = np.finfo(x.dtype.np)
    ax = bind(_op("abs"), x)
    fin = bind(_op("is_finite"), x) & (x != 0)
    m, e = _frexp(_o.where(fin, ax, 1.0))
    e = astype(e, x.dtype)
    up = (y > x) == (x > 0)  # away from zero
    step = 2.0 ** -p
    mag = _o.where(up, m + step, _o.where(m == 0.5, m - step / 2, m - step))
    r = _scale2(mag, e)
    tiny = float(finfo.tiny)
    sub_max = np.asarray(tiny - float(finfo.smallest_subnormal), x.dtype.np).item()
    r = _o.where((ax == tiny) & ~up, _like(sub_max, r), r)
    out = _o.where(x < 0, -r, r)
    big = float(finfo.max)
    out = _o.where(bind(_op("is_finite"), x), out, _o.where(x > 0, _like(big, x), _like(-big, x)))
    sub = float(finfo.smallest_subnormal)
    out = _o.where(x == 0, _o.where(y > x, _like(sub, x), _like(-sub, x)), out)
    out = _o.where(x == y, y, out)
    return _o.where((x != x) | (y != y), _o.add(x, y), out)


def mulhi(x, y, /):
    """The high half of the double-width product of integers, elementwise (``jax.lax.mulhi``):
    for N-bit operands the top N bits of their 2N-bit product (signed for signed dtypes).
    int32/uint8 use one int64 product, uint32 16-bit halves, int64 32-bit halves with
    wrapping int64 arithmetic.

    Args:
        x: an integer array.
        y: an integer array of ``x``'s dtype (a Python int takes it).

    Returns:
        The array of their dtype.

    Example:
        >>> qb.lax.mulhi(qb.array([-5, 1 << 30], dtype=qb.int32), qb.array([3, 8], dtype=qb.int32)).tolist()
        [-1, 2]
    """
    a, b = _same("mulhi", (x, y), "iu")
    d = a.dtype
    i64 = _dt.int64

    def c(v):
        return _fill(v, i64, a.shape, a)

    if d is _dt.int32 or d is _dt.uint8:
        p = astype(a, i64) * astype(b, i64)
        return astype(_sra(p, c(8 * d.itemsize)), d)
    if d is _dt.uint32:
        a, b = astype(a, i64), astype(b, i64)
        mask = c(0xFFFF)
        ah, al, bh, bl = _srl(a, c(16)), a & mask, _srl(b, c(16)), b & mask
        mid = ah * bl + al * bh + _srl(al * bl, c(16))
        return astype(ah * bh + _srl(mid, c(16)), d)
    # int64: the unsigned high word from 32-bit halves (products wrap mod 2**64 and are read
    # back with logical shifts), then the two's-complement correction for negative operands.
    mask = c(0xFFFFFFFF)
    s32 = c(32)
    ah, al, bh, bl = _srl(a, s32), a & mask, _srl(b, s32), b & mask
    t = ah * bl + _srl(al * bl, s32)
    w1 = al * bh + (t & mask)
    hi = ah * bh + _srl(t, s32) + _srl(w1, s32)
    zero = c(0)
    return hi - _o.where(a < 0, b, zero) - _o.where(b < 0, a, zero)


# ---------------------------------------------------------------------------------------------
# Special functions (jax.lax's names for qb.scipy.special's)


def _floats(name, *xs):
    return _same(name, xs, "f")


def igamma(a, x):
    """The regularized lower incomplete gamma function P(a, x) (``jax.lax.igamma``;
    ``qb.scipy.special.gammainc``); the operands share one float dtype.

    Args:
        a: the shape parameter.
        x: the point.

    Returns:
        P(a, x), differentiable in both.

    Example:
        >>> round(qb.lax.igamma(qb.array(2.0), qb.array(1.0)).item(), 9)
        0.264241118
    """
    return _special.gammainc(*_floats("igamma", a, x))


def igammac(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)
    (``jax.lax.igammac``; ``qb.scipy.special.gammaincc``).

    Args:
        a: the shape parameter.
        x: the point.

    Returns:
        Q(a, x).

    Example:
        >>> round(qb.lax.igammac(qb.array(2.0), qb.array(1.0)).item(), 9)
        0.735758882
    """
    return _special.gammaincc(*_floats("igammac", a, x))


def igamma_grad_a(a, x):
    """d P(a, x) / d a (``jax.lax.igamma_grad_a``), from the derivative of P's series /
    continued fraction; like JAX's it has no derivative of its own.

    Args:
        a: the shape parameter.
        x: the point.

    Returns:
        The partial derivative in ``a``.

    Example:
        >>> round(qb.lax.igamma_grad_a(qb.array(2.0), qb.array(1.0)).item(), 6)
        -0.276196
    """
    a, x = _floats("igamma_grad_a", a, x)
    return _special._partial(_special._igamma_impl, 0, a, x)


def random_gamma_grad(a, x):
    """The implicit reparameterisation derivative d x / d a of a Gamma(a, 1) sample ``x``
    (``jax.lax.random_gamma_grad``; ``-(dP/da) / (dP/dx)``).

    Args:
        a: the shape parameter.
        x: the sample.

    Returns:
        d x / d a.

    Example:
        >>> round(qb.lax.random_gamma_grad(qb.array(2.0), qb.array(1.0)).item(), 6)
        0.750779
    """
    return _random.random_gamma_grad(*_floats("random_gamma_grad", a, x))


def polygamma(m, x):
    """The polygamma function psi^(m)(x) (``jax.lax.polygamma``): ``m`` a non-negative
    integer value of ``x``'s float dtype (NaN for other values of ``m``).

    Args:
        m: the order.
        x: the point.

    Returns:
        psi^(m)(x).

    Example:
        >>> round(qb.lax.polygamma(qb.array(1.0), qb.array(2.0)).item(), 9)
        0.644934067
    """
    m, x = _floats("polygamma", m, x)
    ok = (m >= 0) & (bind(_op("floor"), m) == m)
    r = _special.polygamma(astype(_o.where(ok, m, _like(0.0, m)), _dt.int64), x)
    return _o.where(ok, r, _like(math.nan, r))


def zeta(x, q):
    """The Hurwitz zeta function sum_k (k + q) ** -x (``jax.lax.zeta``).

    Args:
        x: the exponent.
        q: the offset.

    Returns:
        zeta(x, q).

    Example:
        >>> round(qb.lax.zeta(qb.array(2.0), qb.array(1.0)).item(), 9)
        1.644934067
    """
    return _special.zeta(*_floats("zeta", x, q))


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b) (``jax.lax.betainc``).

    Args:
        a: the first shape parameter.
        b: the second shape parameter.
        x: the point in [0, 1].

    Returns:
        I_x(a, b).

    Example:
        >>> round(qb.lax.betainc(qb.array(2.0), qb.array(3.0), qb.array(0.5)).item(), 9)
        0.6875
    """
    return _special.betainc(*_floats("betainc", a, b, x))


def bessel_i0e(x):
    """The exponentially scaled modified Bessel function of order 0, ``exp(-|x|) I0(x)``
    (``jax.lax.bessel_i0e``).

    Args:
        x: a float array.

    Returns:
        i0e(x).

    Example:
        >>> round(qb.lax.bessel_i0e(qb.array(1.0)).item(), 9)
        0.465759608
    """
    return _special.i0e(_arg("bessel_i0e", x, "f"))


def bessel_i1e(x):
    """The exponentially scaled modified Bessel function of order 1, ``exp(-|x|) I1(x)``
    (``jax.lax.bessel_i1e``).

    Args:
        x: a float array.

    Returns:
        i1e(x).

    Example:
        >>> round(qb.lax.bessel_i1e(qb.array(1.0)).item(), 9)
        0.207910415
    """
    return _special.i1e(_arg("bessel_i1e", x, "f"))


def _approx_k(name, operand, k, reduction_dimension, aggregate_to_topk, largest):
    x = _arg(name, operand, "fiu")
    if not aggregate_to_topk:
        raise InvalidArgumentError(f"lax.{name}: aggregate_to_topk=False (the unaggregated partial results of the TPU algorithm) is not supported; results are exact top-k")
    if x.ndim == 0:
        raise ShapeError(f"lax.{name}: operand must have rank >= 1, got a scalar")
    a = _axis(name, reduction_dimension, x.ndim, x.shape)
    if largest:
        return top_k(x, k, axis=a)
    if x.dtype.kind == "u":
        v, i = top_k(_fill(int(_dt.iinfo(x.dtype).max), x.dtype, x.shape, x) - x, k, axis=a)
        return _fill(int(_dt.iinfo(x.dtype).max), x.dtype, v.shape, v) - v, i
    v, i = top_k(bind(_op("neg"), x), k, axis=a)
    return bind(_op("neg"), v), i


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1, aggregate_to_topk=True):
    """The ``k`` largest entries along ``reduction_dimension`` and their int32 indices
    (``jax.lax.approx_max_k``): exact here, as JAX's on the CPU; ``recall_target`` and
    ``reduction_input_size_override`` are accepted and ignored, ``aggregate_to_topk=False``
    is not supported.

    Args:
        operand: the array.
        k: how many.
        reduction_dimension: the dim to search.
        recall_target: ignored.
        reduction_input_size_override: ignored.
        aggregate_to_topk: must be True.

    Returns:
        ``(values, indices)``, descending.

    Example:
        >>> qb.lax.approx_max_k(qb.array([1.0, 4.0, 2.0]), 2)[1].tolist()
        [1, 2]
    """
    return _approx_k("approx_max_k", operand, k, reduction_dimension, aggregate_to_topk, True)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1, aggregate_to_topk=True):
    """The ``k`` smallest entries along ``reduction_dimension`` and their int32 indices
    (``jax.lax.approx_min_k``), exact as :func:`approx_max_k`.

    Args:
        operand: the array.
        k: how many.
        reduction_dimension: the dim to search.
        recall_target: ignored.
        reduction_input_size_override: ignored.
        aggregate_to_topk: must be True.

    Returns:
        ``(values, indices)``, ascending.

    Example:
        >>> qb.lax.approx_min_k(qb.array([1.0, 4.0, 2.0]), 2)[0].tolist()
        [1.0, 2.0]
    """
    return _approx_k("approx_min_k", operand, k, reduction_dimension, aggregate_to_topk, False)


# `import quabla.lax.linalg` (lax is a module, not a package), as `import jax.lax.linalg`.
import sys as _sys  # noqa: E402

_sys.modules.setdefault(__name__ + ".linalg", linalg)
