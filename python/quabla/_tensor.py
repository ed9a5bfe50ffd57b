"""Operators and methods of :class:`quabla.Tensor` and of tracers. The Tensor type is
defined in Rust (storage, buffer protocol, conversions); the methods here are attached to it
and to :class:`Tracer` alike, so eager and traced code read the same.
"""

import numpy as np

from . import _indexing
from . import _bits
from . import _ops as o
from . import _quabla as _q
from ._trace import Tracer, is_array

Tensor = _q.Tensor


def _swap(f):
    return lambda x, y: f(y, x)


def _numpy(self):
    """The tensor as a read-only NumPy array sharing its storage (zero-copy)."""
    return np.asarray(memoryview(self))


def _array(self, dtype=None, copy=None):
    a = np.asarray(memoryview(self))
    if dtype is not None and np.dtype(dtype) != a.dtype:
        if copy is False:
            raise _errors.InvalidArgumentError(f"converting a {self.dtype.name} tensor to {np.dtype(dtype)} requires a copy, but copy=False")
        return a.astype(dtype)
    if copy:
        return a.copy()
    return a


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """NumPy's ufunc protocol: a plain call of a ufunc quabla.numpy has (``np.add(a, t)``,
    ``np.isfinite(t)``, and so ``ndarray + tensor``) is that function, giving a Tensor;
    anything else (``out=``, ``reduce``, a ufunc Quabla lacks) runs in NumPy on copies of the
    tensors, as a JAX array converts."""
    if method == "__call__" and not kwargs:
        f = _ufunc_functions().get(ufunc.__name__)
        if f is not None:
            return f(*inputs)
    out = kwargs.get("out")
    if out is not None and any(isinstance(a, Tensor) for a in (out if isinstance(out, tuple) else (out,))):
        raise _errors.UnsupportedOperationError(f"numpy.{ufunc.__name__}: out= cannot be a quabla Tensor (arrays are immutable)", op=ufunc.__name__)
    args = [_array(a) if isinstance(a, Tensor) else a for a in inputs]
    return getattr(ufunc, method)(*args, **kwargs)


_UFUNC_FUNCTIONS = None


def _ufunc_functions():
    """NumPy ufunc names -> the quabla.numpy functions of those names (built on first use)."""
    global _UFUNC_FUNCTIONS
    if _UFUNC_FUNCTIONS is None:
        from . import numpy as qnp
        names = [n for n in dir(np) if isinstance(getattr(np, n, None), np.ufunc)]
        _UFUNC_FUNCTIONS = {getattr(np, n).__name__: getattr(qnp, n) for n in names if callable(getattr(qnp, n, None))}
    return _UFUNC_FUNCTIONS


def _item(self, *args):
    """``x.item()``, or with indices NumPy's ``item(i)`` (a flat index) / ``item(i, j, ...)``."""
    if not args:
        return _rust_item(self)
    return _array(self).item(*args)


def _repr(self):
    a = _numpy(self)
    body = np.array2string(a, separator=", ", prefix="Tensor(")
    return f"Tensor({body}, dtype={self.dtype.name})"


def _str(self):
    return str(_numpy(self))


def _devices(self):
    """The set of devices holding the tensor, as ``jax.Array.devices()``: one, its
    :attr:`device` (Quabla names devices by strings such as ``"cpu"``)."""
    return {self.device}


def _setitem(self, key, value):
    """Arrays are immutable, as JAX's: an ArgumentTypeError (a TypeError) naming ``.at``."""
    raise _errors.ArgumentTypeError(
        f"{type(self).__name__} does not support item assignment: Quabla arrays are immutable, as JAX's. "
        "Instead of x[idx] = y, use x = x.at[idx].set(y) (or .add, .multiply, .min, .max)"
    )


def _iter(self):
    if self.ndim == 0:
        raise _errors.ArgumentTypeError("iteration over a 0-d tensor")
    for i in range(self.shape[0]):
        yield self[i]


