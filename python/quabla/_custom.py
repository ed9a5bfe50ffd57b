"""Custom derivatives: :class:`custom_jvp` (``defjvp``, ``defjvps``) and :class:`custom_vjp`
(``defvjp``), with ``nondiff_argnums``, as JAX's ``jax.custom_jvp`` / ``jax.custom_vjp``.

Inside a trace a call becomes one ``quabla.custom_jvp_call`` / ``quabla.custom_vjp_call`` op
whose regions are the traced function and its rules (each traced as a region builder of
the innermost trace, closing over what it likes: captures become operands of the op), so
``grad``, ``jvp``, ``vmap`` and their compositions use the rules (docs/ARCHITECTURE.md,
passes/src/rules/call.rs). The differentiable arguments are flattened to leaves; arguments
at ``nondiff_argnums`` (and any value a rule closes over) get no tangent or cotangent and
are passed to the rules as JAX does (first, before the primals / residuals). Outside any
trace the function is just called.
"""

import functools
import inspect

import numpy as np

from . import dtypes as _dt
from . import tree as _tree
from ._control import _signature, _trace_branch
from ._ops import _to_array, zeros
from ._trace import Tracer, current, diff_budget, differentiations, user_loc
from .errors import ArgumentTypeError, DTypeError, ShapeError
from . import errors as _errors

__all__ = ["custom_jvp", "custom_vjp"]


def _flat(n):
    """The tree of ``n`` positional leaves."""
    return _tree.flatten(tuple(range(n)))[1]


class _Custom:
    """What custom_jvp and custom_vjp share: argument resolution and leaf bookkeeping."""

    def __init__(self, fun, nondiff_argnums=()):
        if not callable(fun):
            raise ArgumentTypeError(f"{type(self).__name__}: fun must be callable, got {type(fun).__name__}")
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(sorted(set(int(i) for i in nondiff_argnums)))

    def _name(self):
        return getattr(self.fun, "__name__", type(self).__name__)

    def _resolve(self, args, kwargs):
        if kwargs:
            try:
                args = inspect.signature(self.fun).bind(*args, **kwargs).args
            except (TypeError, ValueError) as e:
                raise ArgumentTypeError(f"{type(self).__name__} {self._name()}: {e}") from None
        bad = [i for i in self.nondiff_argnums if i >= len(args) or i < 0]
        if bad:
            raise ArgumentTypeError(f"{type(self).__name__} {self._name()}: nondiff_argnums {bad} out of range for {len(args)} positional arguments")
        return tuple(args)

    def _split(self, args):
        """(diff positions, nondiff values, diff leaves as arrays, their tree, avals)."""
        diff_idx = [i for i in range(len(args)) if i not in self.nondiff_argnums]
        nd_vals = [args[i] for i in self.nondiff_argnums]
        leaves, in_tree = _tree.flatten(tuple(args[i] for i in diff_idx))
        xs = [_to_array(x) for x in leaves]
        return diff_idx, nd_vals, xs, in_tree, [(tuple(x.shape), x.dtype) for x in xs]

    def _rule_trace(self, t, fun, n, avals, which):
        # A rule serves one differentiation; custom calls inside it (the usual `return f(x),
        # ...`, or JAX's per-order rules that call the function of the next order) get their
        # own rules only for the differentiations left after it (none left: their primal).
        with differentiations(-1):
            return _trace_branch(t, fun, _flat(n), avals, which)

    def _traced(self, args):
        t = current()
        traced = any(type(x) is Tracer for x in _tree.flatten(args)[0])
        if t is None and traced:
            raise _errors.UnexpectedTracerError(f"{self._name()}: called with tracers of a trace that already finished (a tracer escaped its trace)")
        return t

    def _primal(self, t, args, diff_idx, in_tree, avals):
        def primal(*ls):
            full = list(args)
            for i, v in zip(diff_idx, _tree.unflatten(in_tree, list(ls))):
                full[i] = v
            return self.fun(*full)

        return _trace_branch(t, primal, _flat(len(avals)), avals, "fun")


