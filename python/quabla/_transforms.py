"""Function transforms: ``grad``, ``value_and_grad``, ``jvp``, ``vjp``, ``jacobian``,
``hessian`` and ``vmap``.

Mechanism. A transformed function called while a trace is in progress (inside ``jit`` or
inside another transform) *stages* itself: the Python function is traced into its own
private ``func.func`` of the module being built (a child trace, :class:`quabla._trace.Trace`),
a transform declaration of it is added (``quabla.transform = "vjp" | "jvp" | "vmap"``), and
the enclosing trace calls that declaration. The compiler's ``quabla-autodiff`` pass gives
the declarations their bodies, innermost first, so transforms compose in any order
(``grad(grad(f))``, ``jvp(grad(f))``, ``vmap(grad(f))``, ``grad(vmap(f))``, ...).

Called at top level with concrete arguments, a transformed function is compiled like
``jit(transformed)`` (traced into a public ``@main`` that calls the declaration) and cached
per signature; the cache lives on the base function, so ``qb.grad(f)(x)`` re-created in a
loop reuses it. It keeps ``QUABLA_MAX_TRACES`` signatures (8), least recently used out, as ``jit``.

Closures: a function staged inside another trace may close over that trace's tracers (and
those of traces further out); they are lifted into capture parameters of the staged
function, constant for the inner transform, and bound back at the call site, so the
enclosing transforms differentiate (or batch) through them.
"""

import builtins
import functools
import inspect
import math
import re

import numpy as np

from . import _collective
from . import _quabla as _q
from . import dtypes as _dt
from . import tree as _tree
from ._ops import _bool_arg, _op, _to_array, astype, reshape, transpose
from ._staging import TransformedFunction
from ._staging import float_args as _float_args
from ._staging import is_pyscalar as _is_pyscalar
from ._trace import Trace, Tracer, bind, current, differentiations, user_loc
from ._staging import ArgumentError
from .errors import ArgumentTypeError, BatchingError, DTypeError, ShapeError, UnsupportedOperationError
from .errors import InvalidArgumentError as InvalidArgumentError_
from .jit import jit, run_concrete
from . import errors as _errors

__all__ = ["grad", "value_and_grad", "jvp", "vjp", "jacobian", "jacfwd", "jacrev", "hessian", "linearize", "vmap", "pmap",
           "device_put_replicated", "device_put_sharded"]

Tensor = _q.Tensor
float64 = _dt.float64
int64 = _dt.int64


# ---------------------------------------------------------------------------------------------
# Names and paths for messages


def _name(fun):
    return getattr(fun, "__name__", None) or type(fun).__name__


def _shape_str(s):
    return "(" + ", ".join(str(d) for d in s) + ("," if len(s) == 1 else "") + ")"


def _arg_names(fun, n):
    """Names of the first ``n`` positional parameters of ``fun`` (``args[i]`` where unknown)."""
    names = [f"args[{i}]" for i in range(n)]
    while isinstance(fun, _Transformed):
        fun = fun.fun
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return names
    k = 0
    for p in params:
        if k >= n:
            break
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names[k] = p.name
            k += 1
        elif p.kind is p.VAR_POSITIONAL:
            for j in range(k, n):
                names[j] = f"{p.name}[{j - k}]"
            break
    return names


def _paths(x, prefix, out):
    """Appends the path of every leaf of ``x`` (in tree.flatten order) to ``out``: ``prefix``
    followed by the key path as ``qb.tree.keystr`` writes it (``x[0]['w'].bias``)."""
    out.extend(prefix + _tree.keystr(p) for p, _ in _tree.flatten_with_path(x)[0])
    return out


def _describe(x):
    if type(x) is Tracer or isinstance(x, Tensor):
        return f"{x.dtype.name}{list(x.shape)}"
    return type(x).__name__


# ---------------------------------------------------------------------------------------------
# Arguments


def _arrayish(x, fname, path, opaque=False):
    """A Tensor or Tracer for an array-like leaf; None for Python numbers (static), and with
    ``opaque`` for any other object (a leaf of an argument that is not differentiated: a
    function, a string... passed to the function as it is, as JAX's grad does)."""
    if type(x) is Tracer or isinstance(x, Tensor):
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        return _to_array(np.asarray(x))
    if isinstance(x, (bool, int, float)) or opaque:
        return None
    raise _errors.ArgumentTypeError(
        f"{fname}: argument {path} is a {type(x).__name__}; arguments must be pytrees (tuple, list, dict, None, "
        "namedtuples, registered nodes) of arrays and Python numbers"
    )


# The transforms whose eager calls may trace with concrete values (Python control flow on the
# function's values works under JAX's differentiation, not under its vmap or jit).
_CONCRETE_KINDS = ("grad", "value_and_grad", "jacobian", "jacfwd", "jacrev", "hessian", "jvp", "vjp", "fwd")


class _Args:
    """The flattened arguments of one call: leaves, the positional argument each leaf belongs
    to (None for keyword arguments), the tree, and each leaf's value as an array (None for
    static Python numbers)."""

    __slots__ = ("leaves", "owner", "tree", "values", "paths", "names")

    def __init__(self, fun, fname, args, kwargs, diff=(), opaque=False):
        self.names = _arg_names(fun, len(args))
        self.leaves, self.owner, self.paths = [], [], []
        for i, a in enumerate(args):
            ls = _tree.flatten(a)[0]
            self.leaves += ls
            self.owner += [i] * len(ls)
            self.paths += _paths(a, self.names[i], [])
        kl = _tree.flatten(kwargs)[0]
        self.leaves += kl
        self.owner += [None] * len(kl)
        self.paths += _paths(kwargs, "kwargs", [])
        self.tree = _tree.flatten((tuple(args), kwargs))[1]
        self.values = []
        for x, o, p in zip(self.leaves, self.owner, self.paths):
            v = _arrayish(x, fname, p, opaque and o not in diff)
            if v is None and o in diff and _is_pyscalar(x):
                v = _q.full((), float(x), float64.code)  # differentiated Python numbers are float64
            self.values.append(v)

    def rebuild(self, leaves):
        args, kwargs = _tree.unflatten(self.tree, leaves)
        return args, kwargs


def _static_argnums(kind, argnums):
    """``argnums`` of a transform as it is kept (hashed into the compile key): an int, or a
    tuple of ints (a list or another iterable of ints becomes one). An array or any other
    value is an ArgumentError naming the transform."""
    if isinstance(argnums, (int, np.integer)) and not isinstance(argnums, (bool, np.bool_)):
        return int(argnums)
    if isinstance(argnums, (str, bytes, dict, set, frozenset, np.ndarray)) or not hasattr(argnums, "__iter__"):
        raise ArgumentError(f"{kind}: argnums must be an int or a tuple of ints, got {type(argnums).__name__} {argnums!r:.40}")
    nums = tuple(argnums)
    if not builtins.all(isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)) for a in nums):
        raise ArgumentError(f"{kind}: argnums must be an int or a tuple of ints, got {argnums!r:.40}")
    return tuple(int(a) for a in nums)


def _norm_argnums(fname, argnums, nargs):
    """Whether ``argnums`` (as ``_static_argnums`` keeps it: an int or a tuple of ints) is a
    single index, and its indices counted from the front of ``nargs`` arguments."""
    single = isinstance(argnums, int)
    out = []
    for a in (argnums,) if single else argnums:
        j = a + nargs if a < 0 else a
        if not 0 <= j < nargs:
            raise ArgumentError(f"{fname}: argnums {argnums!r} is out of range for {nargs} positional arguments")
        out.append(j)
    if len(set(out)) != len(out):
        raise ArgumentError(f"{fname}: repeated entries in argnums {argnums!r}")
    return single, tuple(out)


