"""``sparsify``: run a function written for dense arrays with BCOO/BCSR arguments.

JAX's ``sparsify`` traces the function and substitutes sparse rules per primitive. Quabla's
traces live in its Rust builder, so here ``sparsify(f)(*args)`` calls ``f`` directly while
the NumPy-style functions listed in ``_RULES`` dispatch on sparse operands: for the duration
of the call, the attributes of those names in ``quabla``, ``quabla.numpy`` and ``quabla.lax``
are wrappers that call the sparse rule when an operand is a sparse array and the original
function otherwise (so other code, and other threads, see the same results for dense
operands). Sparse arrays' own operators (``@``, ``*``, ``/``, ``+``, ``-``, unary ``-``,
``abs``, ``**``, ``.T``, ``.sum``, ``.reshape``, ``.astype``) dispatch the same rules with or
without ``sparsify``.
"""

import functools
import sys
import threading

from ... import _ops as _o
from ...errors import ArgumentTypeError, UnsupportedOperationError
from ._bcoo import (BCOO, _add, _divide, _dot, _is_sparse, _matmul, _multiply, _subtract, _sum, _unary_linear, _unary_nonlinear,
                    bcoo_dot_general)
from ._bcsr import BCSR, bcsr_dot_general


def _bcoo_of(x):
    return x.to_bcoo() if isinstance(x, BCSR) else x


def _only_bcoo(name, *xs):
    for x in xs:
        if _is_sparse(x) and not isinstance(x, BCOO):
            raise UnsupportedOperationError(f"sparsify: {name} is not supported for {type(x).__name__} operands; convert with to_bcoo()", op=name)


def _binary(rule, name):
    def f(x, y, *args, **kwargs):
        if args or kwargs:
            raise UnsupportedOperationError(f"sparsify: {name} with sparse operands takes no further arguments", op=name)
        _only_bcoo(name, x, y)
        return rule(x, y)
    return f


def _mm(rule):
    def f(a, b, *args, **kwargs):
        if args or {k: v for k, v in kwargs.items() if v is not None and k not in ("precision", "preferred_element_type")}:
            raise UnsupportedOperationError("sparsify: matmul/dot with sparse operands takes no out= or other arguments", op="matmul")
        out = rule(_bcoo_of(a), _bcoo_of(b))
        pet = kwargs.get("preferred_element_type")
        return out if pet is None else (out.astype(pet) if isinstance(out, BCOO) else _o.astype(out, pet))
    return f


def _dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None, **kwargs):
    if isinstance(lhs, BCSR) or isinstance(rhs, BCSR):
        return bcsr_dot_general(lhs, rhs, dimension_numbers=dimension_numbers, preferred_element_type=preferred_element_type)
    return bcoo_dot_general(lhs, rhs, dimension_numbers=dimension_numbers, preferred_element_type=preferred_element_type)


def _unary(fn, linear):
    name = getattr(fn, "__name__", "unary")

    def f(x, *args, **kwargs):
        if args or kwargs:
            raise UnsupportedOperationError(f"sparsify: {name} with a sparse operand takes no further arguments", op=name)
        _only_bcoo(name, x)
        return (_unary_linear if linear else _unary_nonlinear)(x, fn)
    return f


