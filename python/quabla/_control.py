"""Structured control flow: :func:`cond` (``quabla.if`` in the IR), :func:`while_loop` and
:func:`fori_loop` (``quabla.while``) and :func:`stop_gradient`.

Inside a trace, ``cond`` traces both branches, each into a region builder of the innermost
trace (``TraceBuilder.region``) opened as a child :class:`~quabla._trace.Trace`: the operands'
leaves are the branch's parameters, and whatever a branch closes over (tracers of enclosing
traces, eager arrays) is captured by the usual lifting, so each branch ends with its own
captures. The ``if`` then takes ``(pred, operand leaves, captures of the true branch,
captures of the false branch)``, each branch's parameters mapped onto those operands
(``TraceBuilder.push_if``). Outside any trace a concrete predicate just calls the chosen
branch, as JAX does eagerly.
"""

import numpy as np

from . import dtypes as _dt
from . import tree as _tree
from ._ops import _op, _to_array
from ._trace import Trace, Tracer, bind, current, is_array, user_loc
from .errors import DTypeError, ShapeError, TracerError

__all__ = ["cond", "switch", "while_loop", "fori_loop", "stop_gradient"]


def _pred_array(pred):
    """``pred`` as a 0-d bool array (numbers mean ``pred != 0``, as in JAX)."""
    p = _to_array(pred)
    if p.shape != ():
        raise ShapeError(f"cond: the predicate must be a scalar (shape ()), got shape {tuple(p.shape)}")
    if not p.dtype.is_bool:
        if not (p.dtype.is_float or p.dtype.is_int):
            raise DTypeError(f"cond: the predicate must be a boolean or a number, got {p.dtype.name}")
        p = p != 0
    return p


def _signature(tree, avals):
    leaves = ", ".join(f"{d.name}{list(s)}" for s, d in avals)
    return f"{tree} with leaves ({leaves})"


def _trace_branch(t, fun, in_tree, avals, which):
    """Traces ``fun`` on parameters of types ``avals`` into a region builder of ``t``; returns
    (builder, output tree, output avals, captured tracers of ``t``)."""
    name = getattr(fun, "__name__", which)
    b = t.builder.region([(list(s), d.code) for s, d in avals], name if name.isidentifier() else which)
    bt = Trace(b, t)
    params = [bt.tracer(a) for a in b.params()]
    args = _tree.unflatten(in_tree, params)
    bt.enter()
    try:
        out = fun(*args)
        leaves, out_tree = _tree.flatten(out)
        ids = []
        for x in leaves:
            if not (is_array(x) or isinstance(x, (bool, int, float, np.ndarray, np.generic))):
                raise TypeError(f"cond: {which} must return a pytree of arrays or Python numbers, got a {type(x).__name__}")
            ids.append(bt.id_of(_to_array(x)))
        _, outs = b.finish(ids)
    except BaseException:
        b.abandon()
        raise
    finally:
        bt.exit()
    out_avals = [(tuple(o[1]), _dt.BY_CODE[o[2]]) for o in outs]
    return b, out_tree, out_avals, list(bt.cap_sources)