def _check_diff_args(fname, a, argnums):
    """Differentiating with respect to an argument without floating-point leaves is an error
    (bool leaves next to float leaves just get no gradient)."""
    for i in argnums:
        vals = [v for v, o in zip(a.values, a.owner) if o == i]
        kinds = [v.dtype for v in vals if v is not None]
        if not any(d.is_float for d in kinds):
            bad = next((d for d in kinds if not d.is_float), None)
            what = f"has dtype {bad.name}" if bad is not None else "has no array leaves"
            raise DTypeError(
                f"{fname}: cannot differentiate with respect to argument {a.names[i]} ({i}), which {what}; "
                "gradients need float32 or float64 inputs (convert with astype)"
            )


# ---------------------------------------------------------------------------------------------
# Staging


class _Staged:
    """A function traced into the module: its name, the parameter index of each argument leaf
    traced as a parameter, parameter avals (those leaves, then captures), the captured tracers
    of the parent trace, the output tree and avals."""

    __slots__ = ("name", "leaf_param", "params", "caps", "out_tree", "outs")

    def __init__(self, name, leaf_param, params, caps, out_tree, outs):
        self.name = name
        self.leaf_param = leaf_param
        self.params = params
        self.caps = caps
        self.out_tree = out_tree
        self.outs = outs


def _out_leaf(x, fname):
    if type(x) is Tracer or isinstance(x, Tensor):
        return x
    if isinstance(x, (bool, int, float, np.ndarray, np.generic)):
        return _to_array(x)
    raise _errors.ArgumentTypeError(f"{fname}: outputs must be pytrees of arrays or Python numbers, got a {type(x).__name__}")


def _stage(fun, parent, a, shapes=None, name=None, inside=None, differentiated=False):
    """Traces ``fun`` into a new private function of ``parent``'s module. ``a`` are the call's
    arguments; ``shapes[i]`` (optional) overrides the traced shape of array leaf i (vmap
    traces one example). The array leaves ``i`` with ``inside(i)`` (default: all) become
    parameters; the others stay values of the parent trace, so that work depending on them
    alone is done there and they enter the function as captures where they meet its
    parameters (the transform then treats them as constants, as JAX treats closed-over
    values). ``differentiated``: the transform differentiates the staged function (custom
    derivative rules met inside it are then traced one level deeper, ``_trace.diff_budget``)."""
    fname = name or _name(fun)
    specs, leaf_param = [], {}
    for i, v in enumerate(a.values):
        if v is not None and (inside is None or inside(i)):
            s = shapes[i] if shapes is not None else v.shape
            leaf_param[i] = len(specs)
            specs.append((list(s), v.dtype.code))
    b = parent.builder.child(specs, fname)
    # A concrete parent (an eager grad that met Python control flow on values) passes the
    # values on, unless the function sees other shapes than the call (vmap's one example).
    t = Trace(b, parent, concrete=parent.concrete and shapes is None)
    avals = b.params()
    leaves = []
    for i, (x, v) in enumerate(zip(a.leaves, a.values)):
        if i in leaf_param:
            p = t.tracer(avals[leaf_param[i]])
            if t.concrete:
                p.val = v.val if type(v) is Tracer else v
            leaves.append(p)
        elif v is None:
            leaves.append(x)
        else:
            leaves.append(v if type(v) is Tracer else parent.const(v))
    args, kwargs = a.rebuild(leaves)
    t.enter()
    try:
        with differentiations(1 if differentiated else 0):
            out = fun(*args, **kwargs)
        out_leaves, out_tree = _tree.flatten(out)
        ids = [t.id_of(_out_leaf(x, fname)) for x in out_leaves]
        res = b.finish(ids)
    except BaseException:
        b.abandon()
        raise
    finally:
        t.exit()
    name, outs = res
    params = [(tuple(p[1]), _dt.BY_CODE[p[2]]) for p in avals]
    params += [(c.shape, c.dtype) for c in t.cap_sources]
    outs = [(tuple(o[1]), _dt.BY_CODE[o[2]]) for o in outs]
    return _Staged(name, leaf_param, params, list(t.cap_sources), out_tree, outs)


def _operands(parent, a, st):
    """Value ids in ``parent`` of the staged function's parameters at this call site."""
    ids = [parent.id_of(a.values[i]) for i in st.leaf_param]
    ids += [parent.id_of(c) for c in st.caps]
    return ids


def _float_index(st):
    """Parameter index -> index among the float parameters (the order of tangents and
    cotangents in JVP/VJP signatures)."""
    out = {}
    for j, (_, d) in enumerate(st.params):
        if d.is_float:
            out[j] = len(out)
    return out


def _call(parent, callee, ids):
    return [parent.tracer(r) for r in parent.builder.call(callee, ids, user_loc())]


def _wrapper(parent, st, keep):
    """A private function with ``st``'s parameters returning outputs ``keep`` of ``st``."""
    b = parent.builder.child([(list(s), d.code) for s, d in st.params], st.name + "_main")
    try:
        ps = [p[0] for p in b.params()]
        rs = b.call(st.name, ps)
        name, _ = b.finish([rs[k][0] for k in keep])
    except BaseException:
        b.abandon()
        raise
    return name


def _fill(parent, shape, dtype, value):
    return parent.const(_q.full(list(shape), value, dtype.code))


def _parent(fname):
    p = current()
    if p is None:
        raise _errors.UnexpectedTracerError(
            f"{fname}: called with tracers of a trace that already finished (a tracer escaped its trace); "
            "return values from the traced function instead of storing them"
        )
    return p


def _has_tracer(x):
    return any(type(leaf) is Tracer for leaf in _tree.leaves(x))


# ---------------------------------------------------------------------------------------------
# Transformed functions and their compile cache


def _freeze(x):
    if isinstance(x, dict):
        return ("dict", tuple((k, _freeze(x[k])) for k in sorted(x)))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(_freeze(c) for c in x))
    return x


class _Transformed(TransformedFunction):
    """A function transformed by ``kind`` with configuration ``config``. Called during a trace
    it stages itself (``_apply``); called at top level it runs the compiled ``jit(self)``."""

    kind = "?"

    def __init__(self, fun, config):
        if not callable(fun):
            raise ArgumentError(f"{self.kind}: expected a callable, got {type(fun).__name__}")
        self.fun = fun
        self.config = config
        self.__name__ = f"{self.kind}({_name(fun)})"
        self.__qualname__ = self.__name__
        self.__doc__ = getattr(fun, "__doc__", None)

    def _chain(self):
        """(base function, hashable spec of the transform stack above it)."""
        if isinstance(self.fun, _Transformed):
            base, spec = self.fun._chain()
        else:
            base, spec = self.fun, ()
        return base, spec + ((self.kind, _freeze(self.config)),)

    def _jitted(self):
        base, spec = self._chain()
        store = None
        if not inspect.ismethod(base):
            store = getattr(base, "__dict__", None)
        if store is None or not isinstance(store, dict):
            store = self.__dict__
        cache = store.get("_quabla_transforms")
        if cache is None:
            cache = store["_quabla_transforms"] = {}
        j = cache.get(spec)
        if j is None:
            j = cache[spec] = jit(self)
        return j

    def __call__(self, *args, **kwargs):
        if current() is None and not _has_tracer((args, kwargs)):
            diff = self._diff(len(args))
            if diff:
                args = _float_args(args, diff)
            opaque = self._opaque(args, kwargs, diff)
            if self._concrete_calls:
                return run_concrete(self, args, kwargs)
            try:
                if opaque:
                    return self._call_opaque(opaque, args, kwargs)
                return self._jitted()(*args, **kwargs)
            except (_errors.TracerBoolConversionError, _errors.TracerIntegerConversionError, _errors.ConcretizationTypeError):
                if self.kind not in _CONCRETE_KINDS:
                    raise
                # Python control flow on a value of the function: as JAX's grad, trace this
                # call with the values known (the program follows this call's branches), and
                # every later eager call too.
                self._concrete_calls = True
                return run_concrete(self, args, kwargs)
        return self._apply(*args, **kwargs)

    _concrete_calls = False

    def __repr__(self):
        return f"<{self.__name__}>"

    def _opaque(self, args, kwargs, diff):
        """Positions of the positional arguments, outside ``diff``, holding leaves that are not
        arrays or numbers (functions, strings...: differentiation transforms pass them to the
        function as they are); raises for such leaves elsewhere."""
        def plain(v):
            return builtins.all(isinstance(x, (Tensor, bool, int, float, np.ndarray, np.generic)) for x in _tree.flatten(v)[0])
        if plain((args, kwargs)):
            return ()  # the common case: one flatten
        opaque = ()
        if self.kind in ("grad", "value_and_grad", "jacobian", "jacfwd", "jacrev", "hessian") and not plain(args):
            opaque = tuple(i for i, x in enumerate(args) if i not in diff and not plain(x))
        if not plain(kwargs) or not plain([x for i, x in enumerate(args) if i not in opaque]):
            _Args(self.fun, self.__name__, args, kwargs)  # raises, naming the argument
        return opaque

    def _call_opaque(self, opaque, args, kwargs):
        """The eager call with the arguments at ``opaque`` static: compiled once per their
        values when they hash, else traced for this call."""
        try:
            hash(tuple(args[i] for i in opaque))
        except TypeError:
            def closed(*dyn, **kw):
                full = list(dyn)
                for i in opaque:
                    full.insert(i, args[i])
                return self(*full, **kw)
            return jit(closed)(*(x for i, x in enumerate(args) if i not in opaque), **kwargs)
        base, spec = self._chain()
        store = self.__dict__.setdefault("_quabla_opaque", {})
        j = store.get((spec, opaque))
        if j is None:
            j = store[(spec, opaque)] = jit(self, static_argnums=opaque)
        return j(*args, **kwargs)

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)


