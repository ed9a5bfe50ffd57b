"""More of ``jax.numpy``: constants, elementwise functions, dtype queries, NaN-aware and
statistical reductions, polynomials (built from Quabla ops, so they trace, differentiate and
batch).

Owns: the constants (``pi``, ``e``, ``inf``, ``nan``, ``euler_gamma``, ``newaxis``), the
elementwise aliases and functions (``absolute`` ... ``float_power``), the dtype and array
predicates (``isscalar`` ... ``finfo``), the reductions and statistics (``ptp`` ... ``vecmat``,
the ``nan*`` family over :func:`quabla.quantile`'s sort) and the polynomials (``polyval`` ...
``polyfit``).

Quabla has no bitcast: the sign bit of a NaN cannot be read (``signbit(-nan)`` is False) and
``frexp``/``ldexp`` work on the float values (powers of two are exact); subnormal floats are
flushed to zero by every Quabla float op (as XLA on CPU), so ``frexp`` of a subnormal is
``(0, 0)``. ``nextafter`` and ``spacing`` are in python/quabla/_nextafter.py (over
``lax.nextafter``, which imports this module).
"""

import builtins
import math

import numpy as np

from . import _ops as _o
from . import dtypes as _dt
from . import linalg as _linalg
from ._control import scan as _scan
from ._control import while_loop as _while_loop
from ._control import fori_loop as _fori_loop
from ._conv import convolve as _convolve
from ._conv import cumprod as _cumprod
from ._conv import cumsum as _cumsum
from ._indexing import take_along_axis as _take_along_axis
from ._search import _inverted_cdf, _quantile_weights
from ._numpy import diag as _diag
from ._numpy import diff as _diff
from ._numpy import roll as _roll
from ._numpy import isnan as _isnan
from ._numpy import sort as _sort
from ._shape import moveaxis as _moveaxis
from ._ops import _binary_operands, _floatify, _no_out, _shape_str, _to_array, astype, bind, where
from ._trace import Tracer, is_array
from .dtypes import DType, bool_, float64, int32, int64
from .errors import (
    ArgumentTypeError,
    DTypeError,
    InvalidArgumentError,
    ShapeError,
    UnsupportedOperationError,
)
from . import errors as _errors

__all__ = [
    # constants
    "pi", "e", "inf", "nan", "euler_gamma", "newaxis",
    # elementwise
    "absolute", "fabs", "positive", "pow", "amax", "amin", "around", "rint", "trunc",
    "deg2rad", "degrees", "rad2deg", "radians", "copysign", "signbit", "fmax", "fmin", "fmod",
    "divmod", "modf", "frexp", "ldexp", "heaviside", "sinc", "gcd", "lcm", "logaddexp2",
    "float_power",
    # dtype and array predicates
    "isscalar", "ndim", "shape", "size", "iscomplex", "isreal", "iscomplexobj", "isrealobj",
    "real", "imag", "conj", "conjugate", "angle", "promote_types", "result_type", "can_cast",
    "issubdtype", "isdtype", "finfo",
    # reductions and statistics
    "ptp", "count_nonzero", "average", "nansum", "nanmean", "nanmax", "nanmin", "nanprod",
    "nanstd", "nanvar", "nanargmax", "nanargmin", "nancumsum", "nancumprod", "nanmedian",
    "nanquantile", "nanpercentile", "cov", "corrcoef", "trapezoid", "gradient", "ediff1d",
    "unwrap", "cross", "vecdot", "matvec", "vecmat",
    # polynomials
    "polyval", "polyadd", "polysub", "polymul", "polyder", "polyint", "vander", "polyfit",
]  # fmt: skip

# ---------------------------------------------------------------------------------------------
# Constants (Python floats, as jax.numpy's)

pi = math.pi
e = math.e
inf = math.inf
nan = math.nan
euler_gamma = 0.5772156649015329
newaxis = None

# ---------------------------------------------------------------------------------------------
# Dtype queries (used by the functions below too)

_KIND_ORDER = {"b": 0, "i": 1, "f": 2}
_WEAK_DEFAULT = {"b": bool_, "i": int64, "f": float64}


def _dtype_of(name, a):
    """(dtype, weak) of an array, a dtype-like or a Python scalar / scalar type (weak)."""
    if a is bool or isinstance(a, bool):
        return bool_, True
    if a is int or (isinstance(a, int) and not isinstance(a, np.integer)):
        return int64, True
    if a is float or (isinstance(a, float) and not isinstance(a, np.floating)):
        return float64, True
    if a is complex or isinstance(a, (complex, np.complexfloating)):
        raise DTypeError(f"{name}: complex values are not supported (quabla has no complex dtypes)")
    if is_array(a):
        return a.dtype, False
    if isinstance(a, (np.ndarray, np.generic)):
        return _dt.dtype(a.dtype, name), False
    if isinstance(a, (list, tuple)):
        return _to_array(a).dtype, False
    return _dt.dtype(a, name), False


def _join(a, b):
    """JAX's (x64) promotion lattice on two strong dtypes: Quabla's (``dtypes.result_type``),
    except that float32 with float64 is float64."""
    if a.is_float and b.is_float and a is not b:
        return float64
    return _dt.result_type("promote_types", a, b)


def promote_types(a, b):
    """The dtype two dtypes promote to, on JAX's (x64) lattice (``jnp.promote_types``).

    The Python types ``bool``, ``int`` and ``float`` are weak, as in JAX: they take the other
    dtype when it is of their kind or higher (``promote_types(uint8, int)`` is uint8).
    Quabla's binary ops ask for an explicit ``astype`` to mix float32 with float64; this query
    answers float64 for that pair, as JAX.

    Example:
        >>> qb.promote_types(qb.int32, qb.uint32)
        quabla.int64
        >>> qb.promote_types(qb.uint8, int)
        quabla.uint8
    """
    return result_type(*(d if d is bool or d is int or d is float else _dt.dtype(d, "promote_types") for d in (a, b)))


def result_type(*args):
    """The dtype of an operation on ``args`` (arrays, dtypes, Python scalars and the types
    ``bool``/``int``/``float``, which are weak as in JAX): ``jnp.result_type``.

    float32 with float64 gives float64, as JAX (Quabla's binary ops raise for that pair: convert
    with ``astype`` to the dtype this returns).

    Example:
        >>> qb.result_type(qb.array([1, 2], dtype=qb.int32), 1.0)
        quabla.float64
        >>> qb.result_type(qb.float32, 2.0)
        quabla.float32
    """
    if not args:
        raise InvalidArgumentError("result_type: at least one array or dtype is required")
    strong, weak = None, []
    for a in args:
        d, w = _dtype_of("result_type", a)
        if w:
            weak.append(d.kind)
        else:
            strong = d if strong is None else _join(strong, d)
    if strong is None:
        return _WEAK_DEFAULT[builtins.max(weak, key=_KIND_ORDER.__getitem__)]
    for k in weak:
        if k == "f" and not strong.is_float:
            strong = float64
        elif k == "i" and strong.is_bool:
            strong = int64
    return strong


def _required(name, **args):
    """ArgumentTypeError for a required array argument given as None."""
    for k, v in args.items():
        if v is None:
            raise ArgumentTypeError(f"{name}: {k} must be an array, got None")


def _promote(name, *xs, inexact=False):
    """The arrays ``xs`` (None kept) converted to their JAX result dtype (a float when
    ``inexact``: `dtypes.to_inexact`); no broadcasting."""
    d = result_type(*[x for x in xs if x is not None])
    if inexact:
        d = _dt.to_inexact(d)
    return [None if x is None else _to_array(x, d) if not is_array(x) else astype(x, d) for x in xs]


def _pair(name, x, y, inexact=False):
    """Two operands promoted (weak Python scalars) and broadcast; floats when ``inexact``."""
    if not is_array(x) and not is_array(y):
        x = _to_array(x, result_type(x, y))
    x, y = _binary_operands(name, x, y)
    if inexact and not x.dtype.is_float:
        x, y = _floatify(x), _floatify(y)
    return x, y


def can_cast(from_, to, casting="safe"):
    """Whether ``from_`` (a dtype or an array) converts to dtype ``to`` under the rule
    ``casting`` ('no', 'equiv', 'safe', 'same_kind', 'unsafe'), as ``jnp.can_cast``. Python
    scalars are refused, as JAX (their dtype depends on the context).

    Example:
        >>> qb.can_cast(qb.int32, qb.float64), qb.can_cast(qb.float64, qb.int32)
        (True, False)
    """
    if isinstance(from_, (bool, int, float, complex)) and not isinstance(from_, np.generic):
        raise ArgumentTypeError(f"can_cast: from_ must be a dtype or an array, got the Python {type(from_).__name__} {from_!r}")
    if casting not in ("no", "equiv", "safe", "same_kind", "unsafe"):
        raise InvalidArgumentError(f"can_cast: casting must be 'no', 'equiv', 'safe', 'same_kind' or 'unsafe', got {casting!r}")
    f = _dtype_of("can_cast", from_)[0]
    return bool(np.can_cast(f.np, _dt.dtype(to, "can_cast").np, casting))


def _np_type(name, x):
    if isinstance(x, DType):
        return x.np
    if isinstance(x, type) and (issubclass(x, np.generic) or x in (bool, int, float, complex)):
        return x
    if is_array(x):
        return x.dtype.np
    return _dt.dtype(x, name).np


def issubdtype(arg1, arg2):
    """Whether dtype ``arg1`` is ``arg2`` or below it in NumPy's hierarchy of scalar types
    (``np.floating``, ``np.integer``, ``np.number``, ``np.inexact``...), as ``jnp.issubdtype``.

    Example:
        >>> import numpy as np
        >>> qb.issubdtype(qb.float32, np.floating), qb.issubdtype(qb.uint8, np.signedinteger)
        (True, False)
    """
    return bool(np.issubdtype(_np_type("issubdtype", arg1), _np_type("issubdtype", arg2)))


_ISDTYPE_KINDS = {
    "bool": "b",
    "signed integer": "i",
    "unsigned integer": "u",
    "integral": "iu",
    "real floating": "f",
    "complex floating": "",
    "numeric": "iuf",
}


def isdtype(dtype, kind):
    """Whether ``dtype`` is of ``kind`` (the array API's ``isdtype``): a dtype, a kind name
    ('bool', 'signed integer', 'unsigned integer', 'integral', 'real floating', 'complex
    floating', 'numeric') or a tuple of those.

    Example:
        >>> qb.isdtype(qb.float32, "real floating"), qb.isdtype(qb.int64, ("bool", "unsigned integer"))
        (True, False)
    """
    d = _dt.dtype(dtype, "isdtype")
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _ISDTYPE_KINDS:
                raise InvalidArgumentError(f"isdtype: unknown kind {k!r}; expected a dtype or one of {sorted(_ISDTYPE_KINDS)}")
            if d.kind in _ISDTYPE_KINDS[k]:
                return True
        elif d is _dt.dtype(k, "isdtype"):
            return True
    return False


class finfo:
    """Machine limits of a float dtype (``jnp.finfo``): ``bits``, ``eps``, ``epsneg``, ``max``,
    ``min``, ``tiny`` (= ``smallest_normal``), ``smallest_subnormal``, ``resolution``,
    ``precision``, ``nmant``, ``nexp``, ``maxexp``, ``minexp``, ``machep``, ``negep``,
    ``dtype``.

    The values are Python floats (weak in arithmetic with arrays of either float dtype), where
    JAX gives NumPy scalars of the dtype. Quabla flushes subnormals to zero, so
    ``smallest_subnormal`` is not a value its ops produce.

    Example:
        >>> qb.finfo(qb.float32).eps
        1.1920928955078125e-07
        >>> qb.finfo(qb.float64).bits
        64
    """

    def __init__(self, dtype):
        d = _dtype_of("finfo", dtype)[0]
        if not d.is_float:
            raise DTypeError(f"finfo: {d.name} is not a float dtype (use qb.iinfo for integers)")
        info = np.finfo(d.np)
        self.dtype = d
        for k in ("bits", "precision", "nmant", "nexp", "maxexp", "minexp", "machep", "negep", "iexp"):
            setattr(self, k, int(getattr(info, k)))
        for k in ("eps", "epsneg", "max", "min", "tiny", "smallest_normal", "smallest_subnormal", "resolution"):
            setattr(self, k, float(getattr(info, k)))

    def __repr__(self):
        return f"finfo(resolution={self.resolution}, min={self.min:e}, max={self.max:e}, dtype={self.dtype.name})"


# ---------------------------------------------------------------------------------------------
# Elementwise

