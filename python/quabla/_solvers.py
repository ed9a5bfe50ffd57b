"""Differentiable solves with implicitly defined derivatives: :func:`custom_linear_solve` and
:func:`custom_root` (JAX's ``jax.lax.custom_linear_solve`` / ``jax.lax.custom_root``), and
the closure conversion they share with ``quabla.experimental.ode`` (:func:`_closure_convert`).

The solves are :class:`~quabla.custom_jvp` functions whose rules follow the implicit function
theorem: for ``A x = b``, ``dx = A^-1 (db - dA x)``; for ``f(x, p) = 0``, ``dx = -(df/dx)^-1
df/dp dp``. The tangent linear solve of :func:`custom_linear_solve` is itself a
:class:`~quabla.custom_vjp` whose backward rule is ``transpose_solve`` on the transposed
operator, so reverse mode (``grad``) transposes the forward rule without going through the
solver's loop. Values the operator ``matvec`` (or ``f``) closes over are made explicit
arguments of the solve (closure conversion), so derivatives flow to them as in JAX.
"""

from . import tree as _tree
from ._control import _trace_branch, stop_gradient
from ._custom import custom_jvp, custom_vjp
from ._ops import _to_array, zeros
from ._trace import Tracer, current, is_array
from ._transforms import jvp as _jvp
from ._transforms import vjp as _vjp
from .errors import ArgumentTypeError, DTypeError, ShapeError

__all__ = ["custom_linear_solve", "custom_root"]


def _avals(leaves):
    return [(tuple(x.shape), x.dtype) for x in leaves]


def _origin(x):
    """The tracer the user's code holds for ``x``: ``x`` itself, or, when ``x`` is a capture
    parameter made by lifting, the tracer of an enclosing trace it stands for."""
    while True:
        t = x._trace
        src = None
        for s in t.cap_sources:
            if t._caps.get(s._id) is x:
                src = s
                break
        if src is None:
            return x
        x = src


class _Swapped:
    """While active, the tracers ``olds`` read as the values ``news`` (their trace and value id
    are exchanged and restored on exit): a function closing over ``olds`` then computes with
    ``news``, which a transform can differentiate."""

    def __init__(self, olds, news):
        self.pairs = [(o, n) for o, n in zip(olds, news) if o is not n]

    def __enter__(self):
        self.saved = [(o._trace, o._id) for o, _ in self.pairs]
        for o, n in self.pairs:
            o._trace, o._id = n._trace, n._id

    def __exit__(self, *exc):
        for (o, _), (tr, vid) in zip(self.pairs, self.saved):
            o._trace, o._id = tr, vid


def _closure_convert(fun, *example_args):
    """``(converted, consts)`` with ``converted(*args, *consts) == fun(*args)`` as JAX's
    ``closure_convert``: the float tracers ``fun`` closes over (found by tracing it once on
    ``example_args``) become the explicit arguments ``consts``, so derivative rules can give
    them cotangents. Outside any trace ``consts`` is empty."""
    t = current()
    n = len(example_args)
    if t is None:
        return (lambda *a: fun(*a[:n])), []
    leaves, in_tree = _tree.flatten(tuple(example_args))
    xs = [_to_array(x) for x in leaves]
    b, _, _, caps = _trace_branch(t, lambda *a: fun(*a), in_tree, _avals(xs), "closure_convert")
    b.abandon()
    caps = [c for c in caps if type(c) is Tracer and c.dtype.is_float]
    if not caps:
        return (lambda *a: fun(*a[:n])), []
    olds = [_origin(c) for c in caps]

    def converted(*a):
        news = []
        for c in a[n:]:
            c = _to_array(c)
            if type(c) is not Tracer:
                c = current().const(c) if current() is not None else c
            news.append(c)
        if any(type(c) is not Tracer for c in news):
            return fun(*a[:n])
        with _Swapped(olds, news):
            return fun(*a[:n])

    return converted, list(caps)


def _check_like(fname, what, got, ref_leaves, ref_tree):
    leaves, tree = _tree.flatten(got)
    if tree != ref_tree:
        raise ShapeError(f"{fname}: {what} must return the structure of b {ref_tree}, got {tree}")
    out = []
    for g, r in zip(leaves, ref_leaves):
        if not is_array(g) and not isinstance(g, (int, float)):
            raise ArgumentTypeError(f"{fname}: {what} must return arrays, got a {type(g).__name__}")
        g = _to_array(g)
        if tuple(g.shape) != tuple(r.shape):
            raise ShapeError(f"{fname}: {what} output shapes must match b, got {tuple(g.shape)} and {tuple(r.shape)}")
        out.append(g)
    return _tree.unflatten(tree, out)


