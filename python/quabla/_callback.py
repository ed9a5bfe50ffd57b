"""``qb.pure_callback`` and ``qb.experimental.io_callback``: a Python function of NumPy arrays
called from traced (jitted, vmapped) code, as ``jax.pure_callback``.

Eagerly the function is simply called. In a trace, each argument leaf is delivered by a
``quabla.host_callback`` op and each result is a ``quabla.callback_result`` op of the
callback's id (docs/spec.md §15): when the program fetches result 0, the runner below is called
(from compiled code or the interpreter) with the delivered arguments and computes every
result. Under ``vmap`` the results carry each vmap's axis; the runner computes them example by
example (``vmap_method="sequential"``, the default) or calls the function once on batched
arrays (``"expand_dims"``, ``"broadcast_all"``). An exception of the function, or results that
do not match ``result_shape_dtypes``, is raised to the caller when the program returns.

Differences from JAX: there is no derivative (as JAX's: wrap the function in ``custom_jvp``);
``sharding`` must be None; callbacks are never removed or merged, so ``io_callback``'s effects
run in program order (``ordered`` is accepted).
"""

import functools
import itertools

import numpy as np

from . import _quabla as _q
from . import _trace
from . import dtypes as _dt
from . import tree as _tree
from ._ops import _op, _shape_str, _to_array
from ._trace import Tracer, bind, is_array
from .errors import ArgumentTypeError, InvalidArgumentError, UnsupportedOperationError

__all__ = ["pure_callback"]

_METHODS = (None, "sequential", "sequential_unrolled", "expand_dims", "broadcast_all", "legacy_vectorized")


def _specs(fn, result_shape_dtypes):
    leaves, tree = _tree.flatten(result_shape_dtypes)
    specs = []
    for leaf in leaves:
        shape, dtype = getattr(leaf, "shape", None), getattr(leaf, "dtype", None)
        if shape is None or dtype is None:
            raise ArgumentTypeError(f"{fn}: result_shape_dtypes must be a pytree of objects with .shape and .dtype (e.g. qb.ShapeDtypeStruct), got a {type(leaf).__name__}")
        try:
            shape = tuple(int(d) for d in shape)
        except (TypeError, ValueError):
            raise ArgumentTypeError(f"{fn}: a result shape must be a sequence of ints, got {shape!r}") from None
        if any(d < 1 for d in shape):
            raise InvalidArgumentError(f"{fn}: result shape {_shape_str(shape)} has a zero or negative extent (Quabla arrays have positive extents)")
        specs.append((shape, _dt.dtype(dtype)))
    return specs, tree


def _result(fn, j, value, shape, dtype):
    """Result ``j`` of the function as a Tensor of ``shape``/``dtype`` (a cast within the
    dtype's kind), or a typed error."""
    try:
        a = np.asarray(value)
    except Exception:
        raise ArgumentTypeError(f"{fn}: result {j} of the callback is a {type(value).__name__}, not an array") from None
    if a.shape != tuple(shape):
        raise InvalidArgumentError(f"{fn}: result {j} of the callback has shape {_shape_str(a.shape)}, but result_shape_dtypes declares {_shape_str(shape)}")
    want = dtype.np
    if a.dtype != want:
        if not np.can_cast(a.dtype, want, casting="same_kind"):
            raise InvalidArgumentError(f"{fn}: result {j} of the callback has dtype {a.dtype}, but result_shape_dtypes declares {dtype.name}")
        a = a.astype(want)
    return _to_array(np.array(a, order="C", copy=True))


def _call(fn, f, args, specs):
    outs = f(*args)
    leaves = _tree.leaves(outs) if not isinstance(outs, np.ndarray) else [outs]
    if len(leaves) != len(specs):
        raise InvalidArgumentError(f"{fn}: the callback returned {len(leaves)} arrays, but result_shape_dtypes declares {len(specs)}")
    return leaves


def _runner(fn, f, specs, method):
    """The function the program calls: (delivered (Tensor, batched flags) pairs, (shape, dtype
    code) of result 0, its batched flags) -> every result as a Tensor with the mapped axes.
    Flags have one entry per vmap, outermost first; an argument's leading dims are the axes of
    its vmaps flagged 1, and every vmap flagging an argument flags the results."""

    def run(items, first, flags):
        mapped = [level for level, b in enumerate(flags) if b]
        sizes = tuple(first[0][:len(mapped)])
        vals = [(np.asarray(t), list(fl)) for t, fl in items]
        if not mapped:
            outs = _call(fn, f, [v for v, _ in vals], specs)
            return [_result(fn, j, o, s, d) for j, (o, (s, d)) in enumerate(zip(outs, specs))]

        def axes(fl):
            """The result axes (positions in ``mapped``) that an argument's leading dims are."""
            return [k for k, level in enumerate(mapped) if level < len(fl) and fl[level]]

        if method in ("expand_dims", "broadcast_all", "legacy_vectorized"):
            args = []
            for v, fl in vals:
                mine = axes(fl)
                shape = [v.shape[mine.index(k)] if k in mine else 1 for k in range(len(mapped))]
                v = v.reshape(tuple(shape) + v.shape[len(mine):])
                if method != "expand_dims":
                    v = np.broadcast_to(v, sizes + v.shape[len(mapped):])
                args.append(v)
            outs = _call(fn, f, args, specs)
            return [_result(fn, j, np.broadcast_to(o, sizes + s), sizes + s, d) for j, (o, (s, d)) in enumerate(zip(outs, specs))]
        per = [[] for _ in specs]
        picks = [axes(fl) for _, fl in vals]
        for idx in itertools.product(*(range(n) for n in sizes)):
            args = [v[tuple(idx[k] for k in mine)] if mine else v for (v, _), mine in zip(vals, picks)]
            for j, o in enumerate(_call(fn, f, args, specs)):
                per[j].append(np.asarray(o))
        out = []
        for j, (s, d) in enumerate(specs):
            try:
                stacked = np.stack(per[j]).reshape(sizes + tuple(np.shape(per[j][0])))
            except ValueError:
                raise InvalidArgumentError(f"{fn}: result {j} of the callback has different shapes across the examples of a vmap") from None
            out.append(_result(fn, j, stacked, sizes + s, d))
        return out

    return run


