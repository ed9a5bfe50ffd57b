"""Tracing: :class:`Tracer` values stand for arrays while a function is traced into a quabla
module. Every op goes through :func:`bind`: on concrete Tensors it runs eagerly (a per-op
compiled program); when a Tracer is involved it is appended to the trace's Rust builder,
which applies the dialect's shape rule at once and raises ShapeError/DTypeError at the
user's line. Concrete Tensors met during a trace become constants of the program; tracers
of enclosing traces (closures inside transformed functions) become captured parameters.
"""

import os
import sys
import threading

from . import _quabla as _q
from .dtypes import BY_CODE
from . import errors as _errors

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


class _Stack(threading.local):
    def __init__(self):
        self.traces = []
        # Differentiations still to come of what is being traced now: +1 while a
        # differentiating transform (grad, jvp, vjp, jacobians) stages its function, -1 while a
        # custom rule is traced (the rule itself is the first of them). Custom derivative
        # calls trace their rules only while it is >= 0 (`_custom.py`).
        self.diff = 0


_STACK = _Stack()


def diff_budget():
    """How many more times the values traced now may be differentiated (see ``_Stack``)."""
    return _STACK.diff


class differentiations:
    """Context manager: ``delta`` more (or, negative, fewer) differentiations of what is
    traced inside it."""

    __slots__ = ("delta",)

    def __init__(self, delta):
        self.delta = delta

    def __enter__(self):
        _STACK.diff += self.delta

    def __exit__(self, *exc):
        _STACK.diff -= self.delta


def current():
    """The innermost trace in progress on this thread, or None."""
    st = _STACK.traces
    return st[-1] if st else None


class Trace:
    """One function being traced: the Rust builder, the constants already added, and for a
    trace opened inside another (a transformed function staged into an enclosing program)
    its parent and the values it captured from enclosing traces.

    While the traced function runs, the trace is on this thread's stack of traces in
    progress (:meth:`enter`/:meth:`exit`). An op whose operands come from several traces in
    progress is recorded in the innermost of them; each operand of an enclosing trace is
    lifted into it as a new parameter (a *capture*), recorded with its source so that the
    call site binds it back (the reference's S4b).
    """

    __slots__ = ("builder", "_consts", "parent", "depth", "_caps", "cap_sources", "concrete", "__weakref__")

    def __init__(self, builder, parent=None, concrete=False):
        self.builder = builder
        self._consts = {}
        self.parent = parent
        self.depth = 0 if parent is None else parent.depth + 1
        self._caps = {}
        self.cap_sources = []
        # A concrete trace knows the values of its parameters (an eager call of a
        # differentiation transform that met Python control flow on a value): its ops also
        # compute their values (`bind`), so bool()/int()/float() of its tracers work, as they
        # do under JAX's grad.
        self.concrete = concrete

    def enter(self):
        _STACK.traces.append(self)

    def exit(self):
        st = _STACK.traces
        if st and st[-1] is self:
            st.pop()
        elif self in st:
            st.remove(self)

    def tracer(self, aval):
        return Tracer(self, aval[0], tuple(aval[1]), BY_CODE[aval[2]])

    def const(self, t):
        """A Tracer for the concrete Tensor ``t`` (a constant of the program)."""
        hit = self._consts.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        r = self.builder.constant(t, user_loc())
        tr = Tracer(self, r[0], tuple(r[1]), BY_CODE[r[2]])
        if self.concrete:
            tr.val = t
        self._consts[id(t)] = (t, tr)
        return tr

    def _capture(self, x):
        """A parameter of this trace standing for ``x``, a tracer of the parent trace."""
        hit = self._caps.get(x._id)
        if hit is not None:
            return hit
        r = self.builder.add_param(list(x.shape), x.dtype.code)
        tr = Tracer(self, r[0], tuple(r[1]), BY_CODE[r[2]])
        if self.concrete:
            tr.val = x.val
        self._caps[x._id] = tr
        self.cap_sources.append(x)
        return tr

    def lift(self, x):
        """``x`` (a Tracer of this trace or of an enclosing trace in progress) as a Tracer of
        this trace; raises TracerError for escaped tracers and tracers of unrelated traces."""
        src = x._trace
        if src is self:
            return x
        if src.builder.closed:
            raise _errors.UnexpectedTracerError(
                "a tracer escaped its trace: it was used after the function traced for it returned "
                "(return it as an output instead of storing it)"
            )
        chain = []
        t = self
        while t is not None and t is not src:
            chain.append(t)
            t = t.parent
        if t is None:
            raise _errors.UnexpectedTracerError(
                f"a tracer {x!r} of another trace was used here: only tracers of enclosing traces in progress can be "
                "closed over (a jitted function called outside the trace that created the tracer cannot use it); "
                "pass it as an argument"
            )
        for t in reversed(chain):
            x = t._capture(x)
        return x

    def id_of(self, x):
        """The value id of an operand in this trace."""
        if type(x) is Tracer:
            if x._trace is not self:
                return self.lift(x)._id
            return x._id
        if isinstance(x, Tensor):
            return self.const(x)._id
        raise _errors.ArgumentTypeError(f"expected a Tensor or a Tracer, got {type(x).__name__}")