absolute = _o.abs
pow = _o.power  # noqa: A001 - NumPy's name
amax = _o.max
amin = _o.min
around = _o.round


def fabs(x, /):
    """Elementwise absolute value as a float (integers and bools give a float: int64 float64, narrower ones float32, as JAX's x64), as ``jnp.fabs``.

    Example:
        >>> qb.fabs(qb.array([-2, 3])).tolist()
        [2.0, 3.0]
    """
    return _o.abs(_floatify(_to_array(x)))


def positive(x, /):
    """Elementwise ``+x``: ``x`` unchanged (``jnp.positive``).

    Example:
        >>> qb.positive(qb.array([-1.0, 2.0])).tolist()
        [-1.0, 2.0]
    """
    return _to_array(x)


def rint(x, /):
    """Elementwise rounding to the nearest integer, halves to even (``jnp.rint``); integer and
    bool inputs give float64.

    Example:
        >>> qb.rint(qb.array([0.5, 1.5, -2.5, 2.7])).tolist()
        [0.0, 2.0, -2.0, 3.0]
    """
    x = _to_array(x)
    return astype(x, float64) if not x.dtype.is_float else bind(_o._op("round"), x)


def trunc(x):
    """Elementwise rounding toward zero (``jnp.trunc``); integer and bool inputs are returned
    unchanged.

    Example:
        >>> qb.trunc(qb.array([-1.7, 1.7])).tolist()
        [-1.0, 1.0]
    """
    x = _to_array(x)
    if not x.dtype.is_float:
        return x
    return where(x < 0, _o.ceil(x), _o.floor(x))


def deg2rad(x, /):
    """Degrees to radians, ``x * pi / 180`` (integers give a float as :func:`quabla.exp`), as ``jnp.deg2rad``.

    Example:
        >>> qb.deg2rad(qb.array([180.0])).tolist()
        [3.141592653589793]
    """
    return _floatify(_to_array(x)) * (math.pi / 180)


def rad2deg(x, /):
    """Radians to degrees, ``x * 180 / pi`` (integers give a float as :func:`quabla.exp`), as ``jnp.rad2deg``.

    Example:
        >>> qb.rad2deg(qb.array([qb.pi / 2])).tolist()
        [90.0]
    """
    return _floatify(_to_array(x)) * (180 / math.pi)


radians = deg2rad
degrees = rad2deg


def signbit(x, /):
    """Elementwise test of the sign bit (``jnp.signbit``): True for negative numbers and -0.0;
    ``x < 0`` for integers, False for bools.

    Quabla has no bitcast, so the sign of a NaN cannot be read: ``signbit`` of any NaN is False
    (JAX gives True for a NaN with its sign bit set).

    Example:
        >>> qb.signbit(qb.array([-1.0, -0.0, 0.0, 2.0])).tolist()
        [True, True, False, False]
    """
    x = _to_array(x)
    if x.dtype.is_bool:
        return _o.zeros_like(x, dtype=bool_)
    if not x.dtype.is_float:
        return x < 0
    # -0.0 is the zero whose reciprocal is -inf.
    return (x < 0) | ((x == 0) & (_o.divide(1.0, x) < 0))


def copysign(x1, x2, /):
    """Elementwise ``|x1|`` with the sign of ``x2`` (floats; integers give a float as :func:`quabla.exp`), as
    ``jnp.copysign``. A NaN ``x2`` counts as positive (see :func:`signbit`).

    Example:
        >>> qb.copysign(qb.array([1.0, -2.0, 3.0]), qb.array([-1.0, 1.0, -0.0])).tolist()
        [-1.0, 2.0, -3.0]
    """
    x1, x2 = _pair("copysign", x1, x2, inexact=True)
    a = _o.abs(x1)
    return where(signbit(x2), -a, a)


def fmax(x1, x2):
    """Elementwise maximum ignoring NaN (``jnp.fmax``): the other operand where one is NaN,
    NaN only where both are.

    Example:
        >>> qb.fmax(qb.array([1.0, float("nan"), 3.0]), qb.array([2.0, 0.0, float("nan")])).tolist()
        [2.0, 0.0, 3.0]
    """
    x1, x2 = _pair("fmax", x1, x2)
    return where((x1 > x2) | _isnan(x2), x1, x2)


def fmin(x1, x2):
    """Elementwise minimum ignoring NaN (``jnp.fmin``): the other operand where one is NaN,
    NaN only where both are.

    Example:
        >>> qb.fmin(qb.array([1.0, float("nan"), 3.0]), qb.array([2.0, 0.0, float("nan")])).tolist()
        [1.0, 0.0, 3.0]
    """
    x1, x2 = _pair("fmin", x1, x2)
    return where((x1 < x2) | _isnan(x2), x1, x2)


def _numeric_pair(name, x1, x2):
    x1, x2 = _pair(name, x1, x2)
    if x1.dtype.is_bool:  # JAX's numeric promotion: bool -> int32
        x1, x2 = astype(x1, int32), astype(x2, int32)
    return x1, x2


def fmod(x1, x2, /):
    """Elementwise C ``fmod``: the remainder of ``x1 / x2`` truncated toward zero, with the
    sign of the dividend ``x1`` (``jnp.fmod``; :func:`quabla.remainder` takes the sign of
    ``x2``). An integer division by zero gives 0, as JAX; bools compute as int32.

    Example:
        >>> qb.fmod(qb.array([7, -7, 7]), qb.array([3, 3, -3])).tolist()
        [1, -1, 1]
        >>> qb.fmod(qb.array([-5.5]), 2.0).tolist()
        [-1.5]
    """
    x1, x2 = _numeric_pair("fmod", x1, x2)
    if x1.dtype.is_int:
        x2 = where(x2 == 0, 1, x2)
    return bind(_o._op("rem"), x1, x2)


def divmod(x1, x2, /):  # noqa: A001 - NumPy's name
    """Elementwise ``(floor_divide(x1, x2), remainder(x1, x2))`` (``jnp.divmod``); for floats,
    JAX's computation from C ``fmod`` (a division by zero gives NaN in both); bools compute as
    int32.

    Example:
        >>> q, r = qb.divmod(qb.array([7, -7]), 3)
        >>> q.tolist(), r.tolist()
        ([2, -3], [1, 2])
    """
    x1, x2 = _numeric_pair("divmod", x1, x2)
    if x1.dtype.is_int:
        return _o.floor_divide(x1, x2), _o.remainder(x1, x2)
    mod = bind(_o._op("rem"), x1, x2)
    div = (x1 - mod) / x2
    fix = (mod != 0) & (_o.sign(x2) != _o.sign(mod))
    mod = where(fix, mod + x2, mod)
    div = where(fix, div - 1, div)
    # Round half away from zero, as lax.round's default.
    return _o.sign(div) * _o.floor(_o.abs(div) + 0.5), mod


def modf(x, /, out=None):
    """The fractional and integral parts of ``x``, both with the sign of ``x`` (``jnp.modf``;
    integers give a float as :func:`quabla.exp`).

    Example:
        >>> f, i = qb.modf(qb.array([-3.5, 2.25]))
        >>> f.tolist(), i.tolist()
        ([-0.5, 0.25], [-3.0, 2.0])
    """
    _no_out("modf", out)
    x = _floatify(_to_array(x))
    whole = where(x >= 0, _o.floor(x), _o.ceil(x))
    return x - whole, whole


def _stop(x):
    return bind(_o._op("stop_gradient"), x)


def _scale2(x, k):
    """``x * 2**k`` for an integer-valued float array ``k`` up to twice the exponent range, in
    two exact steps by powers of two of the normal range (no overflow or flush of 2**k)."""
    h = _o.floor(k * 0.5)
    return x * _o.exp2(h) * _o.exp2(k - h)


def frexp(x, /):
    """The mantissa (|m| in [0.5, 1), the sign of ``x``) and the int32 exponent with
    ``x == m * 2**e`` (``jnp.frexp``); ``(x, 0)`` for 0, inf and NaN; integers give a float as :func:`quabla.exp`.

    Computed from the float values (Quabla has no bitcast), exactly; subnormal inputs are
    flushed to zero as by every Quabla float op, so they give ``(0, 0)``. The mantissa
    differentiates as ``x * 2**-e``.

    Example:
        >>> m, ex = qb.frexp(qb.array([8.0, -3.0, 0.0]))
        >>> m.tolist(), ex.tolist()
        ([0.5, -0.75, 0.0], [4, 2, 0])
    """
    x = _floatify(_to_array(x))
    ax = _stop(_o.abs(x))
    special = (ax == 0) | ~_o.isfinite(ax)
    safe = where(special, 1.0, ax)
    ex = _o.floor(_o.log(safe) * (1.0 / math.log(2.0))) + 1
    s = _stop(_scale2(safe, -ex))  # ~[0.5, 1), one step off at most
    ex = where(s >= 1, ex + 1, where(s < 0.5, ex - 1, ex))
    m = _scale2(x, -ex)
    return where(special, x, m), where(special, 0, astype(ex, int32))


def ldexp(x1, x2, /):
    """Elementwise ``x1 * 2**x2`` for an integer ``x2`` (``jnp.ldexp``; integer ``x1`` gives
    float64), without intermediate overflow: the mantissa of ``x1`` scaled once. 0, inf and
    NaN ``x1`` are returned unchanged; results below the normal range flush to zero.

    Example:
        >>> qb.ldexp(qb.array([0.75, 1.0]), qb.array([2, -1])).tolist()
        [3.0, 0.5]
    """
    x1, x2 = _to_array(x1), _to_array(x2)
    if x2.dtype.is_float:
        raise DTypeError(f"ldexp: x2 must have an integer dtype, got {x2.dtype.name} of shape {_shape_str(x2.shape)}")
    x1 = _floatify(x1)
    m, ex = frexp(x1)
    ex = astype(astype(ex, int64) + astype(x2, int64), x1.dtype)
    m = where(ex > 0, m * 2, m)
    ex = where(ex > 0, ex - 1, ex)
    r = m * _o.exp2(ex)
    return where(_o.isfinite(x1) & (x1 != 0), r, x1)


def heaviside(x1, x2, /):
    """The Heaviside step (``jnp.heaviside``): 0 where ``x1 < 0``, 1 where ``x1 > 0``, ``x2``
    where ``x1 == 0``, NaN where ``x1`` is NaN (floats; integers give a float as :func:`quabla.exp`).

    Example:
        >>> qb.heaviside(qb.array([-1.0, 0.0, 2.0]), 0.5).tolist()
        [0.0, 0.5, 1.0]
    """
    x1, x2 = _pair("heaviside", x1, x2, inexact=True)
    return where(x1 < 0, 0.0, where(x1 > 0, 1.0, where(_isnan(x1), x1, x2)))


# sin(y)/y = sum_j (-1)^j y^(2j) / (2j + 1)!: evaluated where x == 0 only, it gives sinc's value
# there and, differentiated, its exact derivatives up to order 2 * len - 1 (as JAX's custom rule).
_SINC_TAYLOR = tuple((-1) ** j / math.factorial(2 * j + 1) for j in range(10))


def sinc(x, /):
    """The normalized sinc, ``sin(pi x) / (pi x)`` with ``sinc(0) == 1`` (``jnp.sinc``;
    integers give a float as :func:`quabla.exp`). Every derivative at 0 is the Taylor coefficient's (its Taylor
    polynomial at 0, where JAX has a custom rule): ``sinc'(0) == 0``, ``sinc''(0) == -pi**2 /
    3``; exact to order 19 (higher orders at 0 are 0).

    Example:
        >>> qb.sinc(qb.array([0.0, 1.0])).tolist()[0], round(qb.sinc(qb.array(0.5)).item(), 6)
        (1.0, 0.63662)
    """
    x = _floatify(_to_array(x))
    zero = x == 0
    px = x * math.pi
    safe = where(zero, 1.0, px)
    y2 = px * px
    t = _SINC_TAYLOR[-1]
    for c in _SINC_TAYLOR[-2::-1]:
        t = t * y2 + c
    return where(zero, t, _o.sin(safe) / safe)


def _int_pair(name, x1, x2):
    x1, x2 = _pair(name, x1, x2)
    if not x1.dtype.is_int:
        raise DTypeError(f"{name}: arguments must be integers, got {x1.dtype.name} of shape {_shape_str(x1.shape)}")
    return x1, x2


def _gcd(a, b):
    def body(c):
        a, b = c
        nz = b != 0
        a, b = where(nz, b, a), where(nz, bind(_o._op("rem"), a, where(nz, b, 1)), 0)
        return where(a < b, b, a), where(a < b, a, b)

    return _while_loop(lambda c: _o.any(c[1] != 0), body, (a, b))[0]


