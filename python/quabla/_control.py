"""Structured control flow: :func:`cond` (``quabla.if`` in the IR), :func:`while_loop` and
:func:`fori_loop` (``quabla.while``), :func:`switch` (``quabla.case``) and :func:`stop_gradient`.

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
from ._ops import _norm_axis, _op, _slice_axis, _to_array, concatenate, dynamic_slice, dynamic_update_slice, reshape, stack, zeros
from ._numpy import flip as _flip
from ._ops import maximum as _maximum
from ._ops import minimum as _minimum
from ._trace import Trace, Tracer, bind, current, is_array, user_loc
from .errors import DTypeError, ShapeError
from . import errors as _errors

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "associative_scan", "stop_gradient"]


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
                raise _errors.ArgumentTypeError(f"cond: {which} must return a pytree of arrays or Python numbers, got a {type(x).__name__}")
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
        raise _errors.ArgumentTypeError("cond: true_fun and false_fun must be callable")
    return _cond(pred, true_fun, false_fun, operands, ("true_fun", "false_fun"), "cond")


def _cond(pred, true_fun, false_fun, operands, names, what):
    """:func:`cond` with the branches called ``names`` in errors (``switch`` nests it)."""
    leaves, in_tree = _tree.flatten(operands)
    t = current()
    traced = type(pred) is Tracer or any(type(x) is Tracer for x in leaves)
    if t is None and traced:
        raise _errors.UnexpectedTracerError(
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
    """``branches[index](*operands)`` as one op of the program (JAX's ``lax.switch``):
    ``index`` is an integer scalar clamped to ``[0, len(branches) - 1]``.

    Inside a trace every branch is traced (each with its own captures of enclosing tracers)
    into one ``quabla.case`` on the clamped index, so reverse mode follows the taken branch
    only and a batched index under ``vmap`` runs every branch and selects per example. Every
    branch must return the same pytree of shapes and dtypes (else :class:`DTypeError`, or
    :class:`ShapeError` when only shapes differ, naming both signatures). Outside any trace a
    concrete index calls the chosen branch only.

    Example:
        >>> qb.switch(1, [lambda x: x + 1.0, lambda x: x * 10.0, lambda x: -x], qb.array(2.0)).item()
        20.0
    """
    if not isinstance(branches, (list, tuple)):
        raise _errors.ArgumentTypeError(f"switch: branches must be a sequence of functions, got {type(branches).__name__}")
    branches = list(branches)
    if not branches:
        raise _errors.InvalidArgumentError("switch: branches must be a non-empty sequence of functions")
    if not all(callable(b) for b in branches):
        raise _errors.ArgumentTypeError("switch: every branch must be callable")
    i = _to_array(index)
    if i.shape != ():
        raise ShapeError(f"switch: the index must be a scalar (shape ()), got shape {tuple(i.shape)}")
    if not i.dtype.is_int:
        raise DTypeError(f"switch: the index must be an integer, got {i.dtype.name}")
    leaves, in_tree = _tree.flatten(operands)
    t = current()
    traced = type(i) is Tracer or any(type(x) is Tracer for x in leaves)
    if t is None and traced:
        raise _errors.UnexpectedTracerError("switch: called with tracers of a trace that already finished (a tracer escaped its trace)")
    if t is None:
        k = min(max(int(i.item()), 0), len(branches) - 1)
        return branches[k](*operands)
    if len(branches) == 1:
        return branches[0](*operands)
    loc = user_loc()
    n_br = len(branches)
    # Clamp as JAX does (quabla.case would send an out-of-range index to the last branch,
    # JAX's clamp sends a negative one to the first).
    i = _maximum(_minimum(i, n_br - 1), 0)
    xs = [_to_array(x) for x in leaves]
    avals = [(tuple(x.shape), x.dtype) for x in xs]
    traced_br = [_trace_branch(t, br, in_tree, avals, f"branches[{k}]") for k, br in enumerate(branches)]
    _, t0, a0, _ = traced_br[0]
    for k, (_, tk, ak, _) in enumerate(traced_br[1:], 1):
        if tk != t0 or ak != a0:
            err = ShapeError if tk == t0 and [d for _, d in ak] == [d for _, d in a0] else DTypeError
            raise err(
                "switch: every branch must return the same pytree of the same shapes and dtypes; "
                f"branches[0] returns {_signature(t0, a0)}, branches[{k}] returns {_signature(tk, ak)}"
            )
    n = len(xs)
    ids = [t.id_of(x) for x in xs]
    maps = []
    for _, _, _, caps in traced_br:
        maps.append(list(range(n)) + [len(ids) + j for j in range(len(caps))])
        ids += [t.id_of(c) for c in caps]
    res = t.builder.push_case(t.id_of(i), ids, [b for b, _, _, _ in traced_br], maps, loc)
    return _tree.unflatten(t0, [t.tracer(r) for r in res])


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
    is done, finished examples keeping their values). Reverse mode (``grad``) works when the
    trip count is static (a counter from a constant, stepped by a constant, compared against a
    constant, as :func:`fori_loop` with concrete bounds and :func:`scan` build); otherwise it
    raises :class:`UnsupportedOperationError`, as JAX rejects reverse mode of a while loop.
    Outside any trace the loop runs eagerly.

    Example:
        >>> qb.while_loop(lambda v: v[0] < 5, lambda v: (v[0] + 1, v[1] * 2.0), (0, qb.array(1.0)))[1].item()
        32.0
    """
    if not callable(cond_fun) or not callable(body_fun):
        raise _errors.ArgumentTypeError("while_loop: cond_fun and body_fun must be callable")
    leaves, init_tree = _tree.flatten(init_val)
    t = current()
    if t is None and any(type(x) is Tracer for x in leaves):
        raise _errors.UnexpectedTracerError("while_loop: called with tracers of a trace that already finished (a tracer escaped its trace)")
    if t is None:
        # The state as arrays (NumPy arrays and Python numbers become Tensors, as JAX's loop
        # gives arrays), whatever the body returns from them.
        val = _tree.unflatten(init_tree, [_to_array(x) for x in leaves])
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


def _static_int(x):
    """``x`` as a Python int when it is concrete (a Python or NumPy integer, or a concrete 0-d
    integer Tensor), else None."""
    if isinstance(x, bool):
        return None
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, np.ndarray):
        return int(x) if x.shape == () and x.dtype.kind in "iu" else None
    if type(x) is Tracer or current() is not None and not is_array(x):
        return None
    if is_array(x) and type(x) is not Tracer and x.shape == () and x.dtype.is_int:
        return int(x.item())
    return None


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """``val = body_fun(i, val)`` for ``i`` from ``lower`` to ``upper - 1`` (JAX's
    ``lax.fori_loop``); the counter is int64 for Python ints, else the dtype of ``lower``.

    With concrete bounds (Python ints or concrete arrays) the loop is a :func:`scan` of
    ``upper - lower`` steps, so it has a static trip count and reverse mode (``grad``) works
    through it; ``unroll`` (an int or a bool) is scan's. With traced bounds it is a
    :func:`while_loop` over ``(i, upper, val)``: forward mode and ``vmap`` work, reverse mode
    raises :class:`UnsupportedOperationError` as in JAX, and ``unroll`` is a ValueError.

    Example:
        >>> qb.fori_loop(0, 4, lambda i, x: x + i, qb.array(0.5)).item()
        6.5
    """
    if not callable(body_fun):
        raise _errors.ArgumentTypeError("fori_loop: body_fun must be callable")
    lo, hi = _to_array(lower), _to_array(upper)
    if not (lo.dtype.is_int and hi.dtype.is_int) or lo.shape != () or hi.shape != ():
        raise DTypeError(f"fori_loop: lower and upper must be integer scalars, got {lo.dtype.name}{list(lo.shape)} and {hi.dtype.name}{list(hi.shape)}")
    if hi.dtype is not lo.dtype:
        hi = hi.astype(lo.dtype)
    slo, shi = _static_int(lower), _static_int(upper)
    if slo is not None and shi is not None:
        n = max(shi - slo, 0)
        if n == 0:
            return init_val
        dt = lo.dtype

        def step(i, val, _):
            if isinstance(i, int):  # a step run outside any trace
                k = _to_array(i + slo, dt)
            else:
                k = i if slo == 0 else i + slo
                k = k if dt is _dt.int64 else k.astype(dt)
            return body_fun(k, val), None

        out, _ = _scan(step, init_val, None, n, False, 1 if unroll is None else unroll, "fori_loop")
        return out
    if unroll is not None and unroll is not False and unroll != 1:
        raise _errors.InvalidArgumentError("fori_loop: unroll needs static (concrete) lower and upper bounds")
    _, _, out = while_loop(lambda c: c[0] < c[1], lambda c: (c[0] + 1, c[1], body_fun(c[0], c[2])), (lo, hi, init_val))
    return out