# ---------------------------------------------------------------------------------------------
# grad / value_and_grad


def _grads_tree(a, st, cts, argnums, single):
    """Maps the VJP's parameter cotangents back onto the selected arguments' pytrees."""
    fi = _float_index(st)
    ct_of = {li: cts[fi[j]] for li, j in st.leaf_param.items() if j in fi}
    out = []
    for i in argnums:
        idx = [li for li, o in enumerate(a.owner) if o == i]
        _, td = _tree.flatten(_tree.unflatten(a.tree, list(range(len(a.leaves))))[0][i])
        out.append(_tree.unflatten(td, [ct_of.get(li) for li in idx]))
    return out[0] if single else tuple(out)


def _split_aux(fname, st, has_aux):
    """(index of the main output leaf, indices of the aux leaves, aux tree)."""
    pos = _tree.unflatten(st.out_tree, list(range(len(st.outs))))
    if has_aux:
        if not isinstance(pos, (tuple, list)) or len(pos) != 2:
            raise ArgumentError(f"{fname}: with has_aux=True the function must return a pair (output, aux)")
        main, aux = pos
        aux_leaves, aux_tree = _tree.flatten(aux)
    else:
        main, aux_leaves, aux_tree = pos, [], None
    if not isinstance(main, int):
        raise _errors.ArgumentTypeError(f"{fname}: the function must return a single array, got a {type(main).__name__} of arrays")
    return main, aux_leaves, aux_tree