class custom_jvp(_Custom):
    """A function with a custom forward-mode rule (JAX's ``jax.custom_jvp``).

    Define the rule with :meth:`defjvp` (``jvp(*nondiff_args, primals, tangents) ->
    (primal_out, tangent_out)``) or :meth:`defjvps` (one function per argument). ``grad``
    uses the rule's transpose (the rule must be linear in the tangents, as in JAX), so both
    modes, ``vmap`` (the rule is batched like any function) and higher orders (the rule is
    itself differentiated) follow it. Values the function or the rule close over get no
    tangent through the rule.

    Example:
        >>> @qb.custom_jvp
        ... def log1pexp(x):
        ...     return qb.log(1.0 + qb.exp(x))
        >>> @log1pexp.defjvp
        ... def log1pexp_jvp(primals, tangents):
        ...     (x,), (t,) = primals, tangents
        ...     return log1pexp(x), t * (1.0 - 1.0 / (1.0 + qb.exp(x)))
        >>> qb.grad(log1pexp)(qb.array(100.0)).item()
        1.0
    """

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.jvp = None

    def defjvp(self, jvp, symbolic_zeros=False):
        """Sets the rule ``jvp(*nondiff_args, primals, tangents) -> (primal_out,
        tangent_out)``; returns ``jvp`` (usable as a decorator). Tangents of arguments that
        are not being differentiated are zeros (``symbolic_zeros`` is accepted for JAX
        compatibility and ignored)."""
        if not callable(jvp):
            raise ArgumentTypeError(f"custom_jvp.defjvp: the rule must be callable, got {type(jvp).__name__}")
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps):
        """Sets the rule from one function per differentiable argument,
        ``jvps[i](tangent_i, primal_out, *primals) -> contribution`` (``None``: no
        contribution); the output tangent is their sum."""
        if self.nondiff_argnums:
            raise ArgumentTypeError("custom_jvp.defjvps: not supported with nondiff_argnums (use defjvp), as in JAX")

        def jvp(primals, tangents):
            ans = self.fun(*primals)
            if len(jvps) != len(primals):
                raise ArgumentTypeError(f"custom_jvp.defjvps: {len(jvps)} rules for {len(primals)} arguments")
            out = None
            for rule, t in zip(jvps, tangents):
                if rule is None:
                    continue
                c = rule(t, ans, *primals)
                out = c if out is None else _tree.map(lambda a, b: a + b, out, c)
            if out is None:
                out = _tree.map(lambda a: zeros(_to_array(a).shape, _to_array(a).dtype), ans)
            return ans, out

        self.jvp = jvp

    def __call__(self, *args, **kwargs):
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {self._name()} using defjvp.")
        args = self._resolve(args, kwargs)
        t = self._traced(args)
        if t is None or diff_budget() < 0:
            return self.fun(*args)
        loc = user_loc()
        diff_idx, nd_vals, xs, in_tree, avals = self._split(args)
        n = len(xs)
        pb, p_tree, p_avals, p_caps = self._primal(t, args, diff_idx, in_tree, avals)

        def rule(*ls):
            prim = tuple(_tree.unflatten(in_tree, list(ls[:n])))
            tan = tuple(_tree.unflatten(in_tree, list(ls[n:])))
            out = self.jvp(*nd_vals, prim, tan)
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise ArgumentTypeError(f"custom_jvp {self._name()}: the jvp rule must return a pair (primal_out, tangent_out), got {type(out).__name__}")
            return tuple(out)

        jb, j_tree, j_avals, j_caps = self._rule_trace(t, rule, 2 * n, avals + avals, "jvp")
        dummy = _tree.unflatten(p_tree, [0] * len(p_avals))
        want_tree = _tree.flatten((dummy, dummy))[1]
        if j_tree != want_tree or j_avals != p_avals + p_avals:
            err = ShapeError if j_tree == want_tree and [d for _, d in j_avals] == [d for _, d in p_avals + p_avals] else DTypeError
            raise err(
                f"custom_jvp {self._name()}: the jvp rule must return (primal_out, tangent_out) with the structure, shapes and dtypes of "
                f"the function's output {_signature(p_tree, p_avals)}; it returns {_signature(j_tree, j_avals)}"
            )
        ids = [t.id_of(x) for x in xs] + [t.id_of(c) for c in p_caps] + [t.id_of(c) for c in j_caps]
        N = len(ids)
        pmap = list(range(n)) + [n + k for k in range(len(p_caps))]
        jmap = list(range(n)) + [N + k for k in range(n)] + [n + len(p_caps) + k for k in range(len(j_caps))]
        res = t.builder.push_custom("custom_jvp_call", ids, [pb, jb], [pmap, jmap], [], 0, loc)
        return _tree.unflatten(p_tree, [t.tracer(r) for r in res])