def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
    """Scans ``f(carry, x) -> (carry, y)`` over the leading axis of ``xs`` (JAX's
    ``lax.scan``): returns the final carry and the ``y``s stacked along a new leading axis.

    ``init`` (the carry), ``xs`` and ``y`` are pytrees of arrays; every leaf of ``xs`` has the
    same leading extent, or ``xs`` is None and ``length`` gives the number of steps. ``f`` must
    return a carry of the structure, shapes and dtypes of ``init`` (else :class:`DTypeError`
    or :class:`ShapeError` naming both). ``reverse=True`` scans from the last element to the
    first (``ys`` still in the order of ``xs``); ``unroll`` runs that many steps per loop
    iteration (``True``: the whole scan unrolled). Inside a trace the scan is one
    ``quabla.while`` over a counter with a static trip count whose ``x``s are read with
    ``dynamic_slice`` and whose ``y``s are written with ``dynamic_update_slice``, so ``grad``,
    ``jvp``, ``vmap`` and second-order derivatives go through it. Outside any trace it runs
    step by step. Quabla has no zero-extent arrays: a scan of length 0 with ``y`` outputs is a
    :class:`ShapeError` (JAX returns empty ``ys``).

    Example:
        >>> c, ys = qb.scan(lambda c, x: (c + x, c * x), qb.array(0.0), qb.array([1.0, 2.0, 3.0]))
        >>> c.item(), ys.tolist()
        (6.0, [0.0, 2.0, 9.0])
    """
    if not callable(f):
        raise _errors.ArgumentTypeError("scan: f must be callable")
    return _scan(lambda i, c, x: f(c, x), init, xs, length, reverse, unroll, "scan")