def gcd(x1, x2):
    """Elementwise greatest common divisor of integers (``jnp.gcd``; non-negative, ``gcd(0, 0)
    == 0``): Euclid's algorithm in a while_loop over the whole array.

    Example:
        >>> qb.gcd(qb.array([12, -18, 0]), qb.array([8, 12, 5])).tolist()
        [4, 6, 5]
    """
    x1, x2 = _int_pair("gcd", x1, x2)
    return _gcd(_o.abs(x1), _o.abs(x2))


def lcm(x1, x2):
    """Elementwise least common multiple of integers (``jnp.lcm``; non-negative, 0 when either
    is 0).

    Example:
        >>> qb.lcm(qb.array([4, -6, 0]), qb.array([6, 4, 3])).tolist()
        [12, 12, 0]
    """
    x1, x2 = _int_pair("lcm", x1, x2)
    x1, x2 = _o.abs(x1), _o.abs(x2)
    d = _gcd(x1, x2)
    return where(d == 0, 0, x1 * _o.floor_divide(x2, where(d == 0, 1, d)))


def logaddexp2(x1, x2, /):
    """Elementwise ``log2(2**x1 + 2**x2)`` without overflow (``jnp.logaddexp2``; integers give
    float64).

    Example:
        >>> qb.logaddexp2(qb.array([1.0, 3.0]), 1.0).tolist()
        [2.0, 3.321928094887362]
    """
    x1, x2 = _pair("logaddexp2", x1, x2, inexact=True)
    ln2 = math.log(2.0)
    return _o.logaddexp(x1 * ln2, x2 * ln2) * (1.0 / ln2)


def float_power(x, y, /):
    """Elementwise ``x ** y`` computed in floating point (``jnp.float_power``: integers give
    float64, float32 stays float32; a negative base with a non-integer exponent is NaN).

    Example:
        >>> qb.float_power(qb.array([2, 4]), qb.array([-1, 1])).tolist()
        [0.5, 4.0]
    """
    x, y = _pair("float_power", x, y, inexact=True)
    return bind(_o._op("pow"), x, y)


# ---------------------------------------------------------------------------------------------
# Array predicates and the complex accessors on real dtypes


def isscalar(element):
    """True for Python and NumPy scalars and 0-d arrays (``jnp.isscalar``).

    Example:
        >>> qb.isscalar(1.0), qb.isscalar(qb.array(1.0)), qb.isscalar(qb.array([1.0]))
        (True, True, False)
    """
    if np.isscalar(element):
        return True
    if is_array(element) or isinstance(element, np.ndarray):
        return element.ndim == 0
    return False


def ndim(a):
    """The number of axes of ``a`` (an array, a scalar or a nested list), as ``jnp.ndim``.

    Example:
        >>> qb.ndim(qb.ones((2, 3))), qb.ndim(1.0)
        (2, 0)
    """
    return a.ndim if is_array(a) else int(np.ndim(a))


def shape(a):
    """The shape of ``a`` (an array, a scalar or a nested list), as ``jnp.shape``.

    Example:
        >>> qb.shape(qb.ones((2, 3))), qb.shape(1.0)
        ((2, 3), ())
    """
    if is_array(a):
        return tuple(a.shape)
    try:
        return tuple(np.shape(a))
    except ValueError:
        raise ArgumentTypeError(f"shape: a must be an array, a scalar or a rectangular nested list, got a ragged {type(a).__name__}") from None


def size(a, axis=None):
    """The number of elements of ``a``, or along ``axis`` (an int or a tuple), as
    ``jnp.size``.

    Example:
        >>> qb.size(qb.ones((2, 3))), qb.size(qb.ones((2, 3)), axis=1)
        (6, 3)
    """
    s = shape(a)
    axes = _o._norm_axes("size", axis, s)
    return math.prod(s[i] for i in axes)


def iscomplex(x):
    """Elementwise test for a nonzero imaginary part: all False (Quabla has no complex dtypes).

    Example:
        >>> qb.iscomplex(qb.array([1.0, 2.0])).tolist()
        [False, False]
    """
    return _o.zeros_like(_to_array(x), dtype=bool_)


def isreal(x):
    """Elementwise test for a zero imaginary part: all True (Quabla has no complex dtypes).

    Example:
        >>> qb.isreal(qb.array([1.0, 2.0])).tolist()
        [True, True]
    """
    return _o.ones_like(_to_array(x), dtype=bool_)


def iscomplexobj(x):
    """True when ``x`` has a complex dtype or is a complex number (never for Quabla arrays).

    Example:
        >>> qb.iscomplexobj(qb.array([1.0])), qb.iscomplexobj(1j)
        (False, True)
    """
    if is_array(x) or isinstance(x, DType):
        return False
    return bool(np.iscomplexobj(x))


def isrealobj(x):
    """``not iscomplexobj(x)``.

    Example:
        >>> qb.isrealobj(qb.array([1.0]))
        True
    """
    return not iscomplexobj(x)


def real(val, /):
    """The real part: the array itself (Quabla's dtypes are real).

    Example:
        >>> qb.real(qb.array([1.5, -2.0])).tolist()
        [1.5, -2.0]
    """
    return _to_array(val)


def imag(val, /):
    """The imaginary part: zeros of the array's shape and dtype (Quabla's dtypes are real).

    Example:
        >>> qb.imag(qb.array([1.5, -2.0])).tolist()
        [0.0, 0.0]
    """
    return _o.zeros_like(_to_array(val))


def conj(x, /):
    """The complex conjugate: the array itself (Quabla's dtypes are real).

    Example:
        >>> qb.conj(qb.array([1.5])).tolist()
        [1.5]
    """
    return _to_array(x)


conjugate = conj


def angle(z, deg=False):
    """The argument of each value as a complex number: 0 for non-negative reals, pi for
    negative ones and -0.0 (``atan2(0, z)``, as ``jnp.angle``; degrees with ``deg``). Integers,
    bools and 0-d float arrays give float64, as JAX.

    Example:
        >>> qb.angle(qb.array([2.0, -1.0])).tolist()
        [0.0, 3.141592653589793]
    """
    z = _to_array(z)
    if not z.dtype.is_float or z.ndim == 0:
        z = astype(z, float64)
    r = bind(_o._op("atan2"), _o.zeros_like(z), z)
    return rad2deg(r) if deg else r


# ---------------------------------------------------------------------------------------------
# Reductions and statistics


def _axes(name, axis, shape):
    return _o._norm_axes(name, axis, shape)


def ptp(a, axis=None, out=None, keepdims=False):
    """The range ``max - min`` over ``axis`` (``jnp.ptp``); bools raise DTypeError, as JAX.

    Example:
        >>> qb.ptp(qb.array([[1, 5], [7, 2]]), axis=1).tolist()
        [4, 5]
    """
    _no_out("ptp", out)
    x = _to_array(a)
    if x.dtype.is_bool:
        raise DTypeError(f"ptp: bool_ input of shape {_shape_str(x.shape)} is not supported (as jax.numpy); convert with astype")
    return _o.max(x, axis, keepdims=keepdims) - _o.min(x, axis, keepdims=keepdims)


def count_nonzero(a, axis=None, keepdims=False):
    """The number (int64) of nonzero values over ``axis`` (``jnp.count_nonzero``).

    Example:
        >>> qb.count_nonzero(qb.array([[0, 1], [2, 3]]), axis=0).tolist()
        [1, 2]
    """
    x = _to_array(a)
    return _o.sum(x != 0, axis, dtype=int64, keepdims=keepdims)


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """The weighted mean over ``axis`` (``jnp.average``): ``sum(a * w) / sum(w)``; ``weights``
    of ``a``'s shape or, with ``axis``, of the extents of the reduced axes; ``returned`` also
    gives the sum of the weights (broadcast to the result). Integers give a float as :func:`quabla.mean`.

    Example:
        >>> qb.average(qb.array([1.0, 2.0, 4.0]), weights=qb.array([1.0, 1.0, 2.0])).item()
        2.75
    """
    name = "average"
    returned = _o._bool_arg(name, "returned", returned)
    if weights is None:
        (x,) = _promote(name, a, inexact=True)
        axes = _axes(name, axis, x.shape)
        avg = _o.mean(x, axis, keepdims=keepdims)
        wsum = _o.full((), math.prod(x.shape[i] for i in axes), dtype=x.dtype)
    else:
        x, w = _promote(name, a, weights, inexact=True)
        if x.shape != w.shape:
            if axis is None:
                raise ShapeError(f"{name}: axis must be given when the shapes of a {_shape_str(x.shape)} and weights {_shape_str(w.shape)} differ")
            order = axis if isinstance(axis, (tuple, list)) else (axis,)
            given = tuple(_o._norm_axis(name, i, x.ndim, x.shape) for i in order)
            if w.shape != tuple(x.shape[i] for i in given):
                raise ShapeError(f"{name}: weights of shape {_shape_str(w.shape)} must have the extents of a {_shape_str(x.shape)} along axis {axis}")
            w = _o.transpose(w, tuple(int(i) for i in np.argsort(given)))
            w = _o.reshape(w, tuple(n if i in given else 1 for i, n in enumerate(x.shape)))
        wsum = _o.sum(_o.broadcast_to(w, x.shape) if w.shape != x.shape else w, axis, keepdims=keepdims)
        avg = _o.sum(x * w, axis, keepdims=keepdims) / wsum
    if returned:
        if wsum.shape != avg.shape:
            wsum = _o.broadcast_to(wsum, avg.shape)
        return avg, wsum
    return avg


def _nan_reduction(name, red, fill, nan_if_all, a, axis, keepdims, where_, **kw):
    x = _to_array(a)
    if not x.dtype.is_float:
        return red(x, axis=axis, keepdims=keepdims, where=where_, **kw)
    isn = _isnan(x)
    r = red(where(isn, fill, x), axis=axis, keepdims=keepdims, where=where_, **kw)
    if nan_if_all:
        r = where(_o.all(isn, axis, keepdims=keepdims), math.nan, r)
    return r


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Sum over ``axis`` treating NaN as 0 (``jnp.nansum``; ``dtype``, ``initial`` and ``where``
    as :func:`quabla.sum`).

    Example:
        >>> qb.nansum(qb.array([1.0, float("nan"), 2.0])).item()
        3.0
    """
    _no_out("nansum", out)
    return _nan_reduction("nansum", _o.sum, 0, False, a, axis, keepdims, where, dtype=dtype, initial=initial)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Product over ``axis`` treating NaN as 1 (``jnp.nanprod``; ``dtype``, ``initial`` and
    ``where`` as :func:`quabla.prod`).

    Example:
        >>> qb.nanprod(qb.array([2.0, float("nan"), 3.0])).item()
        6.0
    """
    _no_out("nanprod", out)
    return _nan_reduction("nanprod", _o.prod, 1, False, a, axis, keepdims, where, dtype=dtype, initial=initial)


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Maximum over ``axis`` ignoring NaN (``jnp.nanmax``): NaN where every value is NaN
    (unless ``initial`` is given); ``where`` needs ``initial``, as :func:`quabla.max`.

    Example:
        >>> qb.nanmax(qb.array([[1.0, float("nan")], [float("nan"), float("nan")]]), axis=1).tolist()
        [1.0, nan]
    """
    _no_out("nanmax", out)
    return _nan_reduction("nanmax", _o.max, -math.inf, initial is None, a, axis, keepdims, where, initial=initial)


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Minimum over ``axis`` ignoring NaN (``jnp.nanmin``): NaN where every value is NaN
    (unless ``initial`` is given).

    Example:
        >>> qb.nanmin(qb.array([3.0, float("nan"), 2.0])).item()
        2.0
    """
    _no_out("nanmin", out)
    return _nan_reduction("nanmin", _o.min, math.inf, initial is None, a, axis, keepdims, where, initial=initial)