def _reshape(self, *shape, order="C", copy=None, out_sharding=None):
    """``x.reshape(2, 3)`` or ``x.reshape((2, 3), order="F")``, as jax.Array.reshape."""
    return o.reshape(self, shape[0] if len(shape) == 1 else shape, order)


def _transpose(self, *axes):
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        axes = axes[0]
    return o.transpose(self, axes or None)


def _clip(self, a_min=None, a_max=None):
    return o.clip(self, a_min, a_max)


def _format(self, spec):
    if self.size == 1 and spec:
        return format(self.item(), spec)
    return str(self)


def _foreign(y):
    """True for an operand that is not array-like (None, a string, an arbitrary object): ``==``
    and ``!=`` return NotImplemented for it, so Python answers False / True as for JAX arrays
    instead of raising."""
    return not (is_array(y) or isinstance(y, (bool, int, float, complex, np.ndarray, np.generic, list, tuple)))


from . import _numpy as _np_mod  # noqa: E402
from . import errors as _errors

_METHODS = {
    "__add__": o.add,
    "__radd__": _swap(o.add),
    "__sub__": o.subtract,
    "__rsub__": _swap(o.subtract),
    "__mul__": o.multiply,
    "__rmul__": _swap(o.multiply),
    "__truediv__": o.divide,
    "__rtruediv__": _swap(o.divide),
    "__floordiv__": o.floor_divide,
    "__rfloordiv__": _swap(o.floor_divide),
    "__mod__": o.remainder,
    "__rmod__": _swap(o.remainder),
    "__pow__": o.power,
    "__rpow__": _swap(o.power),
    "__matmul__": o.matmul,
    "__rmatmul__": _swap(o.matmul),
    "__neg__": o.negative,
    "__pos__": lambda x: x,
    "__abs__": o.abs,
    "__invert__": o.invert,
    "__and__": o.bitwise_and,
    "__rand__": _swap(o.bitwise_and),
    "__or__": o.bitwise_or,
    "__ror__": _swap(o.bitwise_or),
    "__xor__": o.bitwise_xor,
    "__rxor__": _swap(o.bitwise_xor),
    "__lshift__": _bits.left_shift,
    "__rlshift__": _swap(_bits.left_shift),
    "__rshift__": _bits.right_shift,
    "__rrshift__": _swap(_bits.right_shift),
    "__lt__": o.less,
    "__le__": o.less_equal,
    "__gt__": o.greater,
    "__ge__": o.greater_equal,
    "__eq__": lambda x, y: NotImplemented if _foreign(y) else o.equal(x, y),
    "__ne__": lambda x, y: NotImplemented if _foreign(y) else o.not_equal(x, y),
    "__getitem__": _indexing.getitem,
    "__setitem__": _setitem,
    "at": property(lambda x: _indexing.at(x)),
    "__iter__": _iter,
    "astype": o.astype,
    "reshape": _reshape,
    "transpose": _transpose,
    "T": property(lambda x: o.transpose(x)),
    "swapaxes": o.swapaxes,
    "squeeze": o.squeeze,
    "expand_dims": o.expand_dims,
    "flatten": o.ravel,
    "ravel": o.ravel,
    "broadcast_to": o.broadcast_to,
    "sum": o.sum,
    "mean": o.mean,
    "max": o.max,
    "min": o.min,
    "prod": o.prod,
    "argmax": o.argmax,
    "argmin": o.argmin,
    "any": o.any,
    "all": o.all,
    "var": o.var,
    "std": o.std,
    "clip": _clip,
    "take": _indexing.take,
    "dot": o.dot,
    "abs": o.abs,
    "exp": o.exp,
    "expm1": o.expm1,
    "log": o.log,
    "log1p": o.log1p,
    "sin": o.sin,
    "cos": o.cos,
    "tan": o.tan,
    "tanh": o.tanh,
    "sqrt": o.sqrt,
    "rsqrt": o.rsqrt,
    "relu": o.relu,
    "sigmoid": o.sigmoid,
    "softplus": o.softplus,
    "sign": o.sign,
    "floor": o.floor,
    "ceil": o.ceil,
    "round": o.round,
    "erf": o.erf,
    "sort": _np_mod.sort,
    "argsort": _np_mod.argsort,
    "diagonal": _np_mod.diagonal,
    "trace": _np_mod.trace,
    "repeat": _np_mod.repeat,
    "__hash__": None,
    "__array_priority__": 1000,
}

