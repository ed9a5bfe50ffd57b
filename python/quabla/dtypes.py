"""Quabla's dtypes and the dtype rules of the Python front.

Five dtypes: ``float32``, ``float64``, ``bool_``, ``int32``, ``int64``. Rules:

* Python ``float`` -> float64, ``int`` -> int64, ``bool`` -> bool_ when they make a new array;
  NumPy dtypes are kept; float16 and other NumPy dtypes raise :class:`DTypeError` (int8/int16/
  uint8/uint16 widen losslessly to int32, uint32 to int64).
* Python scalars are *weak* in ops with arrays: they adopt the array's dtype (an int scalar
  with a bool array gives int64, a float scalar with an integer or bool array gives float64).
* Array with array: equal dtypes are kept; bool_ joins the other dtype; int32 with int64 gives
  int64; an integer with a float gives the float; float32 with float64 is an error that asks
  for an explicit ``astype``.
"""

import numpy as np

from .errors import DTypeError

__all__ = ["DType", "float32", "float64", "bool_", "int32", "int64", "dtype", "result_type"]


class DType:
    """A Quabla element type. Compares equal to the matching NumPy dtype and its name."""

    __slots__ = ("name", "code", "np", "mlir", "kind", "itemsize")

    def __init__(self, name, code, np_type, mlir, kind):
        self.name = name
        self.code = code
        self.np = np.dtype(np_type)
        self.mlir = mlir
        self.kind = kind  # "f", "i" or "b"
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
        return self.kind == "i"

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

BY_CODE = (float32, float64, bool_, int32, int64)
_BY_NP = {d.np: d for d in BY_CODE}
_BY_NAME = {d.name: d for d in BY_CODE}
_BY_NAME.update({"bool": bool_, "f32": float32, "f64": float64, "i1": bool_, "i32": int32, "i64": int64})
_PY_TYPES = {float: float64, int: int64, bool: bool_}
# NumPy dtypes that widen losslessly into a Quabla dtype on import.
WIDEN = {np.dtype(np.int8): int32, np.dtype(np.int16): int32, np.dtype(np.uint8): int32,
         np.dtype(np.uint16): int32, np.dtype(np.uint32): int64}


def dtype(d):
    """Returns the Quabla dtype for ``d``: a DType, a NumPy dtype or scalar type, a name
    ("float32", "bool", ...) or the Python types float/int/bool.

    Raises:
        DTypeError: for float16 and every dtype Quabla does not have.

    Example:
        >>> qb.dtype("float32") is qb.float32
        True
    """
    if isinstance(d, DType):
        return d
    if isinstance(d, type) and d in _PY_TYPES:
        return _PY_TYPES[d]
    if isinstance(d, str) and d in _BY_NAME:
        return _BY_NAME[d]
    try:
        nd = np.dtype(d)
    except TypeError:
        raise DTypeError(f"not a dtype: {d!r} (quabla dtypes are float32, float64, bool_, int32, int64)") from None
    if nd in _BY_NP:
        return _BY_NP[nd]
    if nd == np.float16:
        raise DTypeError("float16 is not supported: quabla dtypes are float32, float64, bool_, int32 and int64 (use astype(float32))")
    raise DTypeError(f"dtype {nd} is not supported: quabla dtypes are float32, float64, bool_, int32 and int64")


def result_type(op, a, b):
    """The common dtype of two array dtypes for op ``op`` (see the module docstring)."""
    if a is b:
        return a
    if a.is_bool:
        return b
    if b.is_bool:
        return a
    if a.is_int and b.is_int:
        return int64
    if a.is_int:
        return b
    if b.is_int:
        return a
    raise DTypeError(
        f"{op}: cannot mix {a.name} and {b.name} operands; convert one explicitly, e.g. x.astype(qb.{b.name})"
    )


def weak_result(a, scalar):
    """The dtype of an op between an array of dtype ``a`` and a Python scalar (weak)."""
    if isinstance(scalar, bool):
        return a
    if isinstance(scalar, int):
        return int64 if a.is_bool else a
    return a if a.is_float else float64


def scalar_dtype(x):
    """The default dtype of a Python scalar."""
    if isinstance(x, bool):
        return bool_
    if isinstance(x, int):
        return int64
    return float64