def _scan_length(xs_arrays, length, what):
    lens = set()
    for a in xs_arrays:
        if a.ndim == 0:
            raise ShapeError(f"{what}: every leaf of xs needs a leading axis to scan over, got a scalar")
        lens.add(a.shape[0])
    if length is not None:
        if isinstance(length, bool) or not isinstance(length, (int, np.integer)):
            raise _errors.ArgumentTypeError(f"{what}: length must be a Python int, got {type(length).__name__}")
        length = int(length)
        if length < 0:
            raise _errors.InvalidArgumentError(f"{what}: length must be non-negative, got {length}")
        lens.add(length)
    if len(lens) > 1:
        raise ShapeError(f"{what}: the leading axes of xs and length must agree, got extents {sorted(lens)}")
    if not lens:
        raise _errors.InvalidArgumentError(f"{what}: needs xs or length to know the number of steps")
    return lens.pop()


def _unroll_factor(unroll, n, what):
    if unroll is True:
        return max(n, 1)
    if unroll is False or unroll is None:
        return 1
    if isinstance(unroll, (int, np.integer)) and int(unroll) >= 1:
        return min(int(unroll), max(n, 1))
    raise _errors.InvalidArgumentError(f"{what}: unroll must be a positive int or a bool, got {unroll!r}")


def _check_carry(what, init_tree, init_avals, out_tree, out_avals):
    if out_tree != init_tree or out_avals != init_avals:
        err = ShapeError if out_tree == init_tree and [d for _, d in out_avals] == [d for _, d in init_avals] else DTypeError
        raise err(
            f"{what}: the carry returned by the body must have the structure, shapes and dtypes of init; "
            f"init is {_signature(init_tree, init_avals)}, the body returns {_signature(out_tree, out_avals)}"
        )


def _split_out(what, out):
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise _errors.ArgumentTypeError(f"{what}: the body must return a pair (carry, y), got {type(out).__name__}")
    return out[0], out[1]


