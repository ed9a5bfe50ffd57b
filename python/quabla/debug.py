"""Debugging aids that work inside ``jit``, ``grad`` and ``vmap``, as ``jax.debug``.

``qb.debug.print("x = {x}", x=x)`` formats its arguments with ``str.format`` on their runtime
values and writes the line to ``sys.stdout``; ``qb.debug.callback(fn, *args, **kwargs)``
calls ``fn`` on them. Outside a trace both run at once. Inside a traced function each array
argument that is traced becomes one ``quabla.host_callback`` op of the program (the other
arguments are kept by the Python callback as they were at trace time); the compiled program
(or the interpreter) hands the values to the callback when it runs, every time it runs, in
program order. Under ``grad`` the callback sees the primal values (it has no tangent); under
``vmap`` it is called once per example, as JAX's unrolled batching rule (nested vmaps: the
innermost vmap's index varies slowest, as in JAX). Exported StableHLO keeps the callback as a
host-only ``stablehlo.custom_call @quabla.host_callback`` (docs/stablehlo.md).
"""

import itertools
import sys

from . import _quabla as _q
from . import _trace
from . import tree as _tree
from .errors import ArgumentTypeError

__all__ = ["callback", "print"]


def _leaf_values(items):
    """The callback's array values and their vmap flags (outermost vmap first)."""
    return [t for t, _ in items], [list(f) for _, f in items]


def _examples(values, flags):
    """Each example's values: one tuple per combination of the vmapped axes, the innermost
    vmap's index varying slowest (JAX's order). Unbatched values repeat in every example."""
    levels = len(flags[0]) if flags else 0
    sizes = {}
    for v, fl in zip(values, flags):
        for lvl, on in enumerate(fl):
            if on:
                sizes[lvl] = v.shape[sum(fl[:lvl])]
    order = sorted(sizes, reverse=True)  # innermost vmap first: the slowest index
    if not order:
        yield tuple(values)
        return
    for idx in itertools.product(*(range(sizes[lvl]) for lvl in order)):
        at = dict(zip(order, idx))
        ex = []
        for v, fl in zip(values, flags):
            lead = tuple(at[lvl] for lvl in range(levels) if fl[lvl])
            ex.append(v[lead] if lead else v)
        yield tuple(ex)


def _innermost(leaves):
    trace = None
    for x in leaves:
        if type(x) is _trace.Tracer:
            t = x._trace
            if trace is None or (t is not trace and t.depth > trace.depth):
                trace = t
    return trace if trace is not None else _trace.current()


def callback(callback, *args, ordered=False, **kwargs):
    """Calls ``callback(*args, **kwargs)`` with the runtime values of the arguments, as
    ``jax.debug.callback``, inside ``jit``, ``grad`` and ``vmap`` too (once per example under
    ``vmap``; primal values under ``grad``).

    Args:
        callback: a Python callable; its return value is ignored.
        *args, **kwargs: pytrees; traced array leaves arrive as ``qb.Tensor``, every other
            leaf as it was when the function was traced.
        ordered: accepted for JAX compatibility; callbacks always run in program order.

    Returns:
        None. An exception the callback raises inside a compiled program cannot unwind through
        it: it is reported through ``sys.unraisablehook`` and the program goes on.

    Example:
        >>> seen = []
        >>> f = qb.jit(lambda x: (qb.debug.callback(lambda v: seen.append(v.tolist()), x), x + 1)[1])
        >>> f(qb.array([1.0, 2.0])).tolist(), seen
        ([2.0, 3.0], [[1.0, 2.0]])
    """
    if not callable(callback):
        raise ArgumentTypeError(f"qb.debug.callback: callback must be callable, got {type(callback).__name__}")
    _stage(callback, args, kwargs)


def _stage(fn, args, kwargs):
    leaves, treedef = _tree.flatten((args, kwargs))
    trace = _innermost(leaves)
    if trace is None:
        fn(*args, **kwargs)
        return
    pos = [i for i, x in enumerate(leaves) if type(x) is _trace.Tracer]
    operands = [trace.lift(leaves[i]) for i in pos]

    def host(items):
        values, flags = _leaf_values(items)
        for ex in _examples(values, flags):
            full = list(leaves)
            for i, v in zip(pos, ex):
                full[i] = v
            a, k = _tree.unflatten(treedef, full)
            fn(*a, **k)

    cid = _q.register_host_callback(host)
    if not operands:  # still runs each time the program runs: a dummy scalar operand
        operands = [trace.const(_q.full([], 0, _dtypes.int32.code, "qb.debug.callback"))]
        pos = []
    n = len(operands)
    for k, x in enumerate(operands):
        _trace.bind(_q.Op("host_callback", callback=cid, index=k, count=n, batched=[]), x)


def _numpy(x):
    return x.numpy() if isinstance(x, _q.Tensor) else x


def print(fmt, *args, ordered=False, **kwargs):  # noqa: A001 (JAX's name)
    """Prints ``fmt.format(*args, **kwargs)`` with the arguments' runtime values on
    ``sys.stdout``, as ``jax.debug.print``: inside ``jit`` every time the compiled program runs,
    in program order; under ``grad`` the primal values; under ``vmap`` one line per example.

    Args:
        fmt: a ``str.format`` string.
        *args, **kwargs: pytrees; array leaves are formatted as NumPy arrays.
        ordered: accepted for JAX compatibility; prints always run in program order.

    Returns:
        None.

    Example:
        >>> f = qb.jit(lambda x: (qb.debug.print("x = {x}", x=x), x * 2)[1])
        >>> _ = f(qb.array([1.0, 2.0]))
        x = [1. 2.]
    """
    if not isinstance(fmt, str):
        raise ArgumentTypeError(f"qb.debug.print: fmt must be a str, got {type(fmt).__name__}")

    def show(*a, **k):
        a = _tree.map(_numpy, a)
        k = _tree.map(_numpy, k)
        sys.stdout.write(fmt.format(*a, **k) + "\n")

    _stage(show, args, kwargs)


from . import dtypes as _dtypes  # noqa: E402