def cond(pred, true_fun, false_fun, *operands):
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``, as one op of the
    program (JAX's ``lax.cond``).

    ``pred`` is a scalar boolean (a number means ``pred != 0``); ``operands`` and the branches'
    outputs are pytrees of arrays; branches may close over tracers of enclosing traces and over
    arrays. Both branches must return the same structure with the same shapes and dtypes
    (else :class:`DTypeError`, or :class:`ShapeError` when only shapes differ, naming both
    signatures). Inside ``jit``/``grad``/``vmap`` both branches are traced; under ``vmap``
    with a batched predicate both run and the results are selected per example. Outside any
    trace a concrete predicate calls the chosen branch only.

    Example:
        >>> qb.cond(qb.array(2.0) > 1.0, lambda x: x * 10.0, lambda x: -x, qb.array(3.0)).item()
        30.0
    """
    if not callable(true_fun) or not callable(false_fun):
        raise TypeError("cond: true_fun and false_fun must be callable")
    return _cond(pred, true_fun, false_fun, operands, ("true_fun", "false_fun"), "cond")


def _cond(pred, true_fun, false_fun, operands, names, what):
    """:func:`cond` with the branches called ``names`` in errors (``switch`` nests it)."""
    leaves, in_tree = _tree.flatten(operands)
    t = current()
    traced = type(pred) is Tracer or any(type(x) is Tracer for x in leaves)
    if t is None and traced:
        raise TracerError(
            f"{what}: called with tracers of a trace that already finished (a tracer escaped its trace); "
            "return values from the traced function instead of storing them"
        )
    if t is None:
        p = _pred_array(pred)
        return true_fun(*operands) if bool(np.asarray(p.numpy())) else false_fun(*operands)
    loc = user_loc()
    p = _pred_array(pred)
    xs = [_to_array(x) for x in leaves]
    avals = [(tuple(x.shape), x.dtype) for x in xs]
    bt, tt, ta, tc = _trace_branch(t, true_fun, in_tree, avals, names[0])
    be, et, ea, ec = _trace_branch(t, false_fun, in_tree, avals, names[1])
    if tt != et or [d for _, d in ta] != [d for _, d in ea] or [s for s, _ in ta] != [s for s, _ in ea]:
        err = ShapeError if tt == et and [d for _, d in ta] == [d for _, d in ea] else DTypeError
        raise err(
            f"{what}: {names[0]} and {names[1]} must return the same pytree of the same shapes and dtypes; "
            f"{names[0]} returns {_signature(tt, ta)}, {names[1]} returns {_signature(et, ea)}"
        )
    n = len(xs)
    ids = [t.id_of(x) for x in xs] + [t.id_of(c) for c in tc] + [t.id_of(c) for c in ec]
    then_map = list(range(n)) + [n + i for i in range(len(tc))]
    else_map = list(range(n)) + [n + len(tc) + i for i in range(len(ec))]
    res = t.builder.push_if(t.id_of(p), ids, bt, then_map, be, else_map, loc)
    return _tree.unflatten(tt, [t.tracer(r) for r in res])


def switch(index, branches, *operands):
    """``branches[index](*operands)`` as one program (JAX's ``lax.switch``): ``index`` is an
    integer scalar clamped to ``[0, len(branches) - 1]``.

    Built as nested :func:`cond` ops (``index <= 0``, then ``index <= 1``, ...), so it has
    cond's derivatives and batching (a batched index runs every branch and selects). Every
    branch must return the same pytree of shapes and dtypes (else :class:`DTypeError` or
    :class:`ShapeError` naming the branches). Outside any trace a concrete index calls the
    chosen branch only.

    Example:
        >>> qb.switch(1, [lambda x: x + 1.0, lambda x: x * 10.0, lambda x: -x], qb.array(2.0)).item()
        20.0
    """
    branches = list(branches)
    if not branches:
        raise ValueError("switch: branches must be a non-empty sequence of functions")
    if not all(callable(b) for b in branches):
        raise TypeError("switch: every branch must be callable")
    i = _to_array(index)
    if i.shape != ():
        raise ShapeError(f"switch: the index must be a scalar (shape ()), got shape {tuple(i.shape)}")
    if not i.dtype.is_int:
        raise DTypeError(f"switch: the index must be an integer, got {i.dtype.name}")
    if len(branches) == 1:
        return branches[0](*operands)
    leaves, _ = _tree.flatten(operands)
    if current() is None and type(i) is not Tracer and not any(type(x) is Tracer for x in leaves):
        k = min(max(int(i.item()), 0), len(branches) - 1)
        return branches[k](*operands)

    def from_(k):
        if k == len(branches) - 1:
            return branches[k]

        def rest(*ops):
            return _cond(i <= k, branches[k], from_(k + 1), ops, (f"branches[{k}]", f"branches[{k + 1}:]"), "switch")

        return rest

    return from_(0)(*operands)


def stop_gradient(x):
    """``x`` (a pytree of arrays) with its derivatives cut: ``grad``, ``jvp`` and ``vjp`` see
    it as a constant (JAX's ``lax.stop_gradient``).

    Example:
        >>> qb.grad(lambda x: x * qb.stop_gradient(x))(qb.array(3.0)).item()
        3.0
    """
    return _tree.map(lambda v: bind(_op("stop_gradient"), _to_array(v)), x)


def while_loop(cond_fun, body_fun, init_val):
    """Repeats ``val = body_fun(val)`` while ``cond_fun(val)``, starting from ``init_val``, as one
    op of the program (JAX's ``lax.while_loop``).

    ``init_val`` is a pytree of arrays; ``body_fun`` must return the same structure with the
    same shapes and dtypes (else :class:`DTypeError` or :class:`ShapeError`, naming both), and
    ``cond_fun`` a scalar boolean. Both may close over tracers of enclosing traces and over
    arrays (carried through the loop unchanged). Forward-mode differentiation (``jvp``) and
    ``vmap`` work through the loop (with a batched predicate the loop runs until every example
    is done, finished examples keeping their values); reverse mode (``grad``) raises
    :class:`UnsupportedOperationError` (JAX rejects it for a dynamic trip count too). Outside
    any trace the loop runs eagerly.

    Example:
        >>> qb.while_loop(lambda v: v[0] < 5, lambda v: (v[0] + 1, v[1] * 2.0), (0, qb.array(1.0)))[1].item()
        32.0
    """
    if not callable(cond_fun) or not callable(body_fun):
        raise TypeError("while_loop: cond_fun and body_fun must be callable")
    leaves, init_tree = _tree.flatten(init_val)
    t = current()
    if t is None and any(type(x) is Tracer for x in leaves):
        raise TracerError("while_loop: called with tracers of a trace that already finished (a tracer escaped its trace)")
    if t is None:
        val = init_val
        while bool(np.asarray(_pred_array(cond_fun(val)).numpy())):
            val = body_fun(val)
        return val
    loc = user_loc()
    xs = [_to_array(x) for x in leaves]
    avals = [(tuple(x.shape), x.dtype) for x in xs]
    _, in_tree = _tree.flatten((_tree.unflatten(init_tree, xs),))
    bc, ct, ca, ccap = _trace_branch(t, cond_fun, in_tree, avals, "cond_fun")
    if not ct.is_leaf() or ca != [((), _dt.bool_)]:
        raise DTypeError(f"while_loop: cond_fun must return a scalar boolean, returns {_signature(ct, ca)}")
    bb, bt, ba, bcap = _trace_branch(t, body_fun, in_tree, avals, "body_fun")
    if bt != init_tree or ba != avals:
        err = ShapeError if bt == init_tree and [d for _, d in ba] == [d for _, d in avals] else DTypeError
        raise err(
            "while_loop: body_fun must return the structure, shapes and dtypes of init_val; "
            f"init_val is {_signature(init_tree, avals)}, body_fun returns {_signature(bt, ba)}"
        )
    n = len(xs)
    ids = [t.id_of(x) for x in xs] + [t.id_of(c) for c in ccap] + [t.id_of(c) for c in bcap]
    cond_map = list(range(n)) + [n + i for i in range(len(ccap))]
    body_map = list(range(n)) + [n + len(ccap) + i for i in range(len(bcap))]
    res = t.builder.push_while(ids, bc, cond_map, bb, body_map, n, loc)
    return _tree.unflatten(init_tree, [t.tracer(r) for r in res[:n]])


def fori_loop(lower, upper, body_fun, init_val):
    """``val = body_fun(i, val)`` for ``i`` from ``lower`` to ``upper - 1`` (JAX's
    ``lax.fori_loop``), as a :func:`while_loop` over ``(i, val)``; the counter is int64 (a
    Python int) or the dtype of ``lower``.

    Example:
        >>> qb.fori_loop(0, 4, lambda i, x: x + i, qb.array(0.5)).item()
        6.5
    """
    if not callable(body_fun):
        raise TypeError("fori_loop: body_fun must be callable")
    lo, hi = _to_array(lower), _to_array(upper)
    if not (lo.dtype.is_int and hi.dtype.is_int) or lo.shape != () or hi.shape != ():
        raise DTypeError(f"fori_loop: lower and upper must be integer scalars, got {lo.dtype.name}{list(lo.shape)} and {hi.dtype.name}{list(hi.shape)}")
    if hi.dtype is not lo.dtype:
        hi = hi.astype(lo.dtype)
    _, _, out = while_loop(lambda c: c[0] < c[1], lambda c: (c[0] + 1, c[1], body_fun(c[0], c[2])), (lo, hi, init_val))
    return out