def _scan(g, init, xs, length, reverse, unroll, what):
    """The scan of ``g(i, carry, x) -> (carry, y)`` (``i`` the step index 0..n-1 in the order
    of ``xs``, a traced int64 inside the loop)."""
    xs_leaves, xs_tree = _tree.flatten(xs)
    arrays = [_to_array(a) for a in xs_leaves]
    n = _scan_length(arrays, length, what)
    k = _unroll_factor(unroll, n, what)
    init_leaves, init_tree = _tree.flatten(init)
    carry0 = [_to_array(c) for c in init_leaves]
    init_avals = [(tuple(c.shape), c.dtype) for c in carry0]
    carry0 = _tree.unflatten(init_tree, carry0)

    def x_at(pos):
        if isinstance(pos, int):
            return _tree.unflatten(xs_tree, [a[pos] for a in arrays])
        return _tree.unflatten(xs_tree, [reshape(dynamic_slice(a, (pos,) + (0,) * (a.ndim - 1), (1,) + tuple(a.shape[1:]), allow_negative_indices=False), tuple(a.shape[1:])) for a in arrays])

    def one(i, carry):
        pos = (n - 1 - i) if reverse else i
        c, y = _split_out(what, g(pos, carry, x_at(pos)))
        c_leaves, c_tree = _tree.flatten(c)
        c_arr = [_to_array(v) for v in c_leaves]
        _check_carry(what, init_tree, init_avals, c_tree, [(tuple(v.shape), v.dtype) for v in c_arr])
        return _tree.unflatten(c_tree, c_arr), y, pos

    t = current()
    traced = any(type(x) is Tracer for x in xs_leaves + init_leaves)
    if t is None and traced:
        raise _errors.UnexpectedTracerError(f"{what}: called with tracers of a trace that already finished (a tracer escaped its trace)")
    if t is None and n == 0:
        # Nothing runs; one step on zeros tells whether there are ys (a zero-length scan with
        # ys would need zero-extent arrays).
        xz = _tree.unflatten(xs_tree, [zeros(tuple(a.shape[1:]), a.dtype) for a in arrays])
        _, y = _split_out(what, g(0, carry0, xz))
        if _tree.flatten(y)[0]:
            raise ShapeError(f"{what}: a scan of length 0 would return empty ys (zero-extent arrays are not supported)")
        return carry0, y
    if t is None or k >= n > 0:
        # Step by step (eagerly, or fully unrolled into the trace).
        return _run_steps(one, carry0, n, what)
    # Trace one step on its own (then dropped) for the avals of the ys.
    i_aval = [((), _dt.int64)]
    x_avals = [(tuple(a.shape[1:]), a.dtype) for a in arrays]
    _, in_tree = _tree.flatten((0, carry0, _tree.unflatten(xs_tree, [0] * len(arrays))))

    def probe(i, c, x):
        return _split_out(what, g(i, c, x))

    pb, out_tree, out_avals, _ = _trace_branch(t, probe, in_tree, i_aval + init_avals + x_avals, what)
    pb.abandon()
    c_struct, y_struct = _tree.unflatten(out_tree, list(range(len(out_avals))))
    c_leaves, c_tree = _tree.flatten(c_struct)
    y_leaves, y_tree = _tree.flatten(y_struct)
    _check_carry(what, init_tree, init_avals, c_tree, [out_avals[j] for j in c_leaves])
    y_avals = [out_avals[j] for j in y_leaves]
    if n == 0:
        if y_avals:
            raise ShapeError(f"{what}: a scan of length 0 would return empty ys (zero-extent arrays are not supported)")
        return carry0, _tree.unflatten(y_tree, [])
    ys0 = [zeros((n,) + tuple(s), d) for s, d in y_avals]
    rounds, rest = divmod(n, k)

    def body(c):
        i, carry, ys = c
        for u in range(k):
            j = i * k + u if k > 1 else i
            carry, y, pos = one(j, carry)
            y_leaves = [_to_array(v) for v in _tree.flatten(y)[0]]
            ys = [dynamic_update_slice(Y, reshape(v, (1,) + tuple(v.shape)), (pos,) + (0,) * v.ndim, allow_negative_indices=False) for Y, v in zip(ys, y_leaves)]
        return (i + 1, carry, ys)

    _, carry, ys = while_loop(lambda c: c[0] < rounds, body, (0, carry0, ys0))
    for j in range(rounds * k, n):
        carry, y, pos = one(j, carry)
        y_leaves = [_to_array(v) for v in _tree.flatten(y)[0]]
        ys = [dynamic_update_slice(Y, reshape(v, (1,) + tuple(v.shape)), (pos,) + (0,) * v.ndim, allow_negative_indices=False) for Y, v in zip(ys, y_leaves)]
    return carry, _tree.unflatten(y_tree, list(ys))