def _arg_leaf(fn, x):
    if is_array(x):
        return x
    if isinstance(x, (bool, int, float, np.ndarray, np.generic)):
        return _to_array(np.asarray(x))
    raise ArgumentTypeError(f"{fn}: arguments must be pytrees of arrays and numbers, got a leaf of type {type(x).__name__}")


def _callback(fn, callback, result_shape_dtypes, args, kwargs, vmap_method, sharding):
    if not callable(callback):
        raise ArgumentTypeError(f"{fn}: callback must be callable, got {type(callback).__name__}")
    if sharding is not None:
        raise UnsupportedOperationError(f"{fn}: sharding is not supported (must be None)", op=fn)
    if vmap_method not in _METHODS:
        raise InvalidArgumentError(f"{fn}: vmap_method must be one of {', '.join(repr(m) for m in _METHODS)}, got {vmap_method!r}")
    specs, out_tree = _specs(fn, result_shape_dtypes)
    f = functools.partial(callback, **kwargs) if kwargs else callback
    leaves, in_tree = _tree.flatten(args)
    leaves = [_arg_leaf(fn, x) for x in leaves]

    def host(*xs):
        return f(*_tree.unflatten(in_tree, list(xs)))

    if _trace.current() is None and not any(type(x) is Tracer for x in leaves):
        outs = _call(fn, host, [np.asarray(x) for x in leaves], specs)
        return _tree.unflatten(out_tree, [_result(fn, j, o, s, d) for j, (o, (s, d)) in enumerate(zip(outs, specs))])
    cid = _q.register_pure_callback(_runner(fn, host, specs, vmap_method))
    n = len(leaves)
    for i, x in enumerate(leaves):
        bind(_op("host_callback", callback=cid, index=i, count=n, batched=()), x)
    results = [bind(_op("callback_result", callback=cid, index=j, batched=(), ty=(tuple(s), d.code))) for j, (s, d) in enumerate(specs)]
    return _tree.unflatten(out_tree, results)


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None, **kwargs):
    """Calls the Python function ``callback`` on NumPy arrays from traced code, as
    ``jax.pure_callback``: ``callback(*args, **kwargs)`` must be a pure function returning
    arrays of ``result_shape_dtypes``'s shapes and dtypes.

    Args:
        callback: a function of NumPy arrays (the array leaves of ``args``) returning a pytree
            of arrays.
        result_shape_dtypes: a pytree of objects with ``.shape`` and ``.dtype``
            (``qb.ShapeDtypeStruct``, arrays) describing the results.
        *args: pytrees of arrays and numbers passed to ``callback``.
        sharding: must be None.
        vmap_method: under ``vmap``: None or ``"sequential"`` calls ``callback`` once per
            example; ``"expand_dims"`` once with the batched arguments (unbatched ones with
            size-1 axes); ``"broadcast_all"`` once with every argument broadcast to the batch.
        **kwargs: passed to ``callback``.

    Returns:
        The results, as arrays with ``result_shape_dtypes``'s structure.

    Example:
        >>> f = qb.jit(lambda x: qb.pure_callback(np.sinc, qb.ShapeDtypeStruct(x.shape, x.dtype), x))
        >>> [round(v, 6) for v in f(qb.array([0.0, 0.5])).tolist()]
        [1.0, 0.63662]
    """
    return _callback("pure_callback", callback, result_shape_dtypes, args, kwargs, vmap_method, sharding)


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False, **kwargs):
    """Calls the Python function ``callback`` (which may have effects) from traced code, as
    ``jax.experimental.io_callback``: like :func:`pure_callback`, and never removed or merged
    (every call of the program runs it, in program order, ``ordered`` or not).

    Args:
        callback: a function of NumPy arrays returning a pytree of arrays.
        result_shape_dtypes: a pytree of objects with ``.shape`` and ``.dtype``.
        *args: pytrees of arrays and numbers passed to ``callback``.
        sharding: must be None.
        ordered: accepted (callbacks always run in program order).
        **kwargs: passed to ``callback``.

    Returns:
        The results, as arrays.

    Example:
        >>> seen = []
        >>> f = qb.jit(lambda x: qb.experimental.io_callback(lambda v: seen.append(float(v)) or v, qb.ShapeDtypeStruct((), qb.float64), x))
        >>> f(qb.array(2.0)).item(), seen
        (2.0, [2.0])
    """
    if not isinstance(ordered, bool):
        raise ArgumentTypeError(f"io_callback: ordered must be a bool, got {type(ordered).__name__}")
    return _callback("io_callback", callback, result_shape_dtypes, args, kwargs, "sequential", sharding)
