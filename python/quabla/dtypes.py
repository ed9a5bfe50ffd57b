"""Quabla's dtypes and the dtype rules of the Python front.

Seven dtypes: ``float32``, ``float64``, ``bool_``, ``int32``, ``int64``, ``uint8``,
``uint32``. Rules:

* Python ``float`` -> float64, ``int`` -> int64, ``bool`` -> bool_ when they make a new array;
  NumPy dtypes are kept (uint32 included); float16 and other NumPy dtypes raise
  :class:`DTypeError` (int8/int16/uint16 widen losslessly to int32; a NumPy uint8 array imported
  without ``dtype=`` widens to int32 as before, ``dtype=qb.uint8`` or ``astype`` keeps uint8).
* Python scalars are *weak* in ops with arrays: they adopt the array's dtype (an int scalar
  with a bool array gives int64, a float scalar with an integer or bool array gives float64);
  an int scalar outside an unsigned array's range is a :class:`DTypeError` (JAX raises
  OverflowError).
* Array with array (JAX's lattice, x64): equal dtypes are kept; bool_ joins the other dtype;
  uint8 with uint32 gives uint32; signed with signed gives the wider; unsigned with a wider
  signed gives the signed type, uint32 with int32 gives int64; an integer with a float gives
  the float; float32 with float64 is an error that asks for an explicit ``astype``.
"""

import numpy as np

from .errors import ArgumentTypeError, DTypeError, ScalarOverflowError

__all__ = ["DType", "float32", "float64", "bool_", "int32", "int64", "uint8", "uint32", "dtype", "result_type", "iinfo"]


class DType:
    """A Quabla element type. Compares equal to the matching NumPy dtype and its name."""

    __slots__ = ("name", "code", "np", "mlir", "kind", "itemsize")

    def __init__(self, name, code, np_type, mlir, kind):
        self.name = name
        self.code = code
        self.np = np.dtype(np_type)
        self.mlir = mlir
        self.kind = kind  # "f", "i", "u" or "b"
        self.itemsize = self.np.itemsize

    @property
    def dtype(self):
        """The NumPy dtype (so that ``np.dtype(qb.float32)`` works)."""
        return self.np

    @property
    def is_float(self):
        return self.kind == "f"

    @property
    def is_int(self):
        """Signed or unsigned integer."""
        return self.kind in ("i", "u")

    @property
    def is_signed_int(self):
        return self.kind == "i"

    @property
    def is_unsigned(self):
        return self.kind == "u"

    @property
    def is_bool(self):
        return self.kind == "b"

    def __repr__(self):
        return f"quabla.{self.name}"

    __str__ = lambda self: self.name  # noqa: E731

    def __eq__(self, other):
        if isinstance(other, DType):
            return self is other
        try:
            return self is dtype(other)
        except (TypeError, ValueError):
            return NotImplemented

    def __hash__(self):
        return hash(self.np)

    def __reduce__(self):
        return (dtype, (self.name,))


float32 = DType("float32", 0, np.float32, "f32", "f")
float64 = DType("float64", 1, np.float64, "f64", "f")
bool_ = DType("bool_", 2, np.bool_, "i1", "b")
int32 = DType("int32", 3, np.int32, "i32", "i")
int64 = DType("int64", 4, np.int64, "i64", "i")
uint8 = DType("uint8", 5, np.uint8, "ui8", "u")
uint32 = DType("uint32", 6, np.uint32, "ui32", "u")

BY_CODE = (float32, float64, bool_, int32, int64, uint8, uint32)
_BY_NP = {d.np: d for d in BY_CODE}
_BY_NAME = {d.name: d for d in BY_CODE}
_BY_NAME.update({"bool": bool_, "f32": float32, "f64": float64, "i1": bool_, "i32": int32, "i64": int64,
                 "ui8": uint8, "ui32": uint32, "u8": uint8, "u32": uint32})
#: JAX's dtype of the tangents and cotangents of integer and boolean values (``jax.float0``,
#: ``jax.dtypes.float0``): a NumPy structured void dtype with one zero-size field. No Quabla
#: array has it; a custom_vjp ``bwd`` may return a NumPy array of it for an integer argument
#: (taken as no cotangent, as JAX).
float0 = np.dtype([("float0", np.void, 0)])
_PY_TYPES = {float: float64, int: int64, bool: bool_}
# NumPy dtypes that widen losslessly into a Quabla dtype on import.
WIDEN = {np.dtype(np.int8): int32, np.dtype(np.int16): int32, np.dtype(np.uint8): int32,
         np.dtype(np.uint16): int32}
_NAMES = "float32, float64, bool_, int32, int64, uint8 and uint32"