_TENSOR_ONLY = {
    "__array_ufunc__": _array_ufunc,
    "item": _item,
    "numpy": _numpy,
    "__array__": _array,
    "__repr__": _repr,
    "__str__": _str,
    "__format__": _format,
    "devices": _devices,
}


def _deferring(f):
    """The binary operator ``f`` returning NotImplemented for an operand that opts out of
    array operators (``__array_ufunc__ = None``, NumPy's protocol: a sparse matrix), so that
    Python calls its reflected method (``x @ bcoo``), as NumPy and JAX arrays do. The check
    runs only when ``f`` rejects the operand."""

    def method(x, y):
        try:
            return f(x, y)
        except _errors.ArgumentTypeError:
            if getattr(type(y), "__array_ufunc__", 0) is None:
                return NotImplemented
            raise

    return method


# The binary operators that defer to such operands.
_DEFERRING = {"__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
              "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__"}


_rust_item = Tensor.item


def install():
    for name, fn in _METHODS.items():
        fn = _deferring(fn) if name in _DEFERRING else fn
        setattr(Tensor, name, fn)
        setattr(Tracer, name, fn)
    for name, fn in _TENSOR_ONLY.items():
        setattr(Tensor, name, fn)


def _no_out(name, out):
    if out is not None:
        raise _errors.UnsupportedOperationError(f"{name}: out= is not supported (arrays are immutable)", op=name)


def late_methods(qb):
    """The methods over functions defined after the core (python/quabla/_math.py, _shape.py,
    _select.py), with jax.Array's signatures, over the package ``qb`` (scripts/gen_stubs.py
    writes their stubs)."""

    def cumsum(x, axis=None, dtype=None, out=None):
        _no_out("cumsum", out)
        return qb.cumsum(x, axis, dtype)

    def cumprod(x, axis=None, dtype=None, out=None):
        _no_out("cumprod", out)
        return qb.cumprod(x, axis, dtype)

    def ptp(x, axis=None, out=None, keepdims=False):
        _no_out("ptp", out)
        return qb.ptp(x, axis, keepdims=keepdims)

    def choose(x, choices, out=None, mode="raise"):
        _no_out("choose", out)
        return qb.choose(x, choices, mode=mode)

    def compress(x, condition, axis=None, *, out=None, size=None, fill_value=0):
        _no_out("compress", out)
        return qb.compress(condition, x, axis, size=size, fill_value=fill_value)

    return {
        "nonzero": lambda x, *, fill_value=None, size=None: qb.nonzero(x, size=size, fill_value=fill_value),
        "cumsum": cumsum,
        "cumprod": cumprod,
        "searchsorted": lambda x, v, side="left", sorter=None, *, method="scan": qb.searchsorted(x, v, side, sorter, method=method),
        "ptp": ptp,
        "conj": lambda x: qb.conj(x),
        "conjugate": lambda x: qb.conjugate(x),
        "real": property(lambda x: qb.real(x)),
        "imag": property(lambda x: qb.imag(x)),
        # Arrays are immutable: a copy is the array itself.
        "copy": lambda x: x,
        "mT": property(lambda x: qb.matrix_transpose(x)),
        "choose": choose,
        "compress": compress,
        "argpartition": lambda x, kth, axis=-1: qb.argpartition(x, kth, axis),
        "nbytes": property(lambda x: x.size * x.dtype.itemsize),
        "block_until_ready": lambda x: x,
    }


def install_late(qb):
    """Installs :func:`late_methods`; called by ``quabla/__init__.py`` once the modules they
    use are imported."""
    for name, fn in late_methods(qb).items():
        setattr(Tensor, name, fn)
        setattr(Tracer, name, fn)