def _split(fname, what, out, has_aux):
    if not has_aux:
        return out, None
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise ArgumentTypeError(f"{fname}: with has_aux=True {what} must return a pair (solution, aux), got {type(out).__name__}")
    return out[0], out[1]


def _zeros_like_tree(x):
    return _tree.map(lambda a: zeros(tuple(_to_array(a).shape), _to_array(a).dtype), x)


def _sub(a, b):
    return _tree.map(lambda u, v: u - v, a, b)


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False, has_aux=False):
    """``solve(matvec, b)``, differentiated as the solution of ``matvec(x) == b`` (JAX's
    ``jax.lax.custom_linear_solve``), not through the solver.

    Args:
        matvec: the linear map ``x -> A x`` (differentiable; the arrays it closes over get
            derivatives through ``dA x``).
        b: the right-hand side, a pytree of arrays.
        solve: ``solve(matvec, b) -> x`` with ``matvec(x) == b`` (need not be differentiable).
        transpose_solve: ``transpose_solve(vecmat, b) -> x`` for the transposed map (its
            transpose is computed automatically); needed for reverse mode unless
            ``symmetric``.
        symmetric: the map is symmetric (``vecmat == matvec``; ``solve`` is then the
            default ``transpose_solve``).
        has_aux: ``solve`` and ``transpose_solve`` return ``(x, aux)``.

    Returns:
        ``solve(matvec, b)`` (with its aux when ``has_aux``); its tangent is
        ``solve(matvec, db - dA x)``, and reverse mode uses ``transpose_solve``.

    Example:
        >>> a = qb.array([[2.0, 0.0], [0.0, 4.0]])
        >>> x = qb.lax.custom_linear_solve(lambda v: a @ v, qb.array([1.0, 1.0]),
        ...                                lambda mv, r: r / qb.array([2.0, 4.0]), symmetric=True)
        >>> x.tolist()
        [0.5, 0.25]
    """
    fname = "custom_linear_solve"
    for name, f in (("matvec", matvec), ("solve", solve)):
        if not callable(f):
            raise ArgumentTypeError(f"{fname}: {name} must be callable, got {type(f).__name__}")
    if transpose_solve is not None and not callable(transpose_solve):
        raise ArgumentTypeError(f"{fname}: transpose_solve must be callable or None, got {type(transpose_solve).__name__}")
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    b_leaves, b_tree = _tree.flatten(b)
    if not b_leaves:
        raise ArgumentTypeError(f"{fname}: b must hold at least one array")
    for x in b_leaves:
        if not (is_array(x) or isinstance(x, (int, float))) or isinstance(x, bool):
            raise ArgumentTypeError(f"{fname}: b must be a pytree of arrays, got a {type(x).__name__}")
    bl = [_to_array(x) for x in b_leaves]
    if not all(x.dtype.is_float for x in bl):
        raise DTypeError(f"{fname}: b must hold float arrays, got {[x.dtype.name for x in bl]}")
    b = _tree.unflatten(b_tree, bl)

    def run(mv, rhs, slv, what):
        x, aux = _split(fname, what, slv(mv, rhs), has_aux)
        return _check_like(fname, what, x, bl, b_tree), aux

    _check_like(fname, "matvec", matvec(b), bl, b_tree)
    if current() is None:
        x, aux = run(matvec, b, solve, "solve")
        return (x, aux) if has_aux else x
    mvc, consts = _closure_convert(matvec, b)
    consts = tuple(consts)

    def op(cs):
        return lambda v: mvc(v, *cs)

    if transpose_solve is None:
        def tangent_solve(cs, rhs):
            return run(op(cs), rhs, solve, "solve")[0]
    else:
        @custom_vjp
        def tangent_solve(cs, rhs):
            return run(op(cs), rhs, solve, "solve")[0]

        def ts_fwd(cs, rhs):
            return tangent_solve(cs, rhs), (cs, rhs)

        def ts_bwd(res, g):
            cs, rhs = res
            if symmetric:
                vecmat = op(cs)
            else:
                def vecmat(y):
                    return _vjp(op(cs), rhs)[1](y)[0]
            ct = run(vecmat, g, transpose_solve, "transpose_solve")[0]
            return (None, ct)

        tangent_solve.defvjp(ts_fwd, ts_bwd)

    @custom_jvp
    def lsolve(cs, rhs):
        x, aux = run(op(cs), rhs, solve, "solve")
        return (x, aux) if has_aux else x

    @lsolve.defjvp
    def lsolve_jvp(primals, tangents):
        cs, rhs = primals
        dcs, drhs = tangents
        out = lsolve(cs, rhs)
        x = _tree.map(stop_gradient, out[0] if has_aux else out)
        r = drhs
        if cs:
            _, dax = _jvp(lambda *c: mvc(x, *c), tuple(cs), tuple(dcs))
            r = _sub(drhs, dax)
        dx = tangent_solve(cs, r)
        if has_aux:
            return out, (dx, _zeros_like_tree(out[1]))
        return out, dx

    return lsolve(consts, b)