def _np_sum(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    _only_bcoo("sum", a)
    if kwargs.get("initial") is not None or kwargs.get("where") is not None:
        raise UnsupportedOperationError("sparsify: sum with initial= or where= on a sparse array", op="sum")
    return _sum(a, axis, dtype, out, keepdims)


def _np_transpose(a, axes=None):
    _only_bcoo("transpose", a)
    return a.transpose(axes)


def _np_reshape(a, *args, **kwargs):
    _only_bcoo("reshape", a)
    return a.reshape(*args, **kwargs)


def _lax_reduce_sum(operand, axes):
    _only_bcoo("reduce_sum", operand)
    return _sum(operand, tuple(axes))


_UNARY_NONLINEAR = ("abs", "absolute", "sin", "sinh", "tan", "tanh", "arcsin", "arcsinh", "arctan", "arctanh", "expm1", "log1p",
                    "sign", "sqrt", "square")

_RULES = {
    "matmul": _mm(_matmul),
    "dot": _mm(_dot),
    "multiply": _binary(_multiply, "multiply"),
    "add": _binary(_add, "add"),
    "subtract": _binary(_subtract, "subtract"),
    "divide": _binary(_divide, "divide"),
    "true_divide": _binary(_divide, "divide"),
    "sum": _np_sum,
    "transpose": _np_transpose,
    "reshape": _np_reshape,
}
_LAX_RULES = {
    "dot_general": _dot_general,
    "add": _binary(_add, "add"),
    "sub": _binary(_subtract, "sub"),
    "mul": _binary(_multiply, "mul"),
    "div": _binary(_divide, "div"),
    "reduce_sum": _lax_reduce_sum,
}


def _unary_rules():
    r = {}
    for n in _UNARY_NONLINEAR:
        fn = getattr(_o, n, None) or getattr(sys.modules.get("quabla"), n, None)
        if fn is not None:
            r[n] = _unary(fn, False)
    r["negative"] = _unary(_o.negative, True)
    r["positive"] = _unary(lambda x: x, True)
    return r


_LOCK = threading.RLock()
_STATE = {"depth": 0, "saved": []}


def _has_sparse(args, kwargs):
    return any(_is_sparse(a) for a in args) or any(_is_sparse(v) for v in kwargs.values())


def _dispatcher(orig, rule):
    @functools.wraps(orig)
    def f(*args, **kwargs):
        if _has_sparse(args, kwargs):
            return rule(*args, **kwargs)
        return orig(*args, **kwargs)
    f._sparse_orig = orig
    return f


def _install():
    saved = []
    unary = _unary_rules()
    for modname, table in (("quabla", {**_RULES, **unary}), ("quabla.numpy", {**_RULES, **unary}), ("quabla.lax", {**_LAX_RULES, "neg": unary["negative"],
                                                                                                              **{k: v for k, v in unary.items() if k in ("abs", "sin", "tan", "tanh", "sqrt", "sign", "expm1", "log1p", "sinh")}})):
        mod = sys.modules.get(modname)
        if mod is None:
            continue
        for name, rule in table.items():
            orig = mod.__dict__.get(name)
            if orig is None or not callable(orig) or hasattr(orig, "_sparse_orig"):
                continue
            setattr(mod, name, _dispatcher(orig, rule))
            saved.append((mod, name, orig))
    _STATE["saved"] = saved


def _uninstall():
    for mod, name, orig in reversed(_STATE["saved"]):
        setattr(mod, name, orig)
    _STATE["saved"] = []


class _dispatch:
    """Context manager: the sparse dispatchers installed (re-entrant, counted)."""

    def __enter__(self):
        with _LOCK:
            if _STATE["depth"] == 0:
                _install()
            _STATE["depth"] += 1

    def __exit__(self, *exc):
        with _LOCK:
            _STATE["depth"] -= 1
            if _STATE["depth"] == 0:
                _uninstall()


def sparsify(f, use_tracer=False):
    """A version of ``f`` that accepts sparse arrays (``jax.experimental.sparse.sparsify``).

    While it runs, these functions of ``quabla`` / ``quabla.numpy`` dispatch on BCOO operands:
    ``matmul``, ``dot`` (BCSR too), ``multiply`` (sparse result; sparse x sparse gives
    ``bcoo_multiply_sparse``), ``divide`` (sparse / dense), ``add`` (sparse + sparse of equal
    shape: sparse; sparse + dense of the full shape: dense), ``subtract`` (sparse - sparse),
    ``sum`` (``axis``; a full sum is a dense scalar), ``transpose``, ``reshape``, ``negative``,
    ``positive`` and the zero-preserving ``abs``, ``sin``, ``sinh``, ``tan``, ``tanh``,
    ``arcsin``, ``arcsinh``, ``arctan``, ``arctanh``, ``expm1``, ``log1p``, ``sign``,
    ``sqrt``, ``square``; and of ``quabla.lax``: ``dot_general``, ``add``, ``sub``, ``mul``,
    ``div``, ``neg``, ``reduce_sum`` and the same unary functions. Sparse arrays' operators work
    with or without it. Unlike JAX, functions called through names bound before the call
    (``from quabla.numpy import dot``), other ``lax`` primitives, indexing and control flow
    do not see sparse operands (they raise ArgumentTypeError); ``use_tracer`` is ignored.

    Args:
        f: the function.
        use_tracer: accepted for compatibility.

    Returns:
        The wrapped function; it returns what ``f`` returns.

    Example:
        >>> import quabla.numpy as jnp, quabla.experimental.sparse as qs
        >>> M = qs.BCOO.fromdense(qb.array([[0.0, 2.0], [1.0, 0.0]]))
        >>> qs.sparsify(lambda m, v: jnp.dot(m, v) + 1.0)(M, qb.array([1.0, 1.0])).tolist()
        [3.0, 2.0]
    """
    if not callable(f):
        raise ArgumentTypeError(f"sparsify: f must be callable, got {type(f).__name__}")
    del use_tracer

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        with _dispatch():
            return f(*args, **kwargs)
    return wrapped