_CONTROL_HINT = (
    "for a Python `if` on a traced value use qb.cond(pred, true_fun, false_fun, *operands) (or qb.switch(index, branches, *operands)), "
    "for a `while` use qb.while_loop(cond_fun, body_fun, init_val) (or qb.fori_loop(lower, upper, body_fun, init_val)), "
    "and for elementwise selection qb.where(condition, x, y)"
)


class Tracer:
    """An abstract array value inside a trace (shape and dtype are known, values are not).

    Tracers support the same operators and methods as :class:`Tensor`. Converting one to a
    Python value (``bool()``, ``float()``, ``int()``, ``.item()``, ``.numpy()``, using it in an
    ``if``, or as an index) raises :class:`TracerError`.
    """

    __slots__ = ("_trace", "_id", "shape", "dtype", "weak", "val")
    __array_priority__ = 1000
    __array_ufunc__ = None

    def __init__(self, trace, vid, shape, dtype):
        self._trace = trace
        self._id = vid
        self.shape = shape
        self.dtype = dtype
        # A weak scalar (a Python number that jit made a parameter, and arithmetic of such
        # values): it promotes like the Python number it stands for (`_ops._binary_operands`).
        self.weak = False
        # The value, in a concrete trace (`Trace.concrete`), when known.
        self.val = None

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

    def _concrete(self, what, cls=None):
        if self.val is not None:
            return self.val
        raise (cls or _errors.ConcretizationTypeError)(
            f"{what} needs a concrete value, but this is a traced value {self!r} inside a jitted function; {_CONTROL_HINT}"
        )

    def __bool__(self):
        return bool(self._concrete("bool() / a Python `if` or `while` on a tensor", _errors.TracerBoolConversionError))

    def __float__(self):
        return float(self._concrete("float()"))

    def __int__(self):
        return int(self._concrete("int()", _errors.TracerIntegerConversionError))

    def __index__(self):
        return self._concrete("using a tensor as an index", _errors.TracerIntegerConversionError).__index__()

    def __complex__(self):
        return complex(self._concrete("complex()"))

    def item(self):
        return self._concrete(".item()", _errors.TracerArrayConversionError).item()

    def tolist(self):
        return self._concrete(".tolist()", _errors.TracerArrayConversionError).tolist()

    def numpy(self):
        return self._concrete(".numpy()", _errors.TracerArrayConversionError).numpy()

    def __array__(self, dtype=None, copy=None):
        return self._concrete("conversion to a NumPy array (np.asarray)", _errors.TracerArrayConversionError).__array__(dtype)

    def __len__(self):
        if not self.shape:
            raise _errors.ArgumentTypeError("len() of a 0-d tensor")
        return self.shape[0]


def bind(op, *xs):
    """Applies dialect op ``op`` to Tensors or Tracers (explicit shapes, no promotion)."""
    trace = None
    for x in xs:
        if type(x) is Tracer:
            t = x._trace
            if trace is None or (t is not trace and t.depth > trace.depth):
                trace = t
    if trace is None and not xs:
        # An op without operands (iota) inside a trace is recorded there: evaluated eagerly
        # it would enter the program as a dense constant of its full size.
        trace = current()
    if trace is None:
        return _q.apply(op, *xs)
    ids = [trace.id_of(x) for x in xs]
    r = trace.builder.push(op, ids, user_loc())
    vals = _values(trace, xs) if trace.concrete else None
    # Ops on weak scalars only (traced Python numbers and the Python numbers they meet) give
    # weak results, as JAX's weak types; comparisons give ordinary bools.
    weak = bool(xs) and all(type(x) is Tracer and x.weak for x in xs)
    if len(r) == 1:
        v = r[0]
        t = Tracer(trace, v[0], tuple(v[1]), BY_CODE[v[2]])
        if weak and not t.dtype.is_bool:
            t.weak = True
        if vals is not None:
            t.val = _q.apply(op, *vals)
        return t
    out = [Tracer(trace, v[0], tuple(v[1]), BY_CODE[v[2]]) for v in r]
    if weak:
        for t in out:
            t.weak = not t.dtype.is_bool
    if vals is not None:
        for t, val in zip(out, _q.apply(op, *vals)):
            t.val = val
    return out


def _values(trace, xs):
    """The concrete values of ``xs`` in concrete trace ``trace`` (None when one is unknown)."""
    vals = []
    for x in xs:
        if type(x) is Tracer:
            if x.val is None:
                return None
            vals.append(x.val)
        else:
            vals.append(x)
    return vals


def is_array(x):
    """True for Tensors and Tracers."""
    return type(x) is Tracer or isinstance(x, Tensor)