def _not_nan_count(x, axis, dtype, keepdims, where_):
    return _o.sum(~_isnan(x), axis, dtype=dtype, keepdims=keepdims, where=where_)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    """Mean over ``axis`` of the non-NaN values (``jnp.nanmean``; NaN where all are NaN;
    integers give a float; ``dtype`` and ``where`` as :func:`quabla.mean`).

    Example:
        >>> qb.nanmean(qb.array([1.0, float("nan"), 3.0])).item()
        2.0
    """
    _no_out("nanmean", out)
    x = _to_array(a)
    if not x.dtype.is_float:
        return _o.mean(x, axis, dtype, keepdims=keepdims, where=where)
    d = x.dtype if dtype is None else _dt.dtype(dtype, "nanmean")
    c = _dt.to_inexact(d)  # an integer dtype= is the result's: computed in a float, then cast
    n = _not_nan_count(x, axis, c, keepdims, where)
    r = nansum(x, axis, dtype=c, keepdims=keepdims, where=where) / n
    return r if r.dtype is d else astype(r, d)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None):
    """Variance over ``axis`` of the non-NaN values (``jnp.nanvar``): the squared deviations
    from ``mean`` (default their mean) summed and divided by ``count - ddof``; NaN where that
    is <= 0. Integers give a float as :func:`quabla.mean`.

    Example:
        >>> qb.nanvar(qb.array([1.0, float("nan"), 3.0])).item()
        1.0
    """
    name = "nanvar"
    _no_out(name, out)
    x = _to_array(a)
    d = _dt.to_inexact(x.dtype) if dtype is None else _dt.dtype(dtype, name)
    if not d.is_float:
        raise DTypeError(f"{name}: dtype must be a float dtype, got {d.name}")
    x = astype(x, d)
    m = nanmean(x, axis, keepdims=True, where=where) if mean is None else astype(_to_array(mean), d)
    isn = _isnan(x)
    sel = _o._where_fn  # `where` is the mask argument here
    c = sel(isn, 0.0, x - m)
    n = _o.sum(~isn, axis, keepdims=keepdims, where=where) - ddof
    bad = n <= 0
    s = _o.sum(c * c, axis, keepdims=keepdims, where=where)
    return sel(bad, math.nan, s) / astype(sel(bad, 1, n), d)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None):
    """Standard deviation over ``axis`` of the non-NaN values: ``sqrt(nanvar(...))``
    (``jnp.nanstd``).

    Example:
        >>> qb.nanstd(qb.array([1.0, float("nan"), 3.0])).item()
        1.0
    """
    return _o.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where, mean))


def _nanarg(name, fn, fill, a, axis, out, keepdims):
    _no_out(name, out)
    x = _to_array(a)
    keepdims = bool(keepdims)
    if not x.dtype.is_float:
        return fn(x, axis, keepdims=keepdims)
    isn = _isnan(x)
    r = fn(where(isn, fill, x), axis, keepdims=keepdims)
    return where(_o.all(isn, axis, keepdims=keepdims), -1, r)


def nanargmax(a, axis=None, out=None, keepdims=None):
    """Index (int64) of the first maximum along ``axis`` ignoring NaN (``jnp.nanargmax``); -1
    where every value is NaN (NumPy raises), as JAX.

    Example:
        >>> qb.nanargmax(qb.array([float("nan"), 3.0, 1.0])).item()
        1
    """
    return _nanarg("nanargmax", _o.argmax, -math.inf, a, axis, out, keepdims)


def nanargmin(a, axis=None, out=None, keepdims=None):
    """Index (int64) of the first minimum along ``axis`` ignoring NaN (``jnp.nanargmin``); -1
    where every value is NaN, as JAX.

    Example:
        >>> qb.nanargmin(qb.array([float("nan"), 3.0, 1.0])).item()
        2
    """
    return _nanarg("nanargmin", _o.argmin, math.inf, a, axis, out, keepdims)


def nancumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum along ``axis`` (None: flattened) treating NaN as 0 (``jnp.nancumsum``).

    Example:
        >>> qb.nancumsum(qb.array([1.0, float("nan"), 2.0])).tolist()
        [1.0, 1.0, 3.0]
    """
    _no_out("nancumsum", out)
    x = _to_array(a)
    if x.dtype.is_float:
        x = where(_isnan(x), 0.0, x)
    return _cumsum(x, axis, dtype)


def nancumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product along ``axis`` (None: flattened) treating NaN as 1
    (``jnp.nancumprod``).

    Example:
        >>> qb.nancumprod(qb.array([2.0, float("nan"), 3.0])).tolist()
        [2.0, 2.0, 6.0]
    """
    _no_out("nancumprod", out)
    x = _to_array(a)
    if x.dtype.is_float:
        x = where(_isnan(x), 1.0, x)
    return _cumprod(x, axis, dtype)