class custom_vjp(_Custom):
    """A function with a custom reverse-mode rule (JAX's ``jax.custom_vjp``).

    Define it with :meth:`defvjp`: ``fwd(*args) -> (primal_out, residuals)`` (any pytree of
    arrays as residuals) and ``bwd(*nondiff_args, residuals, cotangent_out) ->`` a tuple with
    one cotangent per differentiable argument (``None`` for zero). ``grad`` runs fwd and bwd;
    ``vmap`` batches both; higher-order reverse mode differentiates bwd. Forward mode
    (``jvp``) raises :class:`UnsupportedOperationError`, as JAX does.

    Example:
        >>> @qb.custom_vjp
        ... def clip_gradient(lo, hi, x):
        ...     return x
        >>> clip_gradient.defvjp(lambda lo, hi, x: (x, (lo, hi)),
        ...                      lambda res, g: (None, None, qb.clip(g, res[0], res[1])))
        >>> qb.grad(lambda x: clip_gradient(-0.5, 0.5, 3.0 * x))(qb.array(1.0)).item()
        1.5
    """

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.fwd = self.bwd = None

    def defvjp(self, fwd, bwd, symbolic_zeros=False):
        """Sets the rules ``fwd(*args) -> (primal_out, residuals)`` and ``bwd(*nondiff_args,
        residuals, cotangent_out) -> cotangents`` (``symbolic_zeros`` is accepted for JAX
        compatibility and ignored)."""
        if not callable(fwd) or not callable(bwd):
            raise ArgumentTypeError("custom_vjp.defvjp: fwd and bwd must be callable")
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args, **kwargs):
        if self.fwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {self._name()} using defvjp.")
        args = self._resolve(args, kwargs)
        t = self._traced(args)
        if t is None or diff_budget() < 0:
            return self.fun(*args)
        loc = user_loc()
        diff_idx, nd_vals, xs, in_tree, avals = self._split(args)
        n = len(xs)
        pb, p_tree, p_avals, p_caps = self._primal(t, args, diff_idx, in_tree, avals)
        k = len(p_avals)
        res_tree = []

        def fwd(*ls):
            full = list(args)
            for i, v in zip(diff_idx, _tree.unflatten(in_tree, list(ls))):
                full[i] = v
            out = self.fwd(*full)
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise ArgumentTypeError(f"custom_vjp {self._name()}: fwd must return a pair (primal_out, residuals), got {type(out).__name__}")
            res_leaves, rt = _tree.flatten(out[1])
            res_tree.append(rt)
            return (out[0], tuple(res_leaves))

        fb, f_tree, f_avals, f_caps = self._rule_trace(t, fwd, n, avals, "fwd")
        dummy = _tree.unflatten(p_tree, [0] * k)
        want = _tree.flatten((dummy, tuple(range(len(f_avals) - k))))[1]
        if f_tree != want or f_avals[:k] != p_avals:
            raise DTypeError(
                f"custom_vjp {self._name()}: fwd's primal output must match the function's output {_signature(p_tree, p_avals)}; fwd returns {_signature(f_tree, f_avals)}"
            )
        res_avals = f_avals[k:]
        r = len(res_avals)
        diff_args = [args[i] for i in diff_idx]

        def bwd(*ls):
            res = _tree.unflatten(res_tree[0], list(ls[:r]))
            g = _tree.unflatten(p_tree, list(ls[r:]))
            cts = self.bwd(*nd_vals, res, g)
            if not isinstance(cts, (tuple, list)) or len(cts) != len(diff_args):
                raise ArgumentTypeError(
                    f"custom_vjp {self._name()}: bwd must return a tuple of {len(diff_args)} cotangents (one per differentiable argument), got "
                    + (f"a {type(cts).__name__} of length {len(cts)}" if isinstance(cts, (tuple, list)) else f"a {type(cts).__name__}")
                )
            out = []
            for a, c in zip(diff_args, cts):
                a_leaves, a_tree = _tree.flatten(a)
                if c is None:
                    out += [zeros(_to_array(x).shape, _to_array(x).dtype) for x in a_leaves]
                    continue
                c_leaves, c_tree = _tree.flatten(c)
                if c_tree != a_tree:
                    raise ArgumentTypeError(f"custom_vjp {self._name()}: a bwd cotangent has structure {c_tree}, its argument {a_tree}")
                for x, y in zip(a_leaves, c_leaves):
                    if isinstance(y, np.ndarray) and y.dtype == _dt.float0:
                        # JAX's "no cotangent" of an integer argument: zeros of its type.
                        x = _to_array(x)
                        out.append(zeros(x.shape, x.dtype))
                        continue
                    x, y = _to_array(x), _to_array(y)
                    if y.dtype is not x.dtype and y.dtype.is_float and x.dtype.is_float:
                        y = y.astype(x.dtype)
                    out.append(y)
            return tuple(out)

        bb, b_tree, b_avals, b_caps = self._rule_trace(t, bwd, r + k, res_avals + p_avals, "bwd")
        if b_avals != avals:
            err = ShapeError if [d for _, d in b_avals] == [d for _, d in avals] else DTypeError
            raise err(f"custom_vjp {self._name()}: bwd's cotangents must have the shapes and dtypes of the arguments ({_signature(in_tree, avals)}); bwd returns {_signature(b_tree, b_avals)}")
        ids = [t.id_of(x) for x in xs] + [t.id_of(c) for c in p_caps] + [t.id_of(c) for c in f_caps]
        fwd_extra = [len(ids) + j for j in range(len(b_caps))]
        ids += [t.id_of(c) for c in b_caps]
        pmap = list(range(n)) + [n + j for j in range(len(p_caps))]
        fmap = list(range(n)) + [n + len(p_caps) + j for j in range(len(f_caps))]
        bmap = list(range(r)) + [r + len(b_caps) + j for j in range(k)] + [r + j for j in range(len(b_caps))]
        res = t.builder.push_custom("custom_vjp_call", ids, [pb, fb, bb], [pmap, fmap, bmap], fwd_extra, n, loc)
        return _tree.unflatten(p_tree, [t.tracer(r) for r in res])