def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """``solve(f, initial_guess)``, a root of ``f``, differentiated by the implicit function
    theorem (JAX's ``jax.lax.custom_root``): derivatives flow to the arrays ``f`` closes over,
    not through the solver.

    Args:
        f: the function whose root is sought; maps a pytree to one of the same structure.
        initial_guess: the starting point (a pytree of arrays).
        solve: ``solve(f, initial_guess) -> x`` with ``f(x) == 0``.
        tangent_solve: ``tangent_solve(g, y) -> x`` with ``g(x) == y`` for the linear map
            ``g`` (``f`` linearized at its root), e.g. ``lambda g, y: y / g(1.0)`` for scalars.
        has_aux: ``solve`` returns ``(x, aux)``.

    Returns:
        ``solve(f, initial_guess)``; its tangent is ``-tangent_solve(df/dx, df/dp dp)``.

    Example:
        >>> def sqrt_newton(a):
        ...     def solve(f, x0):
        ...         return qb.lax.fori_loop(0, 30, lambda i, x: x - f(x) / (2.0 * x), x0)
        ...     return qb.lax.custom_root(lambda x: x * x - a, qb.array(1.0), solve,
        ...                               lambda g, y: y / g(1.0))
        >>> round(qb.grad(sqrt_newton)(qb.array(4.0)).item(), 6)
        0.25
    """
    fname = "custom_root"
    for name, fn in (("f", f), ("solve", solve), ("tangent_solve", tangent_solve)):
        if not callable(fn):
            raise ArgumentTypeError(f"{fname}: {name} must be callable, got {type(fn).__name__}")
    g_leaves, g_tree = _tree.flatten(initial_guess)
    if not g_leaves:
        raise ArgumentTypeError(f"{fname}: initial_guess must hold at least one array")
    for x in g_leaves:
        if not (is_array(x) or isinstance(x, (int, float))) or isinstance(x, bool):
            raise ArgumentTypeError(f"{fname}: initial_guess must be a pytree of arrays, got a {type(x).__name__}")
    gl = [_to_array(x) for x in g_leaves]
    guess = _tree.unflatten(g_tree, gl)
    _check_like(fname, "f", f(guess), gl, g_tree)

    def run(fn, x0):
        x, aux = _split(fname, "solve", solve(fn, x0), has_aux)
        return _check_like(fname, "solve", x, gl, g_tree), aux

    if current() is None:
        x, aux = run(f, guess)
        return (x, aux) if has_aux else x
    fc, consts = _closure_convert(f, guess)
    consts = tuple(consts)

    @custom_jvp
    def root(cs, x0):
        x, aux = run(lambda v: fc(v, *cs), x0)
        return (x, aux) if has_aux else x

    @root.defjvp
    def root_jvp(primals, tangents):
        cs, x0 = primals
        dcs, _ = tangents
        out = root(cs, x0)
        x = _tree.map(stop_gradient, out[0] if has_aux else out)
        if cs:
            _, rhs = _jvp(lambda *c: fc(x, *c), tuple(cs), tuple(dcs))

            def lin(v):
                return _jvp(lambda y: fc(y, *cs), (x,), (v,))[1]

            sol = tangent_solve(lin, rhs)
            dx = _check_like(fname, "tangent_solve", _tree.map(lambda a: -_to_array(a), sol), gl, g_tree)
        else:
            dx = _zeros_like_tree(x)
        if has_aux:
            return out, (dx, _zeros_like_tree(out[1]))
        return out, dx

    return root(consts, guess)