def _run_steps(one, carry, n, what):
    """Runs the ``n`` steps of a scan one after the other; the ys are stacked in index order."""
    ys = [None] * n
    for i in range(n):
        carry, y, pos = one(i, carry)
        ys[pos] = y
    if n == 0:
        return carry, None
    leaves0, y_tree = _tree.flatten(ys[0])
    cols = [[_to_array(_tree.flatten(y)[0][j]) for y in ys] for j in range(len(leaves0))]
    return carry, _tree.unflatten(y_tree, [stack(c) for c in cols])


def associative_scan(fn, elems, reverse=False, axis=0):
    """Inclusive scan of the pytree of arrays ``elems`` along ``axis`` with the associative
    ``fn`` (``jax.lax.associative_scan``): ``fn(a, b)`` combines two pytrees of ``elems``'
    structure elementwise. A parallel scan (log2(n) levels of ``fn`` on the pairs of the level
    below, then on the odd positions), not a loop: the linear recurrences of state-space
    models.

    Example:
        >>> qb.associative_scan(qb.add, qb.array([1.0, 2.0, 3.0, 4.0])).tolist()
        [1.0, 3.0, 6.0, 10.0]
    """
    name = "associative_scan"
    if not callable(fn):
        raise _errors.ArgumentTypeError(f"{name}: fn must be callable, got {type(fn).__name__}")
    leaves, treedef = _tree.flatten(elems)
    if not leaves:
        raise ShapeError(f"{name}: elems has no arrays")
    xs = [_to_array(x) for x in leaves]
    ax = [_norm_axis(name, axis, x.ndim, x.shape) for x in xs]
    n = xs[0].shape[ax[0]]
    if any(x.shape[a] != n for x, a in zip(xs, ax)):
        raise ShapeError(f"{name}: every array of elems needs the same length along axis {axis}, got shapes {[x.shape for x in xs]}")

    def cut(ys, lo, hi, step=1):
        return [_slice_axis(y, a, lo, hi, step) for y, a in zip(ys, ax)]

    def combine(a, b):
        out = _tree.leaves(fn(_tree.unflatten(treedef, a), _tree.unflatten(treedef, b)))
        if len(out) != len(a):
            raise ShapeError(f"{name}: fn must return elems' structure ({len(a)} arrays), got {len(out)}")
        return [_to_array(o) for o in out]

    def level(ys):
        m = ys[0].shape[ax[0]]
        if m < 2:
            return ys
        # Odd positions: the scan of the pairs; even ones: the first element, then each odd
        # position's prefix combined with the next element.
        odd = level(combine(cut(ys, 0, m - 1, 2), cut(ys, 1, m, 2)))
        even = cut(ys, 0, 1)
        if m > 2:
            even = [concatenate([h, r], axis=a) for h, r, a in zip(even, combine(cut(odd, 0, (m - 1) // 2), cut(ys, 2, m, 2)), ax)]
        # Interleaved along the axis (the odd ones padded by one when m is odd).
        out = []
        for e, o, a in zip(even, odd, ax):
            if e.shape[a] > o.shape[a]:
                o = concatenate([o, zeros(tuple(1 if d == a else k for d, k in enumerate(o.shape)), o.dtype)], axis=a)
            both = reshape(stack([e, o], axis=a + 1), tuple(2 * k if d == a else k for d, k in enumerate(e.shape)))
            out.append(_slice_axis(both, a, 0, m, 1))
        return out

    if reverse:
        xs = [_flip(x, a) for x, a in zip(xs, ax)]
    ys = level(xs)
    if reverse:
        ys = [_flip(y, a) for y, a in zip(ys, ax)]
    return _tree.unflatten(treedef, ys)