_QUANTILE_METHODS = ("linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf")


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None):
    """The ``q``-th quantiles (``q`` in [0, 1], a scalar or 1-D) of the non-NaN values of ``a``
    over ``axis`` (None: all; an int or a tuple), as ``jnp.nanquantile``: each lane's sorted
    values (NaN sorts last) at ``q * (count - 1)``, by ``method`` ('linear', 'lower',
    'higher', 'nearest', 'midpoint'), or with 'inverted_cdf' the first sorted value whose
    cumulative weight reaches ``q`` of the total; NaN where every value is NaN. The
    quantiles' dims come first. ``weights`` (method 'inverted_cdf' only, as JAX): of ``a``'s
    shape or, with an int ``axis``, of that axis' extent.

    Example:
        >>> qb.nanquantile(qb.array([4.0, float("nan"), 1.0, 3.0, 2.0]), 0.5).item()
        2.5
    """
    name = "nanquantile"
    _no_out(name, out)
    if overwrite_input:
        raise UnsupportedOperationError(f"{name}: overwrite_input=True is not supported (arrays are immutable)", op=name)
    if not isinstance(method, str) or method not in _QUANTILE_METHODS:
        raise InvalidArgumentError(f"{name}: method must be one of {_QUANTILE_METHODS}, got {method!r}")
    x = _to_array(a)
    w = None
    if weights is not None:
        x, w = _quantile_weights(name, x, weights, axis if isinstance(axis, (int, np.integer)) else None, method)
    x = _floatify(x)
    shp = x.shape
    axes = _axes(name, axis, shp)
    keep_shape = tuple(1 if i in axes else n for i, n in enumerate(shp))
    rest = tuple(i for i in range(x.ndim) if i not in axes)

    def lanes(v):
        v = _o.transpose(v, rest + axes) if rest + axes != tuple(range(v.ndim)) else v
        return _o.reshape(v, tuple(shp[i] for i in rest) + (math.prod(shp[i] for i in axes),))

    x = lanes(x)
    qs = _to_array(q)
    if qs.ndim > 1:
        raise ShapeError(f"{name}: q must be a scalar or 1-D, got shape {_shape_str(qs.shape)}")
    qs = astype(qs, x.dtype)
    if method == "inverted_cdf":
        cnt = _o.sum(~_isnan(x), -1)
        r = _inverted_cdf(x, None if w is None else lanes(w), qs, x.ndim - 1, cnt)
        return _o.reshape(r, qs.shape + keep_shape) if keepdims else r
    s = _sort(x, axis=-1)
    cnt = astype(_o.sum(~_isnan(x), -1, keepdims=True), x.dtype)  # (rest..., 1)
    qcol = _o.reshape(qs, qs.shape + (1,) * x.ndim)  # (q..., 1, ..., 1)
    pos = qcol * (cnt - 1)
    lo, hi = _o.floor(pos), _o.ceil(pos)
    hw = pos - lo
    top = cnt - 1

    def at(i):
        i = astype(_o.maximum(0.0, _o.minimum(i, top)), int64)
        src = _o.reshape(s, (1,) * qs.ndim + s.shape) if qs.ndim else s
        return _take_along_axis(src, i, axis=-1)

    vlo, vhi = at(lo), at(hi)
    if method == "linear":
        r = vlo * (1 - hw) + vhi * hw
    elif method == "lower":
        r = vlo
    elif method == "higher":
        r = vhi
    elif method == "nearest":
        r = where(hw <= 0.5, vlo, vhi)
    else:
        r = (vlo + vhi) * 0.5
    r = _o.reshape(r, qs.shape + tuple(shp[i] for i in rest))
    if keepdims:
        r = _o.reshape(r, qs.shape + keep_shape)
    return r


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None):
    """:func:`nanquantile` with ``q`` in percent (``jnp.nanpercentile``).

    Example:
        >>> qb.nanpercentile(qb.array([1.0, float("nan"), 3.0]), 50.0).item()
        2.0
    """
    return nanquantile(a, _to_array(q) / 100.0, axis, out, overwrite_input, method, keepdims, weights=weights)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median of the non-NaN values over ``axis`` (``jnp.nanmedian``: the 0.5
    :func:`nanquantile` by 'midpoint').

    Example:
        >>> qb.nanmedian(qb.array([3.0, float("nan"), 1.0, 2.0])).item()
        2.0
    """
    return nanquantile(a, 0.5, axis, out, overwrite_input, "midpoint", keepdims)


def _atleast_2d(x):
    return _o.reshape(x, (1,) * (2 - x.ndim) + x.shape) if x.ndim < 2 else x


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, dtype=None):
    """The covariance matrix of the variables in the rows of ``m`` (columns when not
    ``rowvar``), ``y`` adding variables (``jnp.cov``): normalized by ``N - 1`` (``N`` with
    ``bias``, ``N - ddof`` with ``ddof``), with integer frequency weights ``fweights`` and
    observation weights ``aweights`` (their absolute values, as JAX). A 0-d result for one
    variable.

    Example:
        >>> qb.cov(qb.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
        [[1.0, -1.0], [-1.0, 1.0]]
    """
    name = "cov"
    mm, yy = _promote(name, m, y, inexact=True)
    if mm.ndim > 2 or (yy is not None and yy.ndim > 2):
        ys = None if yy is None else _shape_str(yy.shape)
        raise ShapeError(f"{name}: m and y must have at most 2 dimensions, got shapes {_shape_str(mm.shape)} and {ys}")
    if dtype is not None:
        dtype = _dt.dtype(dtype, name)
        if not dtype.is_float:
            raise DTypeError(f"{name}: dtype must be a float dtype, got {dtype.name}")
    rowvar = _o._bool_arg(name, "rowvar", rowvar)
    x = _atleast_2d(mm)
    if not rowvar and mm.ndim != 1:
        x = _o.transpose(x)
    if yy is not None:
        y2 = _atleast_2d(yy)
        if not rowvar and y2.shape[0] != 1:
            y2 = _o.transpose(y2)
        if y2.shape[1] != x.shape[1]:
            raise ShapeError(f"{name}: m and y must have the same number of observations, got {x.shape[1]} and {y2.shape[1]}")
        x = _o.concatenate([x, y2], axis=0)
    nobs = x.shape[1]
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    if fweights is not None:
        fw = _to_array(fweights)
        if fw.ndim != 1 or fw.shape[0] != nobs:
            raise ShapeError(f"{name}: fweights must be 1-D of the {nobs} observations, got shape {_shape_str(fw.shape)}")
        if not fw.dtype.is_int:
            raise DTypeError(f"{name}: fweights must be integers, got {fw.dtype.name}")
        w = _o.abs(fw)
    aw = None
    if aweights is not None:
        aw = _to_array(aweights)
        if aw.ndim != 1 or aw.shape[0] != nobs:
            raise ShapeError(f"{name}: aweights must be 1-D of the {nobs} observations, got shape {_shape_str(aw.shape)}")
        aw = _o.abs(aw)
        w = aw if w is None else w * aw
    if dtype is not None:
        x = astype(x, dtype)
    if w is not None:
        x, w = _promote(name, x, w, inexact=True)
        if aw is not None:
            aw = astype(aw, x.dtype)
    avg, wsum = average(x, axis=1, weights=None if w is None else _o.broadcast_to(w, x.shape), returned=True)
    wsum = wsum[0]
    if w is None:
        f = nobs - ddof
    elif ddof == 0:
        f = wsum
    elif aw is None:
        f = wsum - ddof
    else:
        f = wsum - ddof * _o.sum(w * aw) / wsum
    x = x - _o.expand_dims(avg, 1)
    xt = _o.transpose(x if w is None else x * w)
    c = _o.matmul(x, xt) / f
    return _o.reshape(c, ()) if c.shape == (1, 1) else c


def corrcoef(x, y=None, rowvar=True, dtype=None):
    """Pearson correlation coefficients, ``cov / outer(std, std)`` clipped to [-1, 1]
    (``jnp.corrcoef``; a 0-d result for one variable: 1, or NaN for a constant one).

    Example:
        >>> qb.corrcoef(qb.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
        [[1.0, -1.0], [-1.0, 1.0]]
    """
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    sd = _o.sqrt(_diag(c))
    c = c / _o.expand_dims(sd, 1) / _o.expand_dims(sd, 0)
    return _o.clip(c, -1, 1)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of ``y`` along ``axis`` by the trapezoid rule (``jnp.trapezoid``): at the
    sample points ``x`` (1-D, or ``y``'s shape), else with spacing ``dx``. Integers give
    float64.

    Example:
        >>> qb.trapezoid(qb.array([1.0, 2.0, 3.0])).item()
        4.0
        >>> qb.trapezoid(qb.array([1.0, 2.0, 3.0]), x=qb.array([0.0, 1.0, 3.0])).item()
        6.5
    """
    name = "trapezoid"
    if x is None:
        (ya,) = _promote(name, y, inexact=True)
        d = _to_array(dx) if is_array(dx) or not isinstance(dx, (int, float)) else dx
        if is_array(d) and d.ndim > 0:
            d = _o.reshape(d, (1,) * (ya.ndim - d.ndim) + d.shape)
            d = _moveaxis(d, axis, -1)
    else:
        ya, xa = _promote(name, y, x, inexact=True)
        d = _diff(xa) if xa.ndim == 1 else _moveaxis(_diff(xa, axis=axis), axis, -1)
    ya = _moveaxis(ya, axis, -1)
    if not is_array(d) or d.ndim == 0 or d.shape[-1] == 1:
        if is_array(d) and d.ndim:
            d = d[..., 0]
        return d * (_o.sum(ya, -1) - 0.5 * (ya[..., 0] + ya[..., -1]))
    return 0.5 * _o.sum(d * (ya[..., 1:] + ya[..., :-1]), -1)


def gradient(f, *varargs, axis=None, edge_order=None):
    """The gradient of the sampled ``f`` along ``axis`` (None: every axis; a list of arrays
    for several): central differences inside, one-sided first differences at the edges
    (``jnp.gradient``); ``varargs`` one spacing for all axes or one per axis, each a scalar or
    the 1-D coordinates along its axis. ``edge_order`` 1 only (JAX accepts only None).

    Example:
        >>> qb.gradient(qb.array([1.0, 2.0, 4.0, 7.0])).tolist()
        [1.0, 1.5, 2.5, 3.0]
    """
    name = "gradient"
    if edge_order not in (None, 1):
        raise UnsupportedOperationError(f"{name}: edge_order={edge_order!r} is not supported (only 1)", op=name)
    a = _floatify(_to_array(f))
    axes = _axes(name, axis, a.shape) if not isinstance(axis, (list, tuple)) else tuple(_o._norm_axis(name, i, a.ndim, a.shape) for i in axis)
    if not axes:
        return []
    if builtins.min(a.shape[i] for i in axes) < 2:
        raise ShapeError(f"{name}: every differentiated axis needs at least 2 samples, got shape {_shape_str(a.shape)}")
    if len(varargs) == 0:
        hs = [1.0] * len(axes)
    elif len(varargs) == 1:
        hs = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        hs = list(varargs)
    else:
        raise ArgumentTypeError(f"{name}: {len(varargs)} spacing arguments for {len(axes)} axes (give 0, 1 or one per axis)")

    def sl(v, ax, lo, hi):
        n = v.shape[ax]
        lo = lo + n if lo < 0 else lo
        hi = n if hi is None else hi + n if hi < 0 else hi
        return _o._slice_axis(v, ax, lo, hi, 1)

    def along(h, ax):
        n = a.shape[ax]
        if is_array(h) or isinstance(h, (np.ndarray, list, tuple)):
            h = astype(_to_array(h), a.dtype) if a.dtype.is_float else _to_array(h)
            if h.ndim > 1:
                raise ShapeError(f"{name}: spacing must be a scalar or 1-D, got shape {_shape_str(h.shape)}")
        if is_array(h) and h.ndim == 1:
            if h.shape[0] != n:
                raise ShapeError(f"{name}: coordinates of length {h.shape[0]} along axis {ax} of extent {n}")
            h = _o.reshape(h, tuple(n if i == ax else 1 for i in range(a.ndim)))
            first = (sl(a, ax, 1, 2) - sl(a, ax, 0, 1)) / (sl(h, ax, 1, 2) - sl(h, ax, 0, 1))
            last = (sl(a, ax, -1, None) - sl(a, ax, -2, -1)) / (sl(h, ax, -1, None) - sl(h, ax, -2, -1))
            if n == 2:
                return _o.concatenate([first, last], axis=ax)
            d1 = sl(h, ax, 1, -1) - sl(h, ax, 0, -2)
            d2 = sl(h, ax, 2, None) - sl(h, ax, 1, -1)
            inner = (-d2 / (d1 * (d1 + d2))) * sl(a, ax, 0, -2) + ((d2 - d1) / (d1 * d2)) * sl(a, ax, 1, -1)
            inner = inner + (d1 / (d2 * (d1 + d2))) * sl(a, ax, 2, None)
        else:
            first = (sl(a, ax, 1, 2) - sl(a, ax, 0, 1)) / h
            last = (sl(a, ax, -1, None) - sl(a, ax, -2, -1)) / h
            if n == 2:
                return _o.concatenate([first, last], axis=ax)
            inner = (sl(a, ax, 2, None) - sl(a, ax, 0, -2)) * 0.5 / h
        return _o.concatenate([first, inner, last], axis=ax)

    out = [along(h, ax) for h, ax in zip(hs, axes)]
    return out[0] if len(out) == 1 else out


def ediff1d(ary, to_end=None, to_begin=None):
    """The differences of consecutive values of the flattened ``ary``, with ``to_begin`` /
    ``to_end`` (cast to its dtype) joined at the ends (``jnp.ediff1d``). An empty result is a
    ShapeError (Quabla has no zero-extent arrays).

    Example:
        >>> qb.ediff1d(qb.array([1, 2, 4, 7]), to_begin=-99).tolist()
        [-99, 1, 2, 3]
    """
    x = _o.ravel(_to_array(ary))
    parts = []
    if to_begin is not None:
        parts.append(_o.ravel(_to_array(to_begin, x.dtype)))
    if x.shape[0] > 1:
        parts.append(x[1:] - x[:-1])
    if to_end is not None:
        parts.append(_o.ravel(_to_array(to_end, x.dtype)))
    if not parts:
        raise ShapeError(f"ediff1d: an array of shape {_shape_str(x.shape)} has no differences and zero-extent results are not supported")
    return parts[0] if len(parts) == 1 else _o.concatenate(parts)


def unwrap(p, discont=None, axis=-1, period=2 * math.pi):
    """Unwraps the phases ``p`` along ``axis`` (``jnp.unwrap``): jumps between neighbours of
    more than ``max(discont, period / 2)`` are moved by multiples of ``period``. Integer
    ``p`` gives float64 with a float ``period``.

    Example:
        >>> [round(v, 6) for v in qb.unwrap(qb.array([0.0, 3.0, 6.5, 0.5])).tolist()]
        [0.0, 3.0, 0.216815, 0.5]
    """
    name = "unwrap"
    x = _to_array(p)
    d = result_type(x, period)
    x = astype(x, d)
    per = astype(period, d) if is_array(period) else (int(period) if d.is_int else float(period))
    ax = _o._norm_axis(name, axis, x.ndim, x.shape)
    if x.shape[ax] < 2:
        return x
    if discont is None:
        discont = per / 2
    interval = per // 2 if d.is_int else per / 2
    dd = _diff(x, axis=ax)
    ddmod = _o.remainder(dd + interval, per) - interval
    ddmod = where((ddmod == -interval) & (dd > 0), interval, ddmod)
    corr = where(_o.abs(dd) < discont, 0, ddmod - dd)
    n = x.shape[ax]
    return _o.concatenate([_o._slice_axis(x, ax, 0, 1, 1), _o._slice_axis(x, ax, 1, n, 1) + _cumsum(corr, axis=ax)], axis=ax)


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of 2- or 3-vectors along ``axisa`` of ``a`` and ``axisb`` of ``b``
    (the others broadcast), the result's vectors along ``axisc`` (``jnp.cross``; ``axis`` sets
    all three). Two 2-vectors give the z component (a scalar per pair).

    Example:
        >>> qb.cross(qb.array([1.0, 0.0, 0.0]), qb.array([0.0, 1.0, 0.0])).tolist()
        [0.0, 0.0, 1.0]
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = _promote("cross", a, b)
    a, b = _moveaxis(a, axisa, -1), _moveaxis(b, axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ShapeError(f"cross: the vectors must have 2 or 3 components, got shapes {_shape_str(a.shape)} and {_shape_str(b.shape)} (vectors last)")
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    if a.shape[-1] == 3 and a.shape == b.shape:
        # The components rotated, one elementwise product over the vectors: per component
        # (strided columns, each into a buffer of its own) then stacked, [1000003, 3] f32 took
        # 1563 us against JAX's 699; 476 this way. (A roll's gradient is a roll. With a
        # broadcast operand, [1000, 3] by [3], the components were faster: 3.3 against 9.2.)
        r1, r2 = (lambda v: _roll(v, -1, -1)), (lambda v: _roll(v, -2, -1))
        return _moveaxis(r1(a) * r2(b) - r2(a) * r1(b), -1, axisc)
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    c2 = a0 * b1 - a1 * b0
    if a.shape[-1] == 3 and b.shape[-1] == 3:
        a2, b2 = a[..., 2], b[..., 2]
        c0, c1 = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2
    elif a.shape[-1] == 3:
        a2 = a[..., 2]
        c0, c1 = -a2 * b1, a2 * b0
    else:
        b2 = b[..., 2]
        c0, c1 = a1 * b2, -a0 * b2
    c0, c1, c2 = (_o.broadcast_to(c, _o._bcast_shapes("cross", c0.shape, c1.shape, c2.shape)) for c in (c0, c1, c2))
    c = _o.stack([c0, c1, c2], axis=-1)
    return _moveaxis(c, -1, axisc)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """The dot products of the vectors along ``axis`` (the other axes broadcast), as
    ``jnp.vecdot`` (real dtypes: no conjugation). ``precision`` and
    ``preferred_element_type`` are not supported.

    Example:
        >>> qb.vecdot(qb.array([[1.0, 2.0], [3.0, 4.0]]), qb.array([1.0, 1.0])).tolist()
        [3.0, 7.0]
    """
    name = "vecdot"
    if precision is not None or preferred_element_type is not None:
        raise UnsupportedOperationError(f"{name}: precision and preferred_element_type are not supported", op=name)
    x1, x2 = _promote(name, x1, x2)
    a1 = _o._norm_axis(name, axis, x1.ndim, x1.shape)
    a2 = _o._norm_axis(name, axis, x2.ndim, x2.shape)
    if x1.shape[a1] != x2.shape[a2]:
        raise ShapeError(f"{name}: the vector axes must match, got shapes {_shape_str(x1.shape)} and {_shape_str(x2.shape)} with axis={axis}")
    x1, x2 = _moveaxis(x1, a1, -1), _moveaxis(x2, a2, -1)
    return _o.sum(x1 * x2, -1, dtype=x1.dtype)  # the operands' dtype (bools: an or of ands), as JAX


def matvec(x1, x2, /):
    """Matrix-vector products (``jnp.matvec``): ``x1`` of shape (..., n, m) times ``x2`` of
    shape (..., m), the batch dims broadcast; shape (..., n).

    Example:
        >>> qb.matvec(qb.array([[1.0, 2.0], [3.0, 4.0]]), qb.array([1.0, -1.0])).tolist()
        [-1.0, -1.0]
    """
    _required("matvec", x1=x1, x2=x2)
    x1, x2 = _promote("matvec", x1, x2)
    if x1.ndim < 2 or x2.ndim < 1 or x1.shape[-1] != x2.shape[-1]:
        raise ShapeError(f"matvec: expected shapes (..., n, m) and (..., m), got {_shape_str(x1.shape)} and {_shape_str(x2.shape)}")
    return _o.sum(x1 * _o.expand_dims(x2, -2), -1, dtype=x1.dtype)


def vecmat(x1, x2, /):
    """Vector-matrix products (``jnp.vecmat``): ``x1`` of shape (..., n) times ``x2`` of shape
    (..., n, m), the batch dims broadcast; shape (..., m).

    Example:
        >>> qb.vecmat(qb.array([1.0, -1.0]), qb.array([[1.0, 2.0], [3.0, 4.0]])).tolist()
        [-2.0, -2.0]
    """
    _required("vecmat", x1=x1, x2=x2)
    x1, x2 = _promote("vecmat", x1, x2)
    if x1.ndim < 1 or x2.ndim < 2 or x1.shape[-1] != x2.shape[-2]:
        raise ShapeError(f"vecmat: expected shapes (..., n) and (..., n, m), got {_shape_str(x1.shape)} and {_shape_str(x2.shape)}")
    return _o.sum(_o.expand_dims(x1, -1) * x2, -2, dtype=x1.dtype)


# ---------------------------------------------------------------------------------------------
# Polynomials (coefficients highest power first, as NumPy's poly1d)


def _poly_arg(name, p):
    p = _to_array(p)
    if p.ndim == 0:
        p = _o.reshape(p, (1,))
    return p


def _static_int(name, arg, v):
    if isinstance(v, Tracer):
        raise _errors.ConcretizationTypeError(f"{name}: {arg} must be a static Python int, got a traced value")
    return _o._int_arg(name, arg, v)


_POLYVAL_SCAN = 64


def polyval(p, x, *, unroll=16):
    """The polynomial with coefficients ``p`` (highest power first; ``p``'s trailing dims
    broadcast against ``x``) at ``x``, by Horner's rule (``jnp.polyval``): an unrolled loop up
    to 64 coefficients, a ``scan`` beyond. Integer inputs stay integers.

    Example:
        >>> qb.polyval(qb.array([1.0, 0.0, -2.0]), qb.array([0.0, 2.0])).tolist()
        [-2.0, 2.0]
    """
    _required("polyval", p=p, x=x)
    p, xa = _promote("polyval", _poly_arg("polyval", p), x)
    out_shape = _o._bcast_shapes("polyval", p.shape[1:], xa.shape)
    y = _o.zeros(out_shape, xa.dtype)
    if p.shape[0] <= _POLYVAL_SCAN:
        for i in range(p.shape[0]):
            y = y * xa + p[i]
        return y
    return _scan(lambda c, pi_: (c * xa + pi_, None), y, p, unroll=unroll)[0]


def _poly_pair(name, a1, a2, inexact=False):
    a1, a2 = _promote(name, _poly_arg(name, a1), _poly_arg(name, a2), inexact=inexact)
    return a1, a2


def polyadd(a1, a2):
    """The sum of two polynomials (``jnp.polyadd``: the shorter aligned with the end of the
    longer).

    Example:
        >>> qb.polyadd(qb.array([1.0, 2.0]), qb.array([1.0, 1.0, 1.0])).tolist()
        [1.0, 2.0, 3.0]
    """
    a1, a2 = _poly_pair("polyadd", a1, a2)
    if a2.shape[0] > a1.shape[0]:
        a1, a2 = a2, a1
    k = a1.shape[0] - a2.shape[0]
    if k == 0:
        return a1 + a2
    return _o.concatenate([a1[:k], a1[k:] + a2])


def polysub(a1, a2):
    """The difference of two polynomials (``jnp.polysub``).

    Example:
        >>> qb.polysub(qb.array([1.0, 2.0]), qb.array([1.0, 1.0, 1.0])).tolist()
        [-1.0, 0.0, 1.0]
    """
    a1, a2 = _poly_pair("polysub", a1, a2)
    if a1.dtype.is_bool:
        raise DTypeError("polysub: bool_ coefficients are not supported (as jax.numpy)")
    return polyadd(a1, -a2)


def _trim_front(name, a):
    if isinstance(a, Tracer):
        raise _errors.ConcretizationTypeError(
            f"{name}: trim_leading_zeros=True needs concrete coefficients (its output length depends on them); "
            "inside jit pass trim_leading_zeros=False"
        )
    nz = np.flatnonzero(np.asarray(a) != 0)
    return a[int(nz[0]):] if nz.size and nz[0] > 0 else a if nz.size else a[-1:]


def polymul(a1, a2, *, trim_leading_zeros=False):
    """The product of two polynomials: the full convolution of their coefficients
    (``jnp.polymul``; floats). ``trim_leading_zeros`` drops leading zeros first (needs
    concrete coefficients: a TracerError inside jit).

    Example:
        >>> qb.polymul(qb.array([1.0, 1.0]), qb.array([1.0, -1.0])).tolist()
        [1.0, 0.0, -1.0]
    """
    a1, a2 = _poly_pair("polymul", a1, a2, inexact=True)
    if trim_leading_zeros and (a1.shape[0] > 1 or a2.shape[0] > 1):
        a1, a2 = _trim_front("polymul", a1), _trim_front("polymul", a2)
    return _convolve(a1, a2, mode="full")


def polyder(p, m=1):
    """The ``m``-th derivative of the polynomial ``p`` (``jnp.polyder``; floats). A derivative
    that leaves no coefficients (``m >= len(p)``) is a ShapeError (JAX returns an empty
    array; Quabla has no zero-extent arrays).

    Example:
        >>> qb.polyder(qb.array([1.0, 1.0, 1.0, 1.0]), 2).tolist()
        [6.0, 2.0]
    """
    name = "polyder"
    m = _static_int(name, "m", m)
    (pa,) = _promote(name, _poly_arg(name, p), inexact=True)
    if m < 0:
        raise InvalidArgumentError(f"{name}: the order m must be >= 0, got {m}")
    if m == 0:
        return pa
    n = pa.shape[0]
    if m >= n:
        raise ShapeError(f"{name}: the derivative of order {m} of a polynomial of {n} coefficients is empty (zero-extent results are not supported)")
    powers = np.arange(n - 1, m - 1, -1, dtype=np.float64)  # the powers of p[:-m]
    coeff = np.prod([powers - j for j in range(m)], axis=0)
    return pa[: n - m] * _o.array(coeff, dtype=pa.dtype)


def polyint(p, m=1, k=None):
    """The ``m``-th antiderivative of the polynomial ``p`` (``jnp.polyint``; floats), the
    integration constants ``k`` (a scalar, or ``m`` values) appended to the
    coefficients and divided like them, as JAX.

    Example:
        >>> qb.polyint(qb.array([3.0, 2.0, 1.0])).tolist()
        [1.0, 1.0, 1.0, 0.0]
    """
    name = "polyint"
    m = _static_int(name, "m", m)
    if m < 0:
        raise InvalidArgumentError(f"{name}: the order m must be >= 0, got {m} (use polyder)")
    pa, ka = _promote(name, _poly_arg(name, p), 0 if k is None else k, inexact=True)
    ka = _o.reshape(ka, (1,)) if ka.ndim == 0 else ka
    if ka.ndim != 1 or ka.shape[0] not in (1, m) or (m == 0 and ka.shape[0] != 1):
        raise ShapeError(f"{name}: k must be a scalar or 1-D of length 1 or m={m}, got shape {_shape_str(ka.shape)}")
    if m == 0:
        return pa
    if ka.shape[0] == 1 and m > 1:
        ka = _o.broadcast_to(ka, (m,))
    n = pa.shape[0]
    grid = np.arange(n + m, dtype=np.float64)[None] - np.arange(m, dtype=np.float64)[:, None]
    coeff = np.maximum(1.0, grid).prod(0)[::-1].copy()
    return _o.concatenate([pa, ka]) / _o.array(coeff, dtype=pa.dtype)


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of the 1-D ``x``: columns ``x**(N-1), ..., x, 1`` (reversed
    with ``increasing``), ``N`` default ``len(x)`` (``jnp.vander``; integers stay integers).

    Example:
        >>> qb.vander(qb.array([1, 2, 3]), 3).tolist()
        [[1, 1, 1], [4, 2, 1], [9, 3, 1]]
    """
    name = "vander"
    x = _to_array(x)
    if x.ndim != 1:
        raise ShapeError(f"{name}: x must be 1-D, got shape {_shape_str(x.shape)}")
    N = x.shape[0] if N is None else _static_int(name, "N", N)
    if N < 1:
        raise ShapeError(f"{name}: N must be >= 1, got {N} (zero-extent results are not supported)")
    cols = [_o.power(x, i) for i in range(N)]
    if not increasing:
        cols = cols[::-1]
    return _o.stack(cols, axis=1)


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """The least-squares polynomial fit of degree ``deg`` to the points ``(x, y)`` (``y`` 1-D,
    or 2-D for one fit per column), as ``jnp.polyfit``: the columns of the Vandermonde matrix
    scaled to unit norm, solved by :func:`quabla.linalg.lstsq` (singular values below
    ``rcond`` times the largest dropped; default ``len(x) * eps``); ``w`` weights the
    residuals.

    ``full=True`` returns ``(c, residuals, rank, singular_values, rcond)`` (the lstsq
    results of the scaled problem, as JAX's); otherwise ``cov=True`` returns ``(c, V)``
    with ``V`` the coefficients' covariance (scaled by the residual sum of squares over
    ``len(x) - deg - 1``; ``cov="unscaled"`` unscaled), of shape ``(deg + 1, deg + 1)``, or
    ``(deg + 1, deg + 1, k)`` for k columns of ``y``.

    Example:
        >>> [round(c, 6) for c in qb.polyfit(qb.array([0.0, 1.0, 2.0, 3.0]), qb.array([1.0, 3.0, 5.0, 7.0]), 1).tolist()]
        [2.0, 1.0]
        >>> qb.polyfit(qb.array([0.0, 1.0, 2.0, 3.0]), qb.array([1.0, 3.0, 5.0, 8.0]), 1, cov=True)[1].shape
        (2, 2)
    """
    name = "polyfit"
    full = _o._bool_arg(name, "full", full)
    if not (cov == "unscaled" or isinstance(cov, (bool, np.bool_))):
        raise InvalidArgumentError(f"{name}: cov must be a bool or 'unscaled', got {cov!r}")
    deg = _static_int(name, "deg", deg)
    if deg < 0:
        raise InvalidArgumentError(f"{name}: deg must be >= 0, got {deg}")
    xa, ya, wa = _promote(name, x, y, w, inexact=True)
    if xa.ndim != 1:
        raise ShapeError(f"{name}: x must be 1-D, got shape {_shape_str(xa.shape)}")
    if ya.ndim not in (1, 2) or ya.shape[0] != xa.shape[0]:
        raise ShapeError(f"{name}: y must be 1-D or 2-D with x's length {xa.shape[0]}, got shape {_shape_str(ya.shape)}")
    if rcond is None:
        rcond = xa.shape[0] * finfo(xa.dtype).eps
    lhs = vander(xa, deg + 1)
    rhs = ya
    if wa is not None:
        if wa.ndim != 1 or wa.shape[0] != xa.shape[0]:
            raise ShapeError(f"{name}: w must be 1-D with x's length {xa.shape[0]}, got shape {_shape_str(wa.shape)}")
        lhs = lhs * _o.expand_dims(wa, 1)
        rhs = rhs * (_o.expand_dims(wa, 1) if rhs.ndim == 2 else wa)
    scale = _o.sqrt(_o.sum(lhs * lhs, 0))
    lhs = lhs / scale
    c, resids, rank, sv = _linalg.lstsq(lhs, rhs, float(rcond))
    c = c / _o.expand_dims(scale, 1) if c.ndim == 2 else c / scale
    if full:
        return c, resids, rank, sv, _o.asarray(float(rcond), xa.dtype)
    if not cov:
        return c
    order = deg + 1
    v = _linalg.inv(_o.matmul(_o.transpose(lhs), lhs)) / _outer(scale, scale)
    if cov == "unscaled":
        fac = _o.ones((1,), xa.dtype)
    else:
        if xa.shape[0] <= order:
            raise InvalidArgumentError(f"{name}: the number of data points ({xa.shape[0]}) must exceed deg + 1 = {order} to scale the covariance (or pass cov='unscaled')")
        fac = resids / (xa.shape[0] - order)
    if ya.ndim == 1:
        return c, v * _o.reshape(fac, (1, 1))
    return c, _o.expand_dims(v, 2) * _o.reshape(fac, (1, 1, -1))


def _outer(a, b):
    return _o.expand_dims(a, 1) * _o.expand_dims(b, 0)


# ---------------------------------------------------------------------------------------------
# The remaining names of jax.numpy that real code reaches for: scalar-type aliases, windows,
# cumulative_sum/prod, poly/polydiv, packbits/unpackbits, copy, iterable, i0.

# NumPy's abstract scalar types, as jax.numpy re-exports them (``qb.issubdtype(x.dtype,
# qb.floating)``).
generic, number, inexact, floating, integer = np.generic, np.number, np.inexact, np.floating, np.integer
signedinteger, unsignedinteger, complexfloating, character, flexible = np.signedinteger, np.unsignedinteger, np.complexfloating, np.character, np.flexible
# The dtype aliases jax.numpy has (x64): ``qb.double(1)`` is ``qb.asarray(1, qb.float64)``
# (``qb.bool`` is set in quabla/__init__.py: here it would shadow the builtin).
float_, double, single, int_ = float64, float64, _dt.float32, int64

__all__ += ["generic", "number", "inexact", "floating", "integer", "signedinteger", "unsignedinteger", "complexfloating", "character",
            "flexible", "float_", "double", "single", "int_", "ndarray", "cumulative_sum", "cumulative_prod", "bartlett",
            "blackman", "hamming", "hanning", "kaiser", "i0", "copy", "iterable", "poly", "polydiv", "packbits", "unpackbits"]


def _ndarray():
    from .typing import Array

    return Array


ndarray = _ndarray()


def _cumulative(name, f, x, axis, dtype, include_initial, initial):
    x = _to_array(x)
    if x.ndim == 0:
        raise ShapeError(f"{name}: x must have rank >= 1, got a 0-d array")
    if axis is None:
        if x.ndim > 1:
            raise InvalidArgumentError(f"{name}: axis must be given for an array of rank {x.ndim} (shape {_shape_str(x.shape)})")
        axis = 0
    ax = _o._norm_axis(name, axis, x.ndim, x.shape)
    out = f(x, ax, dtype)
    if not include_initial:
        return out
    shape = out.shape[:ax] + (1,) + out.shape[ax + 1:]
    return _o.concatenate([_o.full(shape, initial, out.dtype), out], axis=ax)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative sums along ``axis`` (the array API's ``cumulative_sum``, as jnp's: ``axis``
    may be left out for 1-D ``x`` only; ``include_initial`` starts with a 0). Without
    ``dtype``, bools and signed integers sum as int64 and unsigned integers as uint32 (JAX:
    uint64), as :func:`quabla.sum`.

    Example:
        >>> qb.cumulative_sum(qb.array([1, 2, 3]), include_initial=True).tolist()
        [0, 1, 3, 6]
    """
    if dtype is None and is_array(x) and not x.dtype.is_float:
        dtype = _dt.sum_dtype(x.dtype)
    return _cumulative("cumulative_sum", _cumsum, x, axis, dtype, include_initial, 0)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative products along ``axis`` (the array API's ``cumulative_prod``; as
    ``cumulative_sum``, ``include_initial`` starts with a 1).

    Example:
        >>> qb.cumulative_prod(qb.array([[1, 2], [3, 4]]), axis=1).tolist()
        [[1, 2], [3, 12]]
    """
    return _cumulative("cumulative_prod", _cumprod, x, axis, dtype, include_initial, 1)


def _window_n(name, M):
    M = _o._int_arg(name, "M", M)
    if M < 1:
        raise ShapeError(f"{name}: M must be at least 1, got {M} (Quabla arrays have positive extents)")
    # NumPy's symmetric sample positions 1-M, 3-M, ..., M-1 over M - 1.
    return M, _o.arange(1 - M, M, 2, dtype=float64) / builtins.max(M - 1, 1)


def bartlett(M):
    """The Bartlett (triangular) window of ``M`` points, float64 (``jnp.bartlett``).

    Example:
        >>> qb.bartlett(5).tolist()
        [0.0, 0.5, 1.0, 0.5, 0.0]
    """
    M, n = _window_n("bartlett", M)
    return _o.ones((1,), float64) if M == 1 else 1.0 - _o.abs(n)


def _cosine_window(name, M, terms):
    M, n = _window_n(name, M)
    if M == 1:
        return _o.ones((1,), float64)
    return builtins.sum(c * _o.cos(k * math.pi * n) for k, c in enumerate(terms))


def blackman(M):
    """The Blackman window of ``M`` points, float64 (``jnp.blackman``).

    Example:
        >>> [round(v, 6) for v in qb.blackman(3).tolist()]
        [-0.0, 1.0, -0.0]
    """
    return _cosine_window("blackman", M, (0.42, 0.5, 0.08))


def hamming(M):
    """The Hamming window of ``M`` points, float64 (``jnp.hamming``).

    Example:
        >>> [round(v, 6) for v in qb.hamming(3).tolist()]
        [0.08, 1.0, 0.08]
    """
    return _cosine_window("hamming", M, (0.54, 0.46))


def hanning(M):
    """The Hann window of ``M`` points, float64 (``jnp.hanning``).

    Example:
        >>> [round(v, 6) for v in qb.hanning(3).tolist()]
        [0.0, 1.0, 0.0]
    """
    return _cosine_window("hanning", M, (0.5, 0.5))


def kaiser(M, beta):
    """The Kaiser window of ``M`` points with shape ``beta`` (``i0(beta sqrt(1 - n^2)) /
    i0(beta)``, float64; ``beta`` may be traced), as ``jnp.kaiser``.

    Example:
        >>> [round(v, 6) for v in qb.kaiser(3, 2.0).tolist()]
        [0.438676, 1.0, 0.438676]
    """
    M, n = _window_n("kaiser", M)
    b = _o.astype(_to_array(beta), float64)
    if M == 1:
        return _o.ones((1,), float64)
    return i0(b * _o.sqrt(_o.maximum(1.0 - n * n, 0.0))) / i0(b)


def i0(x):
    """The modified Bessel function of the first kind of order 0 (``jnp.i0``; the same as
    ``qb.scipy.special.i0``).

    Example:
        >>> round(qb.i0(qb.array(1.0)).item(), 10)
        1.2660658778
    """
    from .scipy.special import i0 as _i0

    return _i0(_floatify(_to_array(x)))  # integers: float32 except int64, as JAX's x64


def copy(a, order=None):
    """``a`` as an array (``jnp.copy``; arrays are immutable, so no data is copied).

    Example:
        >>> qb.copy([1.0, 2.0]).tolist()
        [1.0, 2.0]
    """
    if order not in (None, "K", "A", "C"):
        raise UnsupportedOperationError(f"copy: order={order!r} is not supported (arrays are row-major)", op="copy")
    return _to_array(a)


def iterable(y):
    """Whether ``iter(y)`` succeeds (``jnp.iterable``).

    Example:
        >>> qb.iterable([1, 2]), qb.iterable(3)
        (True, False)
    """
    try:
        iter(y)
    except TypeError:
        return False
    return True


def poly(seq_of_zeros):
    """The coefficients (highest degree first) of the monic polynomial with the given roots,
    as ``jnp.poly`` of a 1-D array or a scalar (one root); a 2-D input means its eigenvalues,
    complex in general: an UnsupportedOperationError, Quabla has no complex dtypes.

    Example:
        >>> qb.poly(qb.array([1.0, 2.0])).tolist()
        [1.0, -3.0, 2.0]
        >>> qb.poly(3.0).tolist()
        [1.0, -3.0]
    """
    z = _to_array(seq_of_zeros)
    if z.ndim == 0:
        z = _o.reshape(z, (1,))  # one root, as JAX's
    if z.ndim != 1:
        raise UnsupportedOperationError(f"poly: roots must be 1-D, got shape {_shape_str(z.shape)} (the eigenvalues of a matrix are complex in general)", op="poly")
    z = _floatify(z)
    a = _o.ones((1,), z.dtype)
    for k in range(z.shape[0]):
        zero = _o.zeros((1,), z.dtype)
        a = _o.concatenate([a, zero]) - z[k] * _o.concatenate([zero, a])
    return a


def polydiv(u, v, *, trim_leading_zeros=False):
    """Polynomial long division: ``(q, r)`` with ``u = q v + r`` (coefficients highest degree
    first; ``r`` has ``u``'s length, as ``jnp.polydiv``; ``trim_leading_zeros`` needs concrete
    values and keeps one zero of an all-zero remainder, which JAX leaves empty).

    Example:
        >>> [c.tolist() for c in qb.polydiv(qb.array([1.0, 3.0, 2.0]), qb.array([1.0, 1.0]))]
        [[1.0, 2.0], [0.0, 0.0, 0.0]]
    """
    u, v = _o._common("polydiv", [_floatify(_to_array(u)), _floatify(_to_array(v))])
    if u.ndim != 1 or v.ndim != 1:
        raise ShapeError(f"polydiv: u and v must be 1-D, got shapes {_shape_str(u.shape)} and {_shape_str(v.shape)}")
    m, n = u.shape[0], v.shape[0]
    if m < n:
        raise ShapeError(f"polydiv: u (length {m}) must be at least as long as v (length {n}): the quotient would be empty")
    rem, q = u, []
    for k in range(m - n + 1):
        d = rem[k] / v[0]
        q.append(d)
        rem = rem.at[k:k + n].add(-d * v)
    if trim_leading_zeros:
        r = _o._to_array(rem)
        if isinstance(r, Tracer):
            raise _errors.ConcretizationTypeError("polydiv: trim_leading_zeros=True needs concrete values; inside jit leave it False")
        nz = np.flatnonzero(np.asarray(r))
        rem = r[int(nz[0]):] if nz.size else r[-1:]
    return _o.stack(q), rem


def packbits(a, axis=None, bitorder="big"):
    """The truthiness of ``a``'s entries packed 8 to a uint8 along ``axis`` (None: of the
    flattened array; the last byte padded with zeros), as ``jnp.packbits``.

    Example:
        >>> qb.packbits(qb.array([1, 0, 1, 1, 0, 0, 0, 1, 1])).tolist()
        [177, 128]
    """
    x = _to_array(a)
    if not (x.dtype.is_int or x.dtype.is_bool):
        raise DTypeError(f"packbits: a must have an integer or bool dtype, got {x.dtype.name}")
    if bitorder not in ("big", "little"):
        raise InvalidArgumentError(f"packbits: bitorder must be 'big' or 'little', got {bitorder!r}")
    if axis is None:
        x, axis = _o.ravel(x), 0
    ax = _o._norm_axis("packbits", axis, x.ndim, x.shape)
    x = _moveaxis(_o.astype(x != 0, _dt.uint8), ax, -1)
    n = x.shape[-1]
    pad = -n % 8
    if pad:
        x = _o.concatenate([x, _o.zeros(x.shape[:-1] + (pad,), _dt.uint8)], axis=-1)
    x = _o.reshape(x, x.shape[:-1] + ((n + pad) // 8, 8))
    w = [1 << (7 - i) for i in range(8)] if bitorder == "big" else [1 << i for i in range(8)]
    out = _o.sum(x * _o.array(np.array(w, np.uint8)), axis=-1, dtype=_dt.uint8)
    return _moveaxis(out, -1, ax)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The bits of uint8 ``a`` as a uint8 array of 0 and 1, 8 per byte along ``axis`` (None:
    of the flattened array), as ``jnp.unpackbits``; ``count`` keeps that many (a negative
    count drops from the end; more than there are pads with zeros). Other integer arrays
    (a NumPy uint8 array imports as int32) give the bits of their low byte.

    Example:
        >>> qb.unpackbits(qb.array([5], dtype=qb.uint8)).tolist()
        [0, 0, 0, 0, 0, 1, 0, 1]
    """
    x = _to_array(a)
    if not x.dtype.is_int:
        raise DTypeError(f"unpackbits: a must be uint8, got {x.dtype.name}")
    # A NumPy uint8 array imports as int32 (docs/api.md): its low byte is the value.
    x = _o.astype(x, _dt.uint8)
    if bitorder not in ("big", "little"):
        raise InvalidArgumentError(f"unpackbits: bitorder must be 'big' or 'little', got {bitorder!r}")
    if axis is None:
        x, axis = _o.ravel(x), 0
    ax = _o._norm_axis("unpackbits", axis, x.ndim, x.shape)
    x = _moveaxis(x, ax, -1)
    shifts = np.arange(7, -1, -1, dtype=np.uint8) if bitorder == "big" else np.arange(8, dtype=np.uint8)
    from ._bits import shift_right_logical

    bits = shift_right_logical(_o.expand_dims(x, -1), _o.array(shifts, dtype=_dt.uint8)) & _o.array(1, dtype=_dt.uint8)
    bits = _o.reshape(bits, x.shape[:-1] + (x.shape[-1] * 8,))
    if count is not None:
        count = _o._int_arg("unpackbits", "count", count)
        total = bits.shape[-1]
        keep = count if count >= 0 else total + count
        if keep <= 0:
            raise ShapeError(f"unpackbits: count={count} keeps no bits (Quabla arrays have positive extents)")
        if keep <= total:
            bits = bits[..., :keep]
        else:
            bits = _o.concatenate([bits, _o.zeros(bits.shape[:-1] + (keep - total,), _dt.uint8)], axis=-1)
    return _moveaxis(bits, -1, ax)


# ---------------------------------------------------------------------------------------------
# Printing (NumPy's print options: a Tensor's repr and str are NumPy's formatting of its
# values, so the options apply to them), einsum_path, roots.

__all__ += ["printoptions", "set_printoptions", "get_printoptions", "array_repr", "array_str", "einsum_path", "roots"]


def printoptions(*args, **kwargs):
    """A context manager that sets NumPy's print options inside a ``with`` block (NumPy's
    ``printoptions``, as ``jnp.printoptions``): Quabla arrays print through NumPy's
    formatting, so ``precision``, ``suppress``, ``threshold``, ``linewidth`` ... apply to
    ``print(x)`` and ``repr(x)``.

    Args:
        *args: NumPy's ``set_printoptions`` arguments.
        **kwargs: likewise.

    Returns:
        The context manager.

    Example:
        >>> with qb.printoptions(precision=2):
        ...     print(qb.array([1 / 3, 2 / 3]))
        [0.33 0.67]
    """
    try:
        with np.printoptions(*args, **kwargs):  # checks the options now (NumPy checks on entry)
            pass
    except TypeError as e:
        raise ArgumentTypeError(f"printoptions: {e}") from None
    except ValueError as e:
        raise InvalidArgumentError(f"printoptions: {e}") from None
    return np.printoptions(*args, **kwargs)


def set_printoptions(*args, **kwargs):
    """Sets NumPy's print options, which Quabla arrays' ``repr``/``str`` use (NumPy's
    ``set_printoptions``, as ``jnp.set_printoptions``).

    Args:
        *args: NumPy's ``set_printoptions`` arguments.
        **kwargs: likewise.

    Returns:
        None.

    Example:
        >>> old = qb.get_printoptions()
        >>> qb.set_printoptions(precision=3)
        >>> print(qb.array([1 / 3]))
        [0.333]
        >>> qb.set_printoptions(**old)
    """
    try:
        np.set_printoptions(*args, **kwargs)
    except TypeError as e:
        raise ArgumentTypeError(f"set_printoptions: {e}") from None
    except ValueError as e:
        raise InvalidArgumentError(f"set_printoptions: {e}") from None


def get_printoptions():
    """NumPy's current print options as a dict (``jnp.get_printoptions``).

    Returns:
        The dict.

    Example:
        >>> qb.get_printoptions()["precision"] >= 0
        True
    """
    return np.get_printoptions()


def _host(name, a):
    """``a``'s values as a NumPy array (a traced value raises TracerArrayConversionError)."""
    if isinstance(a, (list, tuple)) or _o._is_scalar(a):
        a = _to_array(a)
    if not (is_array(a) or isinstance(a, (np.ndarray, np.generic))):
        raise ArgumentTypeError(f"{name}: expected an array, got {type(a).__name__}")
    return np.asarray(a)


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    """The string representation of an array, as NumPy's ``array_repr`` of its values
    (``jnp.array_repr`` is NumPy's): the class name (``Tensor``), the values, and the dtype
    unless it is a default one (float64, int64, bool).

    Args:
        arr: the array.
        max_line_width: line width (None: the print options').
        precision: digits (None: the print options').
        suppress_small: print tiny values as zero (None: the print options').

    Returns:
        The string.

    Example:
        >>> qb.array_repr(qb.array([1.0, 2.5]))
        'Tensor([1. , 2.5])'
    """
    r = np.array_repr(_host("array_repr", arr), *_print_args("array_repr", max_line_width, precision, suppress_small))
    return "Tensor" + r[len("array"):] if r.startswith("array") else r


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    """The string of an array's values, as NumPy's ``array_str`` (what ``str(x)`` prints).

    Args:
        a: the array.
        max_line_width: line width (None: the print options').
        precision: digits (None: the print options').
        suppress_small: print tiny values as zero (None: the print options').

    Returns:
        The string.

    Example:
        >>> qb.array_str(qb.array([1.0, 2.5]), precision=1)
        '[1.  2.5]'
    """
    return np.array_str(_host("array_str", a), *_print_args("array_str", max_line_width, precision, suppress_small))


def _print_args(name, max_line_width, precision, suppress_small):
    """The formatting options of ``array_repr``/``array_str``, checked (typed errors)."""
    for arg, v, lo in (("max_line_width", max_line_width, 1), ("precision", precision, 0)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo):
            raise ArgumentTypeError(f"{name}: {arg} must be None or an int >= {lo}, got {v!r:.40}")
    if suppress_small is not None and not isinstance(suppress_small, (bool, np.bool_)):
        raise ArgumentTypeError(f"{name}: suppress_small must be None or a bool, got {type(suppress_small).__name__}")
    return max_line_width, precision, suppress_small


def _shape_of(name, x):
    """A zero-strided NumPy stand-in with ``x``'s shape (for np.einsum_path's planning)."""
    if hasattr(x, "shape") and not isinstance(x, np.ndarray):
        shape = tuple(int(d) for d in x.shape)
    else:
        try:
            shape = np.shape(x)
        except (ValueError, TypeError):
            raise ArgumentTypeError(f"{name}: operands must be arrays, got {type(x).__name__}") from None
    return np.broadcast_to(np.zeros((), np.float64), shape)


def einsum_path(subscripts, /, *operands, optimize="auto"):
    """The contraction order of an einsum and a report of its cost, without computing it
    (``jnp.einsum_path``). The path is planned by NumPy's ``einsum_path`` ('greedy', or
    'optimal' for ``optimize="optimal"``; JAX's other opt_einsum strategies plan as
    'greedy'; ``optimize=False`` contracts left to right; an explicit path is checked and
    reported), so it can differ from opt_einsum's choice for JAX; the report is NumPy's
    text. Only the operands' shapes are read (traced arrays are fine).

    Args:
        subscripts: the subscripts (``"ij,jk->ik"``), or the first operand of the
            interleaved form.
        *operands: the arrays (or objects with a ``shape``).
        optimize: ``"auto"``, True, ``"greedy"``, ``"optimal"``, another strategy name,
            False, or an explicit path (a list of index tuples).

    Returns:
        ``(path, report)``: the path as a list of index tuples (without NumPy's leading
        ``'einsum_path'``), and the report string.

    Example:
        >>> qb.einsum_path("ij,jk->ik", qb.ones((2, 3)), qb.ones((3, 4)))[0]
        [(0, 1)]
    """
    name = "einsum_path"
    if not isinstance(subscripts, str):
        if operands and isinstance(operands[0], (list, tuple)):
            subscripts, operands = _o._einsum_interleaved(subscripts, operands)
        else:
            raise ArgumentTypeError(f"{name}: subscripts must be a string such as 'ij,jk->ik', got {type(subscripts).__name__}")
    ops = [_shape_of(name, x) for x in operands]
    if isinstance(optimize, (list, tuple)):
        path = list(optimize)
        if not path or path[0] != "einsum_path":
            path = ["einsum_path"] + path
        opt = path
    elif optimize is False:
        opt = ["einsum_path"] + [(0, 1)] * builtins.max(len(ops) - 1, 0) if len(ops) > 1 else ["einsum_path", (0,)]
    elif optimize == "optimal":
        opt = "optimal"
    elif optimize is True or optimize is None or (isinstance(optimize, str) and optimize in _o._EINSUM_OPTIMIZE):
        opt = "greedy"
    else:
        raise InvalidArgumentError(f"{name}: optimize must be a bool, a strategy name or a contraction path, got {optimize!r}")
    try:
        path, report = np.einsum_path(subscripts, *ops, optimize=opt)
    except (ValueError, TypeError, KeyError, IndexError) as e:
        raise InvalidArgumentError(f"{name}: {e} (subscripts {subscripts!r}, shapes {[o.shape for o in ops]})") from None
    return [tuple(int(i) for i in step) for step in path[1:]], report


_ROOTS_ITERS = 200


def roots(p, *, strip_zeros=True):
    """The roots of the polynomial with coefficients ``p`` (highest degree first), as
    ``jnp.roots``, for polynomials whose roots are all real (Quabla has no complex dtype).

    Computed by the Aberth-Ehrlich iteration (all roots at once, complex arithmetic on
    pairs of real arrays, a fixed number of steps: it traces, and batches under vmap)
    rather than as the eigenvalues of the companion matrix (JAX's). Eagerly, complex roots
    raise UnsupportedOperationError; under jit the roots with a nonzero imaginary part are
    NaN. The roots are sorted in decreasing order (JAX's order is its eigenvalue solver's).
    With ``strip_zeros`` (JAX's default; needs concrete coefficients) leading zero
    coefficients are removed and trailing zeros give exact zero roots; with
    ``strip_zeros=False`` the leading coefficient must be nonzero (a zero gives NaN roots).
    Multiple roots converge more slowly (to about the square root of the dtype's precision,
    as with eigenvalues).

    Args:
        p: the 1-D coefficients (at least 2 after stripping: a constant has no roots, and
            Quabla has no zero-size arrays).
        strip_zeros: remove leading and trailing zero coefficients first.

    Returns:
        The real roots, float (int64 -> float64; narrower integers -> float32).

    Example:
        >>> [round(r, 6) for r in qb.roots(qb.array([1.0, -3.0, 2.0])).tolist()]
        [2.0, 1.0]
    """
    name = "roots"
    c = _floatify(_to_array(p))
    if c.ndim != 1:
        raise ShapeError(f"{name}: p must be 1-D, got shape {_shape_str(c.shape)}")
    zeros_at_end = 0
    if strip_zeros:
        if isinstance(c, Tracer):
            raise _errors.ConcretizationTypeError(f"{name}: strip_zeros=True needs concrete coefficients; inside jit pass strip_zeros=False")
        v = np.asarray(c)
        nz = np.nonzero(v)[0]
        if nz.size == 0 or nz[-1] == nz[0]:
            raise ShapeError(f"{name}: the polynomial {v.tolist()} has no roots to return after stripping zeros (Quabla has no zero-size arrays)")
        zeros_at_end = v.shape[0] - 1 - int(nz[-1])
        c = c[int(nz[0]): int(nz[-1]) + 1]
    n = c.shape[0] - 1
    if n < 1:
        raise ShapeError(f"{name}: p needs at least 2 coefficients (a constant has no roots), got shape {_shape_str(c.shape)}")
    r = _aberth(c, n)
    if not isinstance(r, Tracer) and not isinstance(c, Tracer):
        if bool(_o.any(_isnan(r))) and not bool(_o.any(_isnan(c))):
            raise UnsupportedOperationError(f"{name}: the polynomial has complex roots; Quabla has no complex dtype", op=name)
    if zeros_at_end:
        r = _o.concatenate([r, _o.zeros((zeros_at_end,), r.dtype)])
    return _sort(r)[::-1]


def _aberth(c, n):
    """The ``n`` roots of the polynomial ``c`` (degree ``n``) by the Aberth-Ehrlich
    iteration; NaN where a root is not real."""
    d = c.dtype
    c = c / c[0]
    dc = c[:-1] * _o.arange(n, 0, -1).astype(d)  # the derivative's coefficients
    # Start on a circle of Cauchy's bound on the roots' size, at angles off the axes.
    radius = 1.0 + _o.max(_o.abs(c[1:]))
    ang = _o.arange(n).astype(d) * (2 * math.pi / n) + 0.4
    zr, zi = radius * _o.cos(ang), radius * _o.sin(ang)
    eye = _o.eye(n, dtype=bool_)

    def horner(coef, xr, xi):
        pr, pi_ = _o.zeros_like(xr) + coef[0], _o.zeros_like(xr)
        for k in range(1, coef.shape[0]):
            pr, pi_ = pr * xr - pi_ * xi + coef[k], pr * xi + pi_ * xr
        return pr, pi_

    def step(_, z):
        zr, zi = z
        pr, pi_ = horner(c, zr, zi)
        qr, qi = horner(dc, zr, zi) if n > 1 else (_o.zeros_like(zr) + dc[0], _o.zeros_like(zr))
        den = qr * qr + qi * qi
        den = _o.where(den == 0, 1.0, den)
        rr, ri = (pr * qr + pi_ * qi) / den, (pi_ * qr - pr * qi) / den  # p / p'
        # s_k = sum_{j != k} 1 / (z_k - z_j)
        dr = _o.expand_dims(zr, 1) - _o.expand_dims(zr, 0)
        di = _o.expand_dims(zi, 1) - _o.expand_dims(zi, 0)
        dd = _o.where(eye, 1.0, dr * dr + di * di)
        sr = _o.sum(_o.where(eye, 0.0, dr / dd), axis=1)
        si = _o.sum(_o.where(eye, 0.0, -di / dd), axis=1)
        # w = r / (1 - r s)
        ar, ai = 1.0 - (rr * sr - ri * si), -(rr * si + ri * sr)
        aa = ar * ar + ai * ai
        aa = _o.where(aa == 0, 1.0, aa)
        wr, wi = (rr * ar + ri * ai) / aa, (ri * ar - rr * ai) / aa
        done = (pr == 0) & (pi_ == 0)
        return (_o.where(done, zr, zr - wr), _o.where(done, zi, zi - wi))

    zr, zi = _fori_loop(0, _ROOTS_ITERS, step, (zr, zi))
    tol = math.sqrt(float(finfo(d).eps)) * 10.0
    real = _o.abs(zi) <= tol * _o.maximum(1.0, _o.abs(zr))
    return _o.where(real, zr, math.nan)
