"""Bit operations on integer arrays: ``lax``-style shifts (``shift_left``,
``shift_right_logical``, ``shift_right_arithmetic``), NumPy's ``left_shift``/``right_shift``
(the ``<<`` and ``>>`` operators), ``bitwise_not``/``bitwise_invert`` and
``population_count``/``bitwise_count``, and ``bitcast``-free helpers the random module needs.

Semantics (StableHLO's, as ``jax.lax``): the shift amount is read as an unsigned number of the
operand's width, so an amount of at least the width (or a negative one) gives 0 for the left and
logical right shifts and the sign fill for the arithmetic one; on unsigned dtypes the arithmetic
shift works on the bit pattern (a set top bit fills with ones), as ``lax.shift_right_arithmetic``.
Operands are promoted by :mod:`quabla.dtypes` (weak Python ints adopt the array's dtype); bool
and float operands raise :class:`DTypeError`.
"""

from . import dtypes as _dt
from ._ops import _binary_operands, _op, _shape_str, _to_array, bind
from .errors import DTypeError

__all__ = [
    "shift_left",
    "shift_right_logical",
    "shift_right_arithmetic",
    "left_shift",
    "right_shift",
    "bitwise_left_shift",
    "bitwise_right_shift",
    "bitwise_not",
    "bitwise_invert",
    "population_count",
    "bitwise_count",
]


def _check_int(name, *xs):
    for i, x in enumerate(xs):
        if not x.dtype.is_int:
            raise DTypeError(
                f"{name}: operand {i} has dtype {x.dtype.name} and shape {_shape_str(x.shape)}; "
                "it needs an integer dtype (int32, int64, uint8, uint32)"
            )


def _shift(name, op_name):
    op = _op(op_name)

    def f(x, y):
        x, y = _binary_operands(name, x, y)
        _check_int(name, x, y)
        return bind(op, x, y)

    f.__name__ = f.__qualname__ = name
    return f


shift_left = _shift("shift_left", "shift_left")
shift_left.__doc__ = """Elementwise ``x << y`` on the bits of the dtype (``jax.lax.shift_left``).

    Args:
        x: an integer array or Python int.
        y: the shift amounts (integer), broadcast against ``x``.

    Returns:
        An array of the promoted dtype; amounts of at least the bit width give 0.

    Example:
        >>> qb.shift_left(qb.array([1, 3], dtype=qb.uint32), 31).tolist()
        [2147483648, 2147483648]
    """

shift_right_logical = _shift("shift_right_logical", "shift_right_logical")
shift_right_logical.__doc__ = """Elementwise logical right shift: zeros enter from the top
    (``jax.lax.shift_right_logical``), also for signed dtypes.

    Args:
        x: an integer array or Python int.
        y: the shift amounts (integer), broadcast against ``x``.

    Returns:
        An array of the promoted dtype; amounts of at least the bit width give 0.

    Example:
        >>> qb.shift_right_logical(qb.array([-1], dtype=qb.int32), 28).tolist()
        [15]
    """

shift_right_arithmetic = _shift("shift_right_arithmetic", "shift_right_arithmetic")
shift_right_arithmetic.__doc__ = """Elementwise arithmetic right shift: copies of the top bit
    enter from the top (``jax.lax.shift_right_arithmetic``), also for unsigned dtypes.

    Args:
        x: an integer array or Python int.
        y: the shift amounts (integer), broadcast against ``x``.

    Returns:
        An array of the promoted dtype; amounts of at least the bit width give the sign fill.

    Example:
        >>> qb.shift_right_arithmetic(qb.array([-8, 8], dtype=qb.int32), 2).tolist()
        [-2, 2]
    """


def _numeric_operands(name, x, y):
    """The promoted operands of a NumPy shift, bools as int32 (JAX's numeric promotion)."""
    x, y = _binary_operands(name, x, y)
    if x.dtype.is_bool:
        x, y = bind(_op("convert", to=_dt.int32.code), x), bind(_op("convert", to=_dt.int32.code), y)
    return x, y


def left_shift(x, y):
    """NumPy's ``left_shift`` (the ``<<`` operator): :func:`shift_left` after promotion (bools
    shift as int32, as JAX).

    Example:
        >>> (qb.array([1, 2], dtype=qb.uint8) << 7).tolist()
        [128, 0]
    """
    return shift_left(*_numeric_operands("left_shift", x, y))


def right_shift(x, y):
    """NumPy's ``right_shift`` (the ``>>`` operator): arithmetic for signed dtypes, logical for
    unsigned ones (bools shift as int32, as JAX).

    Example:
        >>> (qb.array([-8], dtype=qb.int32) >> 1).tolist(), (qb.array([128], dtype=qb.uint8) >> 7).tolist()
        ([-4], [1])
    """
    x, y = _numeric_operands("right_shift", x, y)
    _check_int("right_shift", x, y)
    return bind(_op("shift_right_logical" if x.dtype.is_unsigned else "shift_right_arithmetic"), x, y)


bitwise_left_shift = left_shift
bitwise_right_shift = right_shift


def bitwise_not(x):
    """Elementwise bitwise not of integers (logical not of bools): the ``~`` operator.

    Example:
        >>> qb.bitwise_not(qb.array([0, 255], dtype=qb.uint8)).tolist()
        [255, 0]
    """
    x = _to_array(x)
    if x.dtype.is_float:
        raise DTypeError(f"bitwise_not: operand of dtype {x.dtype.name} and shape {_shape_str(x.shape)}; it needs a bool or integer dtype")
    return bind(_op("not"), x)


bitwise_invert = bitwise_not


def population_count(x):
    """Elementwise number of set bits of the dtype's bit pattern (``jax.lax.population_count``).

    Example:
        >>> qb.population_count(qb.array([-1, 6], dtype=qb.int32)).tolist()
        [32, 2]
    """
    x = _to_array(x)
    _check_int("population_count", x)
    return bind(_op("population_count"), x)


def bitwise_count(x):
    """NumPy's ``bitwise_count``: the set bits of ``|x|`` as uint8 (a bool counts as 0 or 1).

    Example:
        >>> qb.bitwise_count(qb.array([-3, 7])).tolist()
        [2, 3]
    """
    x = _to_array(x)
    if x.dtype.is_bool:
        return bind(_op("convert", to=_dt.uint8.code), x)
    _check_int("bitwise_count", x)
    a = x if x.dtype.is_unsigned else bind(_op("abs"), x)
    return bind(_op("convert", to=_dt.uint8.code), population_count(a))