def dtype(d, op=None):
    """Returns the Quabla dtype for ``d``: a DType, a NumPy dtype or scalar type, a name
    ("float32", "bool", ...) or the Python types float/int/bool.

    Raises:
        DTypeError: for float16 and every dtype Quabla does not have (its message starts
        with ``op``, the function that was given ``d``, when one is named).

    Example:
        >>> qb.dtype("float32") is qb.float32
        True
    """
    if op is not None and not isinstance(op, str):
        raise ArgumentTypeError(f"dtype: op must be the name of the function given the dtype (a str), got {type(op).__name__}")
    if isinstance(d, DType):
        return d
    at = f"{op}: " if op else ""
    if isinstance(d, type) and d in _PY_TYPES:
        return _PY_TYPES[d]
    if isinstance(d, str) and d in _BY_NAME:
        return _BY_NAME[d]
    if isinstance(getattr(d, "dtype", None), DType):
        return d.dtype  # an array or a ShapeDtype, as np.dtype(array)
    try:
        nd = np.dtype(d)
    except Exception:  # noqa: BLE001 - NumPy parses some strings as struct specs (b"," raises SyntaxError)
        r = repr(d)
        raise DTypeError(f"{at}not a dtype: {r if len(r) <= 40 else r[:37] + '...'} (quabla dtypes are {_NAMES})") from None
    if nd in _BY_NP:
        return _BY_NP[nd]
    if nd == np.float16:
        raise DTypeError(f"{at}float16 is not supported: quabla dtypes are {_NAMES} (use astype(float32))")
    raise DTypeError(f"{at}dtype {nd} is not supported: quabla dtypes are {_NAMES}")


class iinfo:
    """Machine limits of an integer dtype (as ``numpy.iinfo``): ``bits``, ``min``, ``max``,
    ``dtype``.

    Example:
        >>> qb.iinfo(qb.uint32).max
        4294967295
    """

    def __init__(self, d):
        d = dtype(d)
        if not d.is_int:
            raise DTypeError(f"iinfo: {d.name} is not an integer dtype")
        info = np.iinfo(d.np)
        self.dtype = d
        self.bits = info.bits
        self.min = int(info.min)
        self.max = int(info.max)

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype.name})"


def _int_join(a, b):
    """JAX's join of two distinct integer dtypes (x64 lattice)."""
    if a.kind == b.kind:
        return a if a.itemsize >= b.itemsize else b
    u, s = (a, b) if a.is_unsigned else (b, a)
    # A signed type strictly wider than the unsigned one holds it; else int64.
    return s if s.itemsize > u.itemsize else int64


def result_type(op, a, b):
    """The common dtype of two array dtypes for op ``op`` (see the module docstring)."""
    if a is b:
        return a
    if a.is_bool:
        return b
    if b.is_bool:
        return a
    if a.is_int and b.is_int:
        return _int_join(a, b)
    if a.is_int:
        return b
    if b.is_int:
        return a
    raise DTypeError(
        f"{op}: cannot mix {a.name} and {b.name} operands; convert one explicitly, e.g. x.astype(qb.{b.name})"
    )


def weak_result(a, scalar):
    """The dtype of an op between an array of dtype ``a`` and a Python scalar (weak). An int
    outside the range of that dtype is a ScalarOverflowError (an OverflowError, as NumPy 2
    and JAX raise), never a wrapped value."""
    if isinstance(scalar, bool):
        return a
    if isinstance(scalar, int):
        d = int64 if a.is_bool else a
        if d.is_int:
            check_int_range(scalar, d)
        elif abs(scalar) >= 2**1024:
            raise ScalarOverflowError(f"the Python int {str(scalar)[:12]}... ({scalar.bit_length()} bits) is too large to convert to {d.name}")
        return d
    return a if a.is_float else float64


def check_int_range(value, d):
    """Raises ScalarOverflowError when the Python int ``value`` is outside integer dtype ``d``."""
    info = np.iinfo(d.np)
    if not info.min <= value <= info.max:
        raise ScalarOverflowError(f"the Python int {value} is out of bounds for {d.name} ({info.min} to {info.max}); use an explicit array of a wider dtype")


def to_inexact(d):
    """The float dtype an integer or bool dtype ``d`` computes in where a float is needed
    (JAX's ``to_inexact_dtype``, x64): int64 -> float64; bool, uint8, uint32, int32 ->
    float32; floats are kept."""
    if d.is_float:
        return d
    return float64 if d is int64 else float32


def sum_dtype(d):
    """The result dtype of a sum or product of ``d`` (JAX's ``promote_integers``, x64): bool
    and signed integers -> int64; unsigned integers -> uint32 (JAX: uint64, which Quabla
    does not have: uint32 is its widest unsigned dtype); floats are kept."""
    if d.is_bool or d.is_signed_int:
        return int64
    if d.is_unsigned:
        return uint32
    return d


def scalar_dtype(x):
    """The default dtype of a Python scalar."""
    if isinstance(x, bool):
        return bool_
    if isinstance(x, int):
        return int64
    return float64