class _Grad(_Transformed):
    kind = "grad"

    def __init__(self, fun, argnums, has_aux, with_value, allow_int=False):
        argnums = _static_argnums("value_and_grad" if with_value else "grad", argnums)
        super().__init__(fun, (argnums, _bool_arg(None, "has_aux", has_aux), _bool_arg(None, "with_value", with_value), _bool_arg(None, "allow_int", allow_int)))
        self.allow_int = _bool_arg(None, "allow_int", allow_int)
        self.kind = "value_and_grad" if with_value else "grad"
        self.__name__ = self.__qualname__ = f"{self.kind}({_name(fun)})"
        self.argnums, self.has_aux, self.with_value = argnums, _bool_arg(None, "has_aux", has_aux), _bool_arg(None, "with_value", with_value)

    def _diff(self, nargs):
        return _norm_argnums(self.__name__, self.argnums, nargs)[1]

    def _apply(self, *args, **kwargs):
        fname = self.__name__
        parent = _parent(fname)
        single, argnums = _norm_argnums(fname, self.argnums, len(args))
        _collective.reverse_mode_check(fname)
        a = _Args(self.fun, fname, args, kwargs, argnums, opaque=True)
        if not self.allow_int:
            _check_diff_args(fname, a, argnums)
        st = _stage(self.fun, parent, a, inside=lambda i: a.owner[i] in argnums, differentiated=True)
        main, aux_idx, aux_tree = _split_aux(fname, st, self.has_aux)
        shape, dtype = st.outs[main]
        if shape != () or not dtype.is_float:
            raise ShapeError(
                f"{fname}: the function must return a scalar float (shape ()), but it returned an output of shape "
                f"{_shape_str(shape)} and dtype {dtype.name}; use qb.vjp or qb.jacobian for non-scalar outputs"
            )
        ops = _operands(parent, a, st)
        target = st.name if len(st.outs) == 1 else _wrapper(parent, st, [main])
        decl = parent.builder.declare("vjp", target)[0]
        res = _call(parent, decl, ops + [parent.id_of(_fill(parent, (), dtype, 1.0))])
        value, cts = res[0], res[1:]
        grads = _grads_tree(a, st, cts, argnums, single)
        if self.has_aux:
            outs = _call(parent, st.name, ops)
            aux = _tree.unflatten(aux_tree, [outs[i] for i in aux_idx])
            return ((value, aux), grads) if self.with_value else (grads, aux)
        return (value, grads) if self.with_value else grads


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The gradient of a scalar function: ``grad(f)(*args)`` is df/d(args[argnums]).

    Reverse mode: ``f`` is traced into its own function and differentiated by the
    ``quabla-autodiff`` pass (a VJP seeded with 1). Composes with every transform
    (``grad(grad(f))``, ``jit(grad(f))``, ``vmap(grad(f))``, ...). Called with concrete
    arguments it compiles and caches per signature like :func:`jit`.

    Args:
        fun: a function of pytrees of arrays returning a scalar float array (with
            ``has_aux``: a pair ``(scalar, aux)``).
        argnums: the positional argument (an int) or arguments (a tuple) to differentiate.
        has_aux: ``fun`` returns ``(output, aux)``; the result is then ``(grads, aux)``.
        holomorphic: accepted for JAX compatibility; only False (no complex dtypes).
        allow_int: integer arguments among ``argnums`` get None gradients instead of
            raising :class:`DTypeError`.

    Returns:
        A function returning gradients with the pytree structure of the selected arguments
        (a tuple of them for a tuple ``argnums``); bool leaves get None. Python numbers in
        the differentiated positions are treated as float64 arrays.

    Raises:
        ShapeError: ``fun`` returns a non-scalar.
        DTypeError: a differentiated argument is an integer array.

    Example:
        >>> df = qb.grad(lambda x: qb.sin(x) * x)
        >>> round(df(1.3).item(), 6)
        1.311307
        >>> round(qb.grad(df)(1.3).item(), 6)
        -0.717628
    """
    _holomorphic("grad", holomorphic)
    return _Grad(fun, argnums, has_aux, False, allow_int)


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """Like :func:`grad`, but returns ``(value, grads)`` (with ``has_aux``:
    ``((value, aux), grads)``); the value and the gradient come from one program.

    Example:
        >>> v, g = qb.value_and_grad(lambda w: qb.sum(w ** 2))(qb.array([1.0, 2.0]))
        >>> v.item(), g.tolist()
        (5.0, [2.0, 4.0])
    """
    _holomorphic("value_and_grad", holomorphic)
    return _Grad(fun, argnums, has_aux, True, allow_int)


# ---------------------------------------------------------------------------------------------
# jvp / vjp


def _tangent(fname, what, t, primal, path):
    """A tangent or cotangent leaf for ``primal`` (a Tensor/Tracer): Python numbers adopt its
    dtype and shape; arrays must match both."""
    if _is_pyscalar(t) or isinstance(t, bool):
        return _q.full(list(primal.shape), t, primal.dtype.code)
    if isinstance(t, (np.ndarray, np.generic)):
        t = _to_array(np.asarray(t))
    if not (type(t) is Tracer or isinstance(t, Tensor)):
        raise _errors.ArgumentTypeError(f"{fname}: {what} {path} must be an array or a Python number, got a {type(t).__name__}")
    if tuple(t.shape) != tuple(primal.shape) or t.dtype is not primal.dtype:
        raise ShapeError(
            f"{fname}: {what} {path} has shape {_shape_str(t.shape)} and dtype {t.dtype.name}, but its primal has "
            f"shape {_shape_str(primal.shape)} and dtype {primal.dtype.name}"
        )
    return t


class _JvpApply(_Transformed):
    """``(primals, tangents) -> (outputs, output tangents)``."""

    kind = "jvp"

    def __init__(self, fun, has_aux=False):
        super().__init__(fun, (_bool_arg(None, "has_aux", has_aux),))
        self.has_aux = _bool_arg(None, "has_aux", has_aux)

    def _diff(self, nargs):
        return (0,)

    def _apply(self, primals, tangents):
        fname = f"jvp({_name(self.fun)})"
        parent = _parent(fname)
        a = _Args(self.fun, fname, tuple(primals), {}, tuple(range(len(primals))))
        t_leaves = _tree.flatten(tuple(tangents))[0]
        st = _stage(self.fun, parent, a, differentiated=True)
        ops = _operands(parent, a, st)
        tans = []
        for li, j in st.leaf_param.items():
            if st.params[j][1].is_float:
                tans.append(parent.id_of(_tangent(fname, "tangent", t_leaves[li], a.values[li], a.paths[li])))
        for c in st.caps:
            if c.dtype.is_float:
                tans.append(parent.id_of(_fill(parent, c.shape, c.dtype, 0.0)))
        decl = parent.builder.declare("jvp", st.name)[0]
        res = _call(parent, decl, ops + tans)
        n = len(st.outs)
        outs, touts = res[:n], iter(res[n:])
        tl = [next(touts) if d.is_float else _fill(parent, s, d, 0) for s, d in st.outs]
        if self.has_aux:
            pos = _tree.unflatten(st.out_tree, list(range(n)))
            if not isinstance(pos, (tuple, list)) or len(pos) != 2:
                raise ArgumentError(f"{fname}: with has_aux=True the function must return a pair (output, aux)")
            mi, mt = _tree.flatten(pos[0])
            ai, at = _tree.flatten(pos[1])
            return (
                _tree.unflatten(mt, [outs[k] for k in mi]),
                _tree.unflatten(mt, [tl[k] for k in mi]),
                _tree.unflatten(at, [outs[k] for k in ai]),
            )
        return _tree.unflatten(st.out_tree, outs), _tree.unflatten(st.out_tree, tl)


def jvp(fun, primals, tangents, has_aux=False):
    """Forward mode: the output of ``fun(*primals)`` and its directional derivative along
    ``tangents``.

    Args:
        fun: a function of pytrees of arrays.
        primals: a tuple (or list) of arguments.
        tangents: a tuple of the same structure, shapes and dtypes (Python numbers adopt the
            primal's dtype and shape; tangents of integer and bool leaves are ignored).
        has_aux: ``fun`` returns ``(output, aux)``; the result is then
            ``(output, output_tangent, aux)``.

    Returns:
        ``(outputs, output_tangents)``, both with ``fun``'s output structure (integer and bool
        outputs get zero tangents).

    Example:
        >>> y, t = qb.jvp(qb.sin, (0.0,), (2.0,))
        >>> y.item(), t.item()
        (0.0, 2.0)
        >>> y, t, aux = qb.jvp(lambda x: (x * x, x + 1.0), (3.0,), (1.0,), has_aux=True)
        >>> y.item(), t.item(), aux.item()
        (9.0, 6.0, 4.0)
    """
    fname = f"jvp({_name(fun)})"
    if not callable(fun):
        raise ArgumentError(f"jvp: fun must be callable, got a {type(fun).__name__}")
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise ArgumentError(f"{fname}: primals and tangents must be tuples or lists of arguments")
    if len(primals) != len(tangents):
        raise ArgumentError(f"{fname}: {len(primals)} primals but {len(tangents)} tangents")
    pt, tt = _tree.flatten(tuple(primals))[1], _tree.flatten(tuple(tangents))[1]
    if pt != tt:
        raise ArgumentError(f"{fname}: tangents have structure {tt!r} but primals {pt!r}")
    primals = tuple(primals)
    if current() is None and not _has_tracer((primals, tangents)):
        primals = _float_args(primals, range(len(primals)))
        names = _arg_names(fun, len(primals))
        pl = _tree.flatten(primals)[0]
        paths = []
        for i, p in enumerate(primals):
            paths += _paths(p, names[i], [])
        tl = []
        for p, t, path in zip(pl, _tree.flatten(tuple(tangents))[0], paths):
            pa = _arrayish(p, fname, path)
            tl.append(_tangent(fname, "tangent", t, pa, path) if pa is not None and pa.dtype.is_float else t)
        tangents = _tree.unflatten(tt, tl)
    return _JvpApply(fun, has_aux)(primals, tuple(tangents))


class _VjpApply(_Transformed):
    """``(primals, cotangents) -> input cotangents`` (one pytree per primal)."""

    kind = "vjp"

    def __init__(self, fun, has_aux):
        super().__init__(fun, (_bool_arg(None, "has_aux", has_aux),))
        self.has_aux = _bool_arg(None, "has_aux", has_aux)

    def _diff(self, nargs):
        return (0,)

    def _apply(self, primals, ct):
        fname = f"vjp({_name(self.fun)})"
        _collective.reverse_mode_check(fname)
        parent = _parent(fname)
        n = len(primals)
        a = _Args(self.fun, fname, tuple(primals), {}, tuple(range(n)))
        st = _stage(self.fun, parent, a, differentiated=True)
        pos = _tree.unflatten(st.out_tree, list(range(len(st.outs))))
        main = pos[0] if self.has_aux else pos
        main_idx, main_tree = _tree.flatten(main)
        ct_leaves, ct_tree = _tree.flatten(ct)
        if ct_tree != main_tree:
            raise _errors.InvalidArgumentError(f"{fname}: the cotangent has structure {ct_tree!r} but the output {main_tree!r}")
        target = st.name if not self.has_aux else _wrapper(parent, st, main_idx)
        cts = []
        for k, (i, c) in enumerate(zip(main_idx, ct_leaves)):
            s, d = st.outs[i]
            if d.is_float:
                like = _q.full(list(s), 0, d.code)
                cts.append(parent.id_of(_tangent(fname, "cotangent", c, like, f"leaf {k}")))
        decl = parent.builder.declare("vjp", target)[0]
        res = _call(parent, decl, _operands(parent, a, st) + cts)
        grads = _grads_tree(a, st, res[len(main_idx):], tuple(range(n)), False)
        return grads


class _Fwd(_Transformed):
    """The function itself, compiled (the forward pass of a top-level ``vjp``)."""

    kind = "fwd"

    def __init__(self, fun):
        super().__init__(fun, ())

    def _apply(self, *args):
        return self.fun(*args)


class _Pullback:
    """The ``vjp_fun`` of :func:`vjp`: maps output cotangents to input cotangents."""

    def __init__(self, fun, primals, has_aux, out):
        self._apply = _VjpApply(fun, has_aux)
        self._primals = primals
        self._out = out

    def __call__(self, ct):
        if current() is None and not _has_tracer((self._primals, ct)):
            leaves, tree = _tree.flatten(ct)
            outs = _tree.flatten(self._out)[0]
            if len(outs) == len(leaves):
                leaves = [
                    _q.full(list(o.shape), c, o.dtype.code) if _is_pyscalar(c) and isinstance(o, Tensor) else c
                    for c, o in zip(leaves, outs)
                ]
                ct = _tree.unflatten(tree, leaves)
        return self._apply(self._primals, ct)


def vjp(fun, *primals, has_aux=False):
    """Reverse mode: ``(outputs, vjp_fun)`` where ``vjp_fun(cotangents)`` returns a tuple with
    one cotangent pytree per primal (bool and integer leaves get None). With ``has_aux``,
    ``fun`` returns ``(output, aux)`` and the result is ``(output, vjp_fun, aux)``.

    ``vjp_fun`` evaluates the forward pass again (as part of one compiled program per
    signature). Cotangents must match the outputs' shapes and dtypes; Python numbers adopt
    them.

    Example:
        >>> y, pull = qb.vjp(lambda x: x * 3.0, qb.array([1.0, 2.0]))
        >>> pull(qb.array([1.0, 1.0]))[0].tolist()
        [3.0, 3.0]
    """
    primals = tuple(primals)
    if current() is None and not _has_tracer(primals):
        primals = _float_args(primals, range(len(primals)))
        out = _Fwd(fun)(*primals)
    else:
        primals = tuple(_tree.map(lambda x: _q.full((), float(x), float64.code) if _is_pyscalar(x) else x, p) for p in primals)
        out = fun(*primals)
    if has_aux:
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise ArgumentError(f"vjp({_name(fun)}): with has_aux=True the function must return a pair (output, aux)")
        main, aux = out
        return main, _Pullback(fun, primals, True, main), aux
    return out, _Pullback(fun, primals, False, out)


# ---------------------------------------------------------------------------------------------
# jacobian / hessian


def _basis(parent, rows, off, n, shape, dtype):
    """Rows ``off .. off+n`` of an identity of size ``rows``, as ``[rows, *shape]`` (iotas
    and a compare: no dense constant)."""
    r = parent.tracer(parent.builder.iota([rows, n], int64.code, 0))
    c = parent.tracer(parent.builder.iota([rows, n], int64.code, 1))
    if off:
        c = c + off
    e = astype(bind(_op("compare", direction="eq"), r, c), dtype)
    return reshape(e, (rows,) + tuple(shape))


def _slice_rows(x, lo, hi):
    if lo == 0 and hi == x.shape[0]:
        return x
    nd = len(x.shape)
    return bind(_op("slice", start_indices=(lo,) + (0,) * (nd - 1), limit_indices=(hi,) + tuple(x.shape[1:]), strides=(1,) * nd), x)


class _Jacobian(_Transformed):
    kind = "jacobian"

    def __init__(self, fun, argnums, mode, has_aux=False, allow_int=False, kind="jacobian", base=None):
        argnums = _static_argnums(kind, argnums)
        super().__init__(fun, (argnums, mode, _bool_arg(None, "has_aux", has_aux), _bool_arg(None, "allow_int", allow_int), kind))
        self.argnums, self.mode, self.has_aux, self.allow_int = argnums, mode, _bool_arg(None, "has_aux", has_aux), _bool_arg(None, "allow_int", allow_int)
        self.kind = kind
        self.__name__ = self.__qualname__ = f"{kind}({_name(fun if base is None else base)})"

    def _diff(self, nargs):
        return _norm_argnums(self.__name__, self.argnums, nargs)[1]

    def _apply(self, *args, **kwargs):
        fname = self.__name__
        parent = _parent(fname)
        single, argnums = _norm_argnums(fname, self.argnums, len(args))
        a = _Args(self.fun, fname, args, kwargs, argnums, opaque=True)
        if not self.allow_int:
            _check_diff_args(fname, a, argnums)
        st = _stage(self.fun, parent, a, inside=lambda i: a.owner[i] in argnums, differentiated=True)
        # The differentiated outputs (all, or the first of the pair with has_aux).
        if self.has_aux:
            pos = _tree.unflatten(st.out_tree, list(range(len(st.outs))))
            if not isinstance(pos, (tuple, list)) or len(pos) != 2:
                raise ArgumentError(f"{fname}: with has_aux=True the function must return a pair (output, aux)")
            main_idx, main_tree = _tree.flatten(pos[0])
            aux_idx, aux_tree = _tree.flatten(pos[1])
            target = _wrapper(parent, st, main_idx)
        else:
            main_idx, main_tree = list(range(len(st.outs))), st.out_tree
            target = st.name
        outs = [st.outs[k] for k in main_idx]
        # Parameter index of each selected array leaf; the float ones (in argnums order).
        pidx = st.leaf_param
        sel = []
        for i in argnums:
            for li, o in enumerate(a.owner):
                if o == i and li in pidx and st.params[pidx[li]][1].is_float:
                    sel.append(li)
        in_size = {li: math.prod(st.params[pidx[li]][0]) for li in sel}
        P = sum(in_size.values())
        fouts = [k for k, (_, d) in enumerate(outs) if d.is_float]
        Q = sum(math.prod(outs[k][0]) for k in fouts)
        ops = _operands(parent, a, st)
        nparams = len(st.params)
        blocks = {}  # (out leaf, in leaf) -> array
        mode = self.mode or ("rev" if 0 < Q < P else "fwd")
        if P and Q and mode == "rev":
            _collective.reverse_mode_check(fname)
        if P and Q and mode == "fwd":
            jvp_decl = parent.builder.declare("jvp", target)[0]
            tans, in_axes, off = [], [-1] * nparams, 0
            offs = {}
            for k, (s, d) in enumerate(st.params):
                if not d.is_float:
                    continue
                li = next((li for li, p in pidx.items() if p == k), None)
                if li in in_size:
                    offs[li] = off
                    tans.append(parent.id_of(_basis(parent, P, off, in_size[li], s, d)))
                    in_axes.append(0)
                    off += in_size[li]
                else:
                    tans.append(parent.id_of(_fill(parent, s, d, 0.0)))
                    in_axes.append(-1)
            out_axes = [-1] * len(outs) + [0] * len(fouts)
            vm = parent.builder.declare("vmap", jvp_decl, in_axes, out_axes, P)[0]
            res = _call(parent, vm, ops + tans)
            touts = res[len(outs):]
            for k, t in zip(fouts, touts):
                so = outs[k][0]
                for li in sel:
                    si = st.params[pidx[li]][0]
                    blk = _slice_rows(t, offs[li], offs[li] + in_size[li])  # [n_in, *out]
                    blk = reshape(blk, tuple(si) + tuple(so))
                    perm = tuple(range(len(si), len(si) + len(so))) + tuple(range(len(si)))
                    blocks[(k, li)] = transpose(blk, perm) if so and si else blk
        elif P and Q:
            vjp_decl = parent.builder.declare("vjp", target)[0]
            cts, off, offs = [], 0, {}
            for k in fouts:
                s, d = outs[k]
                n = math.prod(s)
                offs[k] = off
                cts.append(parent.id_of(_basis(parent, Q, off, n, s, d)))
                off += n
            in_axes = [-1] * nparams + [0] * len(fouts)
            nfp = sum(1 for _, d in st.params if d.is_float)
            out_axes = [-1] * len(outs) + [0] * nfp
            vm = parent.builder.declare("vmap", vjp_decl, in_axes, out_axes, Q)[0]
            res = _call(parent, vm, ops + cts)
            pcts = res[len(outs):]
            ct_of, c = {}, 0
            for k, (_, d) in enumerate(st.params):
                if d.is_float:
                    ct_of[k] = pcts[c]
                    c += 1
            for k in fouts:
                so = outs[k][0]
                n = math.prod(so)
                for li in sel:
                    si = st.params[pidx[li]][0]
                    blk = _slice_rows(ct_of[pidx[li]], offs[k], offs[k] + n)  # [n_out, *in]
                    blocks[(k, li)] = reshape(blk, tuple(so) + tuple(si))
        # Assemble: output tree of (argnums structure of input trees).
        per_arg = []
        for i in argnums:
            idx = [li for li, o in enumerate(a.owner) if o == i]
            _, td = _tree.flatten(_tree.unflatten(a.tree, list(range(len(a.leaves))))[0][i])
            per_arg.append((idx, td))

        def block_tree(k):
            trees = [_tree.unflatten(td, [blocks.get((k, li)) for li in idx]) for idx, td in per_arg]
            return trees[0] if single else tuple(trees)

        jac = _tree.unflatten(main_tree, [block_tree(k) for k in range(len(outs))])
        if self.has_aux:
            res = _call(parent, st.name, ops)
            return jac, _tree.unflatten(aux_tree, [res[k] for k in aux_idx])
        return jac


def _holomorphic(fname, holomorphic):
    if _bool_arg(None, "holomorphic", holomorphic):
        raise UnsupportedOperationError(
            f"{fname}: holomorphic=True needs complex dtypes, which Quabla does not have", op=fname.split("(")[0]
        )


def jacobian(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The Jacobian of ``fun`` with respect to ``args[argnums]``: for an output leaf of
    shape ``O`` and an input leaf of shape ``I``, an array of shape ``O + I``.

    One staged program: forward mode (a JVP vmapped over the input basis) when the selected
    inputs have at most as many elements as the float outputs, reverse mode (a VJP vmapped
    over the output basis) otherwise (:func:`jacfwd` and :func:`jacrev` force a direction).
    The result has the output's pytree structure whose leaves have the selected arguments'
    structure (a tuple of them for a tuple ``argnums``); bool and integer leaves get None
    blocks.

    Args:
        fun: a function of pytrees of arrays.
        argnums: the positional argument (an int) or arguments (a tuple) to differentiate.
        has_aux: ``fun`` returns ``(output, aux)``; the result is then ``(jacobian, aux)``.
        holomorphic: accepted for JAX compatibility; only False (no complex dtypes).
        allow_int: integer arguments among ``argnums`` get None blocks instead of raising
            :class:`DTypeError`.

    Example:
        >>> qb.jacobian(lambda x: x ** 2)(qb.array([1.0, 2.0])).tolist()
        [[2.0, 0.0], [0.0, 4.0]]
    """
    _holomorphic("jacobian", holomorphic)
    return _Jacobian(fun, argnums, None, has_aux, allow_int)


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Jacobian of ``fun`` in forward mode (a JVP vmapped over the input basis: one
    column per input element), as ``jax.jacfwd``; the layout is :func:`jacobian`'s.

    Example:
        >>> j, aux = qb.jacfwd(lambda x: (qb.sin(x), x * 2), has_aux=True)(qb.array([0.0, 0.0]))
        >>> j.tolist(), aux.tolist()
        ([[1.0, 0.0], [0.0, 1.0]], [0.0, 0.0])
    """
    _holomorphic("jacfwd", holomorphic)
    return _Jacobian(fun, argnums, "fwd", has_aux, False, "jacfwd")


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The Jacobian of ``fun`` in reverse mode (a VJP vmapped over the output basis: one
    row per output element), as ``jax.jacrev``; the layout is :func:`jacobian`'s.

    Example:
        >>> qb.jacrev(lambda x, y: x * y, argnums=1)(qb.array([2.0, 3.0]), qb.array([1.0, 1.0])).tolist()
        [[2.0, 0.0], [0.0, 3.0]]
    """
    _holomorphic("jacrev", holomorphic)
    return _Jacobian(fun, argnums, "rev", has_aux, allow_int, "jacrev")


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Hessian of a scalar function: ``jacfwd(grad(fun))`` (forward-over-reverse), of
    shape ``I + I`` for an input leaf of shape ``I`` (nested pytrees for pytree arguments,
    as in JAX). With ``has_aux``, ``fun`` returns ``(scalar, aux)`` and the result is
    ``(hessian, aux)``.

    Example:
        >>> qb.hessian(lambda x: qb.sum(x ** 3))(qb.array([1.0, 2.0])).tolist()
        [[6.0, 0.0], [0.0, 12.0]]
    """
    _holomorphic("hessian", holomorphic)
    return _Jacobian(_Grad(fun, argnums, has_aux, False), argnums, "fwd", has_aux, False, "hessian", base=fun)


# ---------------------------------------------------------------------------------------------
# linearize


class _Linearized:
    """The ``f_jvp`` of :func:`linearize`: tangents of the primals -> output tangents."""

    def __init__(self, fun, primals, has_aux):
        self._fun = fun
        self._primals = primals
        self._has_aux = has_aux
        self.__name__ = f"linearize({_name(fun)})"

    def __call__(self, *tangents):
        if len(tangents) != len(self._primals):
            raise ArgumentError(
                f"{self.__name__}: f_jvp takes one tangent per primal: {len(self._primals)} expected, got {len(tangents)}"
            )
        res = jvp(self._fun, self._primals, tangents, has_aux=self._has_aux)
        return res[1]

    def __repr__(self):
        return f"<{self.__name__} f_jvp>"


def linearize(fun, *primals, has_aux=False):
    """``(fun(*primals), f_jvp)``, as ``jax.linearize``: ``f_jvp(*tangents)`` is the JVP of
    ``fun`` at ``primals`` along ``tangents`` (one tangent pytree per primal). With
    ``has_aux``, ``fun`` returns ``(output, aux)`` and the result is
    ``(output, f_jvp, aux)``.

    Each ``f_jvp`` call is one compiled JVP program per signature (the forward pass is
    recomputed inside it rather than stored), and works inside ``jit`` and the transforms.

    Example:
        >>> y, f_jvp = qb.linearize(qb.sin, 0.0)
        >>> y.item(), f_jvp(3.0).item()
        (0.0, 3.0)
    """
    fname = f"linearize({_name(fun)})"
    if not callable(fun):
        raise ArgumentError(f"linearize: fun must be callable, got a {type(fun).__name__}")
    if not primals:
        raise ArgumentError(f"{fname}: needs at least one primal argument")
    top = current() is None and not _has_tracer(primals)
    primals = _float_args(tuple(primals), range(len(primals))) if top else tuple(
        _tree.map(lambda x: _q.full((), float(x), float64.code) if _is_pyscalar(x) else x, p) for p in primals
    )
    out = _Fwd(fun)(*primals) if top else fun(*primals)
    f_jvp = _Linearized(fun, primals, _bool_arg(None, "has_aux", has_aux))
    if has_aux:
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise ArgumentError(f"{fname}: with has_aux=True the function must return a pair (output, aux)")
        return out[0], f_jvp, out[1]
    return out, f_jvp


# ---------------------------------------------------------------------------------------------
# vmap


def _axis_ok(a):
    return a is None or (isinstance(a, (int, np.integer)) and not isinstance(a, bool))


def _prefix_leaves(fname, what, prefix, tree, path, out):
    """Broadcasts the pytree prefix ``prefix`` (ints/None) over ``tree``: appends one axis per
    leaf of ``tree`` to ``out``. Tuples and lists match each other; other nodes (dicts,
    namedtuples, registered types) must be of the same type and auxiliary data."""
    if _axis_ok(prefix):
        out.extend([None if prefix is None else int(prefix)] * len(_tree.leaves(tree)))
        return
    tp, tt = type(prefix), type(tree)
    if tp in (tuple, list) and tt in (tuple, list):
        if len(prefix) != len(tree):
            raise BatchingError(
                f"{fname}: {what} for {path} is a {tp.__name__} of length {len(prefix)}, but {path} is a "
                f"{tt.__name__} of length {len(tree)}"
            )
        for i, (p, t) in enumerate(zip(prefix, tree)):
            _prefix_leaves(fname, what, p, t, f"{path}[{i}]", out)
        return
    if tp is dict and tt is dict:
        if sorted(prefix) != sorted(tree):
            raise BatchingError(
                f"{fname}: {what} for {path} is a dict with keys {sorted(prefix)}, but {path} is a dict with keys "
                f"{sorted(tree)}"
            )
        for k in sorted(tree):
            _prefix_leaves(fname, what, prefix[k], tree[k], f"{path}[{k!r}]", out)
        return
    pn = _tree._children(prefix)
    if pn is None:
        raise BatchingError(f"{fname}: {what} entries must be ints or None, got {prefix!r} for {path}")
    tn = _tree._children(tree)
    if tn is not None and tn[0] is tp and tn[1] == pn[1] and len(tn[2]) == len(pn[2]):
        for (k, p), (_, t) in zip(pn[2], tn[2]):
            _prefix_leaves(fname, what, p, t, f"{path}{k}", out)
        return
    kind = "a leaf" if tn is None else f"a {tt.__name__}"
    raise BatchingError(f"{fname}: {what} for {path} is a {tp.__name__}, but {path} is {kind}; the structures do not match")


class _Vmap(_Transformed):
    kind = "vmap"

    def __init__(self, fun, in_axes, out_axes, axis_size=None, axis_name=None):
        super().__init__(fun, (in_axes, out_axes, axis_size, axis_name))
        self.in_axes, self.out_axes, self.axis_size, self.axis_name = in_axes, out_axes, axis_size, axis_name

    def _apply(self, *args, **kwargs):
        fname = self.__name__
        parent = _parent(fname)
        a = _Args(self.fun, fname, args, kwargs)
        names = a.names
        ia = self.in_axes
        if isinstance(ia, list):
            ia = tuple(ia)
        axes = []
        if _axis_ok(ia):
            _prefix_leaves(fname, "in_axes", ia, tuple(args), "the arguments", axes)
        elif isinstance(ia, tuple):
            if len(ia) != len(args):
                raise BatchingError(
                    f"{fname}: in_axes is a tuple of length {len(ia)}, but the function was called with {len(args)} "
                    f"positional arguments; in_axes must have one entry (int, None or a pytree prefix) per argument"
                )
            for i, (p, x) in enumerate(zip(ia, args)):
                _prefix_leaves(fname, "in_axes", p, x, f"argument {names[i]}", axes)
        else:
            raise BatchingError(
                f"{fname}: in_axes must be an int, None, or a tuple/list with one entry per positional argument, got "
                f"{type(ia).__name__} {ia!r}"
            )
        axes += [0] * (len(a.leaves) - len(axes))  # keyword arguments are mapped along axis 0
        size, first, shapes = None, None, []
        norm = []
        for x, v, ax, path in zip(a.leaves, a.values, axes, a.paths):
            if ax is None:
                norm.append(None)
                shapes.append(None if v is None else v.shape)
                continue
            if v is None:
                raise BatchingError(
                    f"{fname}: in_axes={ax} maps argument {path}, a Python {type(x).__name__} (rank 0); pass an array, "
                    "or use None for unmapped arguments"
                )
            nd = len(v.shape)
            if not -nd <= ax < nd:
                allowed = f"an array of rank {nd} can be mapped along axes {-nd}..{nd - 1}" if nd else "a rank-0 array cannot be mapped (use None)"
                raise BatchingError(
                    f"{fname}: in_axes={ax} for argument {path} of shape {_shape_str(v.shape)} is out of range: {allowed}"
                )
            ax = ax + nd if ax < 0 else ax
            n = v.shape[ax]
            if size is None:
                size, first = n, (path, v.shape, ax)
            elif n != size:
                lines = [
                    f"  argument {p} of shape {_shape_str(vv.shape)} has size {vv.shape[aa + len(vv.shape) if aa < 0 else aa]} "
                    f"along axis {aa + len(vv.shape) if aa < 0 else aa}"
                    for p, vv, aa in zip(a.paths, a.values, axes)
                    if aa is not None and vv is not None and -len(vv.shape) <= aa < len(vv.shape)
                ]
                raise BatchingError(f"{fname}: the mapped axes have different sizes:\n" + "\n".join(lines))
            norm.append(ax)
            shapes.append(v.shape[:ax] + v.shape[ax + 1:])
        if self.axis_size is not None and size is not None and size != self.axis_size:
            raise BatchingError(f"{fname}: axis_size={self.axis_size}, but the mapped axes have size {size} (argument {first[0]} of shape {_shape_str(first[1])})")
        if size is None:
            if self.axis_size is None:
                raise BatchingError(f"{fname}: no argument is mapped (every in_axes entry is None); pass axis_size, or map an argument")
            size = self.axis_size
        # The collectives of the function (qb.lax.psum, ...) see this vmap's axis while it traces.
        with _collective._bound(self.axis_name, size):
            st = _stage(self.fun, parent, a, shapes=shapes, name=_name(self.fun))
        # out_axes over the output tree
        oa = self.out_axes
        if isinstance(oa, list):
            oa = tuple(oa)
        out_pos = _tree.unflatten(st.out_tree, list(range(len(st.outs))))
        oaxes = []
        _prefix_leaves(fname, "out_axes", oa, out_pos, "the output", oaxes)
        out_paths = _paths(out_pos, "output", [])
        onorm = []
        for (s, _), ax, p in zip(st.outs, oaxes, out_paths):
            if ax is None:
                onorm.append(-1)
                continue
            r = len(s) + 1
            if not -r <= ax < r:
                raise BatchingError(
                    f"{fname}: out_axes={ax} for {p} of per-example shape {_shape_str(s)} is out of range: the batched "
                    f"result has rank {r}, so out_axes must be in {-r}..{r - 1}"
                )
            onorm.append(ax + r if ax < 0 else ax)
        in_axes = [norm[li] if norm[li] is not None else -1 for li in st.leaf_param]
        in_axes += [-1] * len(st.caps)
        spelling = None if self.axis_name is None else _collective._spell(self.axis_name)
        decl = parent.builder.declare("vmap", st.name, in_axes, onorm, size, spelling)[0]
        if -1 in onorm:
            err = parent.builder.check_transform(decl)
            if err is not None and "cannot be None" in err:
                m = re.search(r"output (\d+)", err)
                k = int(m.group(1)) if m else onorm.index(-1)
                raise BatchingError(
                    f"{fname}: out_axes=None for {out_paths[k]} (per-example shape {_shape_str(st.outs[k][0])}), but "
                    f"it depends on a mapped argument, so it differs across the batch of size {size}; give it a batch "
                    "axis (an int out_axes)"
                )
        res = _call(parent, decl, _operands(parent, a, st))
        return _tree.unflatten(st.out_tree, res)


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
    """Vectorizes ``fun`` over a batch axis: ``vmap(f)(xs)`` equals stacking ``f(x)`` over
    the examples ``x`` of ``xs``, computed as one batched program (the ``quabla-vmap``
    expansion of a ``vmap`` transform declaration).

    Args:
        fun: a function of pytrees of arrays.
        in_axes: the mapped axis of each argument: an int (all arguments), None (unmapped),
            or a tuple/list with one entry per positional argument, each an int, None, or a
            pytree prefix (tuple, list, dict) of ints and None. Negative axes count from the
            end. Keyword arguments are mapped along axis 0.
        out_axes: where the batch axis goes in each result (same prefix rules over the
            output; None returns a result that does not depend on a mapped argument as is).
        axis_name: a hashable name of the batch axis for the collectives of ``fun``
            (``qb.lax.psum``, ``pmean``, ``all_gather``, ``axis_index``, ...): they reduce or
            exchange across the examples of the innermost vmap with that name.
        axis_size: the batch size when no argument is mapped (every result is then the same
            value broadcast over it); when given with mapped arguments it must equal their size.
        spmd_axis_name: must be None (sharding of the batch axis).

    Returns:
        The batched function. Results that do not depend on a mapped argument are broadcast
        over the batch. Errors (inconsistent sizes, axes out of range, structure mismatches,
        out_axes=None for a mapped result) raise :class:`BatchingError` naming the argument,
        its shape and the axis.

    Example:
        >>> qb.vmap(lambda x, w: qb.sum(x * w), in_axes=(0, None))(qb.ones((3, 2)), qb.array([1.0, 2.0])).tolist()
        [3.0, 3.0, 3.0]
    """
    if axis_size is not None and (not isinstance(axis_size, int) or isinstance(axis_size, bool) or axis_size < 1):
        raise BatchingError(f"vmap: axis_size must be a positive int or None, got {axis_size!r}")
    if spmd_axis_name is not None:
        raise UnsupportedOperationError("vmap: spmd_axis_name (sharding the batch axis) is not available", op="vmap")
    try:
        hash(axis_name)
    except TypeError:
        raise BatchingError(f"vmap: axis_name must be hashable, got {type(axis_name).__name__}") from None
    return _Vmap(fun, in_axes, out_axes, axis_size, axis_name)


def pmap(fun, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(), devices=None, backend=None,
         axis_size=None, donate_argnums=(), global_arg_shapes=None):
    """Maps ``fun`` over a leading axis as ``jax.pmap`` does, computed as one compiled,
    vectorized program on this process's device: ``jit(vmap(fun, in_axes, out_axes,
    axis_name=axis_name))``, so the collectives of ``qb.lax`` (``psum``, ``pmean``,
    ``all_gather``, ``axis_index``, ...) work over ``axis_name``.

    Differences from JAX: the examples are not spread over devices, so the mapped size is not
    bounded by ``qb.local_device_count()`` (JAX requires it to be at most the device count),
    results are ordinary arrays, and ``devices``/``backend`` are accepted and ignored.

    Args:
        fun: a function of pytrees of arrays.
        axis_name: the name of the mapped axis for the collectives of ``fun``.
        in_axes, out_axes: as ``qb.vmap``'s (``in_axes`` entries of static arguments are
            ignored).
        static_broadcasted_argnums: positions of arguments passed to ``fun`` as they are
            (hashable Python values; each distinct value compiles once).
        devices, backend: accepted for compatibility (one device computes all examples).
        axis_size: the mapped size when no argument is mapped.
        donate_argnums: as ``qb.jit``'s.
        global_arg_shapes: must be None.

    Returns:
        The mapped function.

    Example:
        >>> f = qb.pmap(lambda x: x / qb.lax.psum(x, "d"), axis_name="d")
        >>> f(qb.array([1.0, 3.0])).tolist()
        [0.25, 0.75]
    """
    if not callable(fun):
        raise ArgumentTypeError(f"pmap: fun must be callable, got {type(fun).__name__}")
    if global_arg_shapes is not None:
        raise UnsupportedOperationError("pmap: global_arg_shapes is not supported (must be None)", op="pmap")
    if backend is not None and backend != "cpu":
        raise UnsupportedOperationError(f"pmap: backend={backend!r}: the mapped program runs on the host ('cpu' or None)", op="pmap")
    static = (static_broadcasted_argnums,) if isinstance(static_broadcasted_argnums, int) else static_broadcasted_argnums
    try:
        static = tuple(int(i) for i in static)
    except (TypeError, ValueError):
        raise ArgumentTypeError("pmap: static_broadcasted_argnums must be an int or a sequence of ints") from None
    if any(i < 0 for i in static):
        raise ArgumentTypeError(f"pmap: static_broadcasted_argnums must be non-negative, got {static}")
    if not static:
        return jit(vmap(fun, in_axes, out_axes, axis_name=axis_name, axis_size=axis_size), donate_argnums=donate_argnums)
    compiled = {}

    @functools.wraps(fun)
    def mapped(*args, **kwargs):
        if max(static) >= len(args):
            raise ArgumentTypeError(f"pmap: static_broadcasted_argnums {static} names argument {max(static)}, but the call passes {len(args)} positional arguments")
        values = tuple(args[i] for i in static)
        try:
            hash(values)
        except TypeError:
            raise ArgumentTypeError("pmap: static arguments must be hashable") from None
        dyn = [i for i in range(len(args)) if i not in static]
        f = compiled.get(values)
        if f is None:
            ia = tuple(in_axes[i] for i in dyn) if isinstance(in_axes, (tuple, list)) and len(in_axes) == len(args) else in_axes

            def bound(*dargs, **kw):
                full = list(dargs)
                for i, v in zip(static, values):
                    full.insert(i, v)
                return fun(*full, **kw)

            donate = (donate_argnums,) if isinstance(donate_argnums, int) else tuple(donate_argnums or ())
            dd = tuple(dyn.index(i) for i in donate if i in dyn)
            f = compiled[values] = jit(vmap(bound, ia, out_axes, axis_name=axis_name, axis_size=axis_size), donate_argnums=dd)
        return f(*(args[i] for i in dyn), **kwargs)

    return mapped


def _devices_arg(fn, devices):
    try:
        n = len(devices)
    except TypeError:
        raise ArgumentTypeError(f"{fn}: devices must be a sequence of devices, got {type(devices).__name__}") from None
    if n < 1:
        raise InvalidArgumentError_(f"{fn}: devices is empty; pass at least one device")
    return n


def device_put_replicated(x, devices):
    """``x`` (an array or a pytree of arrays) stacked once per device of ``devices``, as
    ``jax.device_put_replicated`` prepares ``qb.pmap`` inputs (on the host: ``qb.pmap``
    computes every example on one device).

    Args:
        x: an array or a pytree of arrays.
        devices: a sequence of devices (e.g. ``qb.local_devices()``); its length is the
            leading extent of each result.

    Returns:
        The stacked pytree.

    Example:
        >>> qb.device_put_replicated(qb.array([1.0, 2.0]), qb.local_devices()).shape
        (1, 2)
    """
    n = _devices_arg("device_put_replicated", devices)
    from ._ops import asarray, broadcast_to

    def one(v):
        v = asarray(v)
        return broadcast_to(v[None], (n,) + tuple(v.shape))

    return _tree.map(one, x)


def device_put_sharded(shards, devices):
    """The pytrees of ``shards`` stacked along a new leading axis, one per device of
    ``devices``, as ``jax.device_put_sharded`` prepares ``qb.pmap`` inputs (on the host).

    Args:
        shards: a sequence of pytrees of arrays with equal structure, shapes and dtypes, one per
            device.
        devices: a sequence of devices of the same length.

    Returns:
        The stacked pytree.

    Example:
        >>> qb.device_put_sharded([qb.array(1.0), qb.array(2.0)], qb.local_devices() * 2).tolist()
        [1.0, 2.0]
    """
    n = _devices_arg("device_put_sharded", devices)
    if not isinstance(shards, (list, tuple)):
        raise ArgumentTypeError(f"device_put_sharded: shards must be a list or tuple of pytrees, got {type(shards).__name__}")
    if len(shards) != n:
        raise InvalidArgumentError_(f"device_put_sharded: {len(shards)} shards for {n} devices; pass one shard per device")
    from ._ops import stack
    return _tree.map(lambda *vs: stack(vs), *shards)
