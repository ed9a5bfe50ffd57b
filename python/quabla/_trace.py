"""Tracing: :class:`Tracer` values stand for arrays while a function is traced into a quabla
module. Every op goes through :func:`bind`: on concrete Tensors it runs eagerly (a per-op
compiled program); when a Tracer is involved it is appended to the trace's Rust builder,
which applies the dialect's shape rule at once and raises ShapeError/DTypeError at the
user's line. Concrete Tensors met during a trace become constants of the program.
"""

import os
import sys

from . import _quabla as _q
from .dtypes import BY_CODE
from .errors import TracerError

_PKG_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
Tensor = _q.Tensor


def user_loc():
    """The caller's source location outside the quabla package, as MLIR location text
    (``"file.py":12:0``), or None."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_PKG_DIR):
        f = f.f_back
    if f is None:
        return None
    name = f.f_code.co_filename.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{name}":{f.f_lineno}:0'


class Trace:
    """One function being traced: the Rust builder plus the constants already added."""

    __slots__ = ("builder", "_consts", "__weakref__")

    def __init__(self, builder):
        self.builder = builder
        self._consts = {}

    def const(self, t):
        """A Tracer for the concrete Tensor ``t`` (a constant of the program)."""
        hit = self._consts.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        r = self.builder.constant(t, user_loc())
        tr = Tracer(self, r[0], tuple(r[1]), BY_CODE[r[2]])
        self._consts[id(t)] = (t, tr)
        return tr

    def id_of(self, x):
        """The value id of an operand in this trace."""
        if type(x) is Tracer:
            if x._trace is not self:
                if x._trace.builder.closed:
                    raise TracerError(
                        "a tracer escaped its trace: it was used after the jitted function that created it returned "
                        "(return it as an output instead of storing it)"
                    )
                raise TracerError(
                    "a tracer of another trace was used here: a jitted function called with concrete arguments cannot "
                    "close over the tracers of an enclosing trace; pass them as arguments"
                )
            return x._id
        if isinstance(x, Tensor):
            return self.const(x)._id
        raise TypeError(f"expected a Tensor or a Tracer, got {type(x).__name__}")


_CONTROL_HINT = "use qb.where for elementwise selection (qb.cond for branching on a traced value is not available yet)"


class Tracer:
    """An abstract array value inside a trace (shape and dtype are known, values are not).

    Tracers support the same operators and methods as :class:`Tensor`. Converting one to a
    Python value (``bool()``, ``float()``, ``int()``, ``.item()``, ``.numpy()``, using it in an
    ``if``, or as an index) raises :class:`TracerError`.
    """

    __slots__ = ("_trace", "_id", "shape", "dtype")
    __array_priority__ = 1000
    __array_ufunc__ = None

    def __init__(self, trace, vid, shape, dtype):
        self._trace = trace
        self._id = vid
        self.shape = shape
        self.dtype = dtype

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def _code(self):
        return self.dtype.code

    def __repr__(self):
        dims = ",".join(str(d) for d in self.shape)
        return f"Tracer<{self.dtype.name}[{dims}]>"

    def _concrete(self, what):
        raise TracerError(
            f"{what} needs a concrete value, but this is a traced value {self!r} inside a jitted function; {_CONTROL_HINT}"
        )

    def __bool__(self):
        self._concrete("bool() / Python control flow on a tensor")

    def __float__(self):
        self._concrete("float()")

    def __int__(self):
        self._concrete("int()")

    def __index__(self):
        self._concrete("using a tensor as an index")

    def __complex__(self):
        self._concrete("complex()")

    def item(self):
        self._concrete(".item()")

    def tolist(self):
        self._concrete(".tolist()")

    def numpy(self):
        self._concrete(".numpy()")

    def __array__(self, dtype=None, copy=None):
        self._concrete("conversion to a NumPy array (np.asarray)")

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]


def bind(op, *xs):
    """Applies dialect op ``op`` to Tensors or Tracers (explicit shapes, no promotion)."""
    trace = None
    for x in xs:
        if type(x) is Tracer:
            trace = x._trace
            break
    if trace is None:
        return _q.apply(op, *xs)
    ids = [trace.id_of(x) for x in xs]
    r = trace.builder.push(op, ids, user_loc())
    if len(r) == 1:
        v = r[0]
        return Tracer(trace, v[0], tuple(v[1]), BY_CODE[v[2]])
    return [Tracer(trace, v[0], tuple(v[1]), BY_CODE[v[2]]) for v in r]


def is_array(x):
    """True for Tensors and Tracers."""
    return type(x) is Tracer or isinstance(x, Tensor)
