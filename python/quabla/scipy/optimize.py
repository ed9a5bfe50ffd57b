"""``qb.scipy.optimize``: JAX's ``jax.scipy.optimize``: :func:`minimize` (methods ``"BFGS"`` and
``"l-bfgs-experimental-do-not-rely-on-this"``), :class:`OptimizeResults` and the strong-Wolfe
:func:`line_search`, built from Quabla's ``while_loop`` and ``value_and_grad``.

The algorithms are JAX's: BFGS (Nocedal and Wright, Algorithm 6.1) with the inverse-Hessian
update skipped when ``1 / (y.s)`` is not finite, and the line search of Algorithm 3.5 (step
doubling, then the zoom of Algorithm 3.6 with cubic, quadratic and bisection trial points),
so iterates, ``nit`` and ``nfev`` agree with JAX's up to rounding. Like JAX, ``tol`` is
accepted and unused (use ``options={"gtol": ...}``).

Example:
    >>> import quabla.scipy.optimize
    >>> r = qb.scipy.optimize.minimize(lambda x: qb.sum((x - 2.0) ** 2), qb.zeros(2), method="BFGS")
    >>> [round(v, 6) for v in r.x.tolist()]
    [2.0, 2.0]
"""

import math
from typing import NamedTuple

import numpy as np

from .. import _ops as _o
from .. import tree as _tree
from .._control import while_loop
from .._ops import _to_array, astype
from .._trace import current, is_array
from .._transforms import value_and_grad
from ..dtypes import float64
from ..errors import ArgumentTypeError, DTypeError, InvalidArgumentError, ShapeError
from ..jit import jit as _jit

__all__ = ["minimize", "OptimizeResults", "line_search"]


class OptimizeResults(NamedTuple):
    """The result of :func:`minimize` (JAX's ``OptimizeResults``).

    Fields: ``x`` (the solution), ``success`` (converged and no line-search failure),
    ``status`` (0 converged, 1 maxiter reached, 3 zoom failed, 4 saddle point, 5 line-search
    maxiter, -1 undefined), ``fun``, ``jac`` (the gradient at ``x``), ``hess_inv`` (BFGS's
    inverse-Hessian estimate; None for L-BFGS), ``nfev``, ``njev``, ``nit``.

    Example:
        >>> qb.scipy.optimize.OptimizeResults._fields[:3]
        ('x', 'success', 'status')
    """

    x: object
    success: object
    status: object
    fun: object
    jac: object
    hess_inv: object
    nfev: object
    njev: object
    nit: object


class _LineSearchResults(NamedTuple):
    failed: object
    nit: object
    nfev: object
    ngev: object
    k: object
    a_k: object
    f_k: object
    g_k: object
    status: object


def _where(c, a, b):
    return _o.where(c, a, b)


def _replace(cond, state, new):
    """``state`` (a dict) with the keys of ``new`` set to ``new``'s values where ``cond``."""
    out = dict(state)
    for k, v in new.items():
        out[k] = _where(cond, v, state[k])
    return out


def _cubicmin(a, fa, fpa, b, fb, c, fc):
    C = fpa
    db = b - a
    dc = c - a
    denom = (db * dc) ** 2 * (db - dc)
    r0 = fb - fa - C * db
    r1 = fc - fa - C * dc
    A = (dc ** 2 * r0 + (-(db ** 2)) * r1) / denom
    B = ((-(dc ** 3)) * r0 + db ** 3 * r1) / denom
    radical = B * B - 3.0 * A * C
    return a + (-B + _o.sqrt(radical)) / (3.0 * A)


def _quadmin(a, fa, fpa, b, fb):
    db = b - a
    B = (fb - fa - fpa * db) / (db ** 2)
    return a - fpa / (2.0 * B)


def _zoom(fg, wolfe_one, wolfe_two, a_lo, phi_lo, dphi_lo, a_hi, phi_hi, dphi_hi, g_0, pass_through, dt):
    """Algorithm 3.6 (zoom) of Nocedal and Wright: cubic, then quadratic, then bisection trial
    steps between a_lo and a_hi."""
    zero_i = _to_array(0)
    st = dict(
        done=_to_array(False), failed=_to_array(False), j=zero_i,
        a_lo=a_lo, phi_lo=phi_lo, dphi_lo=dphi_lo, a_hi=a_hi, phi_hi=phi_hi, dphi_hi=dphi_hi,
        a_rec=(a_lo + a_hi) / 2.0, phi_rec=(phi_lo + phi_hi) / 2.0,
        a_star=_o.ones((), dt), phi_star=phi_lo, dphi_star=dphi_lo, g_star=g_0, nfev=zero_i, ngev=zero_i,
    )
    threshold = 1e-10 if dt is float64 else 1e-5

    def body(st):
        dalpha = st["a_hi"] - st["a_lo"]
        a = _o.minimum(st["a_hi"], st["a_lo"])
        b = _o.maximum(st["a_hi"], st["a_lo"])
        cchk = 0.2 * dalpha
        qchk = 0.1 * dalpha
        st = dict(st, failed=st["failed"] | (dalpha <= threshold))
        a_cub = _cubicmin(st["a_lo"], st["phi_lo"], st["dphi_lo"], st["a_hi"], st["phi_hi"], st["a_rec"], st["phi_rec"])
        use_cubic = (st["j"] > 0) & (a_cub > a + cchk) & (a_cub < b - cchk)
        a_quad = _quadmin(st["a_lo"], st["phi_lo"], st["dphi_lo"], st["a_hi"], st["phi_hi"])
        use_quad = (~use_cubic) & (a_quad > a + qchk) & (a_quad < b - qchk)
        use_bis = (~use_cubic) & (~use_quad)
        a_j = _where(use_cubic, a_cub, st["a_rec"])
        a_j = _where(use_quad, a_quad, a_j)
        a_j = _where(use_bis, (st["a_lo"] + st["a_hi"]) / 2.0, a_j)
        phi_j, dphi_j, g_j = fg(a_j)
        st = dict(st, nfev=st["nfev"] + 1, ngev=st["ngev"] + 1)
        hi_to_j = wolfe_one(a_j, phi_j) | (phi_j >= st["phi_lo"])
        star_to_j = wolfe_two(dphi_j) & (~hi_to_j)
        hi_to_lo = (dphi_j * (st["a_hi"] - st["a_lo"]) >= 0.0) & (~hi_to_j) & (~star_to_j)
        lo_to_j = (~hi_to_j) & (~star_to_j)
        st = _replace(hi_to_j, st, dict(a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j, a_rec=st["a_hi"], phi_rec=st["phi_hi"]))
        st = _replace(star_to_j, st, dict(a_star=a_j, phi_star=phi_j, dphi_star=dphi_j, g_star=g_j))
        st = dict(st, done=star_to_j | st["done"])
        st = _replace(hi_to_lo, st, dict(a_hi=st["a_lo"], phi_hi=st["phi_lo"], dphi_hi=st["dphi_lo"], a_rec=st["a_hi"], phi_rec=st["phi_hi"]))
        st = _replace(lo_to_j & ~hi_to_lo, st, dict(a_rec=st["a_lo"], phi_rec=st["phi_lo"]))
        st = _replace(lo_to_j, st, dict(a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j))
        j = st["j"] + 1
        return dict(st, j=j, failed=st["failed"] | (j >= 30))

    return while_loop(lambda st: (~st["done"]) & (~pass_through) & (~st["failed"]), body, st)


def _vec(name, x, fname):
    if x is None or isinstance(x, (str, bytes)) or callable(x) and not is_array(x):
        raise ArgumentTypeError(f"{fname}: {name} must be an array, got {type(x).__name__}")
    try:
        a = _to_array(x)
    except Exception:
        raise ArgumentTypeError(f"{fname}: {name} must be an array, got {type(x).__name__}") from None
    if a.dtype.is_int or a.dtype.is_bool:
        a = astype(a, float64)
    if not a.dtype.is_float:
        raise DTypeError(f"{fname}: {name} must be a real array, got {a.dtype.name}")
    return a


def line_search(f, xk, pk, old_fval=None, old_old_fval=None, gfk=None, c1=1e-4, c2=0.9, maxiter=20):
    """Inexact line search for a step satisfying the strong Wolfe conditions (JAX's
    ``jax.scipy.optimize.line_search``; Nocedal and Wright, Algorithm 3.5).

    Args:
        f: the objective ``f(x) -> scalar`` (differentiable).
        xk: the starting point (1-D).
        pk: the search direction (a descent direction).
        old_fval: ``f(xk)`` (computed when None).
        old_old_fval: the previous value of ``f``, for the first trial step.
        gfk: the gradient at ``xk`` (computed when None).
        c1: the sufficient-decrease constant.
        c2: the curvature constant.
        maxiter: the most step-doubling iterations.

    Returns:
        A result with fields ``failed``, ``nit``, ``nfev``, ``ngev``, ``k``, ``a_k`` (the step),
        ``f_k``, ``g_k`` and ``status`` (0 ok, 1 zoom failed, 3 maxiter).

    Example:
        >>> import quabla.scipy.optimize
        >>> r = qb.scipy.optimize.line_search(lambda x: qb.sum(x ** 2), qb.array([1.0]), qb.array([-1.0]))
        >>> r.a_k.item()
        1.0
    """
    fname = "line_search"
    if not callable(f):
        raise ArgumentTypeError(f"{fname}: f must be callable, got {type(f).__name__}")
    xk, pk = _vec("xk", xk, fname), _vec("pk", pk, fname)
    if xk.dtype is not pk.dtype:
        xk, pk = astype(xk, float64), astype(pk, float64)
    if tuple(xk.shape) != tuple(pk.shape):
        raise ShapeError(f"{fname}: xk and pk must have one shape, got {tuple(xk.shape)} and {tuple(pk.shape)}")
    if isinstance(maxiter, bool) or not isinstance(maxiter, (int, np.integer)):
        raise ArgumentTypeError(f"{fname}: maxiter must be an int, got {type(maxiter).__name__}")
    return _line_search(f, xk, pk, old_fval, old_old_fval, gfk, c1, c2, int(maxiter))


def _line_search(f, xk, pk, old_fval, old_old_fval, gfk, c1, c2, maxiter):
    dt = pk.dtype
    vg = value_and_grad(f)

    def fg(t):
        phi, g = vg(xk + _cast(t, dt) * pk)
        phi, g = _cast(phi, dt), _cast(g, dt)
        return phi, _o.sum(g * pk), g

    fresh = old_fval is None or gfk is None
    if fresh:
        phi_0, dphi_0, gfk = fg(0.0)
    else:
        phi_0 = _cast(old_fval, dt)
        gfk = _cast(gfk, dt)
        dphi_0 = _o.sum(gfk * pk)
    if old_old_fval is not None:
        cand = 1.01 * 2 * (phi_0 - _cast(old_old_fval, dt)) / dphi_0
        start = _where(cand > 1, 1.0, cand)
    else:
        start = _o.ones((), dt)

    def wolfe_one(a_i, phi_i):
        return phi_i > phi_0 + c1 * a_i * dphi_0

    def wolfe_two(dphi_i):
        return _o.abs(dphi_i) <= -c2 * dphi_0

    n0 = _to_array(1 if fresh else 0)
    st = dict(
        done=_to_array(False), failed=_to_array(False), i=_to_array(1), a_i1=_o.zeros((), dt), phi_i1=phi_0, dphi_i1=dphi_0,
        nfev=n0, ngev=n0, a_star=_o.zeros((), dt), phi_star=phi_0, dphi_star=dphi_0, g_star=gfk,
    )
    keys = ("a_star", "phi_star", "dphi_star", "g_star")

    def body(st):
        a_i = _where(st["i"] == 1, start, st["a_i1"] * 2.0)
        phi_i, dphi_i, g_i = fg(a_i)
        st = dict(st, nfev=st["nfev"] + 1, ngev=st["ngev"] + 1)
        to_zoom1 = wolfe_one(a_i, phi_i) | ((phi_i >= st["phi_i1"]) & (st["i"] > 1))
        to_i = wolfe_two(dphi_i) & (~to_zoom1)
        to_zoom2 = (dphi_i >= 0.0) & (~to_zoom1) & (~to_i)
        z1 = _zoom(fg, wolfe_one, wolfe_two, st["a_i1"], st["phi_i1"], st["dphi_i1"], a_i, phi_i, dphi_i, gfk, ~to_zoom1, dt)
        st = dict(st, nfev=st["nfev"] + z1["nfev"], ngev=st["ngev"] + z1["ngev"])
        z2 = _zoom(fg, wolfe_one, wolfe_two, a_i, phi_i, dphi_i, st["a_i1"], st["phi_i1"], st["dphi_i1"], gfk, ~to_zoom2, dt)
        st = dict(st, nfev=st["nfev"] + z2["nfev"], ngev=st["ngev"] + z2["ngev"])
        st = _replace(to_zoom1, st, {k: z1[k] for k in keys})
        st = dict(st, done=to_zoom1 | st["done"], failed=(to_zoom1 & z1["failed"]) | st["failed"])
        st = _replace(to_i, st, dict(a_star=a_i, phi_star=phi_i, dphi_star=dphi_i, g_star=g_i))
        st = dict(st, done=to_i | st["done"])
        st = _replace(to_zoom2, st, {k: z2[k] for k in keys})
        st = dict(st, done=to_zoom2 | st["done"], failed=(to_zoom2 & z2["failed"]) | st["failed"])
        return dict(st, i=st["i"] + 1, a_i1=a_i, phi_i1=phi_i, dphi_i1=dphi_i)

    st = while_loop(lambda st: (~st["done"]) & (st["i"] <= maxiter) & (~st["failed"]), body, st)
    status = _where(st["failed"], _to_array(1), _where(st["i"] > maxiter, _to_array(3), _to_array(0)))
    a_k = st["a_star"]
    if dt is not float64:
        a_k = _where(_o.abs(a_k) < 1e-8, _o.sign(a_k) * 1e-8, a_k)
    return _LineSearchResults(
        failed=st["failed"] | (~st["done"]), nit=st["i"] - 1, nfev=st["nfev"], ngev=st["ngev"], k=st["i"],
        a_k=a_k, f_k=st["phi_star"], g_k=st["g_star"], status=status,
    )


def _cast(x, d):
    x = _to_array(x)
    return x if x.dtype is d else astype(x, d)


def _vnorm(g, ord):
    if ord == math.inf:
        return _o.max(_o.abs(g))
    if ord == -math.inf:
        return _o.min(_o.abs(g))
    if ord == 2:
        return _o.sqrt(_o.sum(g * g))
    if ord == 1:
        return _o.sum(_o.abs(g))
    return _o.sum(_o.abs(g) ** ord) ** (1.0 / ord)


def _bfgs(fun, x0, maxiter=None, norm=math.inf, gtol=1e-5, line_search_maxiter=10):
    if maxiter is None:
        maxiter = math.prod(x0.shape) * 200
    d = x0.shape[0]
    dt = x0.dtype
    eye = _o.eye(d, dtype=dt)
    f0, g0 = value_and_grad(fun)(x0)
    f0, g0 = _cast(f0, dt), _cast(g0, dt)
    zi = _to_array(0)
    st = dict(
        converged=_vnorm(g0, norm) < gtol, failed=_to_array(False), k=zi, nfev=_to_array(1), ngev=_to_array(1),
        x_k=x0, f_k=f0, g_k=g0, H_k=eye, old_old_fval=f0 + _o.sqrt(_o.sum(g0 * g0)) / 2, ls_status=zi,
    )

    def body(st):
        p_k = -_o.matmul(st["H_k"], st["g_k"])
        ls = _line_search(fun, st["x_k"], p_k, st["f_k"], st["old_old_fval"], st["g_k"], 1e-4, 0.9, line_search_maxiter)
        s_k = ls.a_k * p_k
        x1 = st["x_k"] + s_k
        g1 = ls.g_k
        y_k = g1 - st["g_k"]
        rho = 1.0 / _o.sum(y_k * s_k)
        w = eye - rho * (s_k[:, None] * y_k[None, :])
        H1 = _o.matmul(_o.matmul(w, st["H_k"]), _o.transpose(w)) + rho * (s_k[:, None] * s_k[None, :])
        H1 = _where(_o.isfinite(rho), H1, st["H_k"])
        return dict(
            converged=_vnorm(g1, norm) < gtol, failed=ls.failed, k=st["k"] + 1, nfev=st["nfev"] + ls.nfev, ngev=st["ngev"] + ls.ngev,
            x_k=x1, f_k=ls.f_k, g_k=g1, H_k=H1, old_old_fval=st["f_k"], ls_status=ls.status,
        )

    st = while_loop(lambda st: (~st["converged"]) & (~st["failed"]) & (st["k"] < maxiter), body, st)
    status = _where(st["converged"], _to_array(0), _where(st["k"] == maxiter, _to_array(1), _where(st["failed"], 2 + st["ls_status"], _to_array(-1))))
    return OptimizeResults(
        x=st["x_k"], success=st["converged"] & (~st["failed"]), status=status, fun=st["f_k"], jac=st["g_k"], hess_inv=st["H_k"],
        nfev=st["nfev"], njev=st["ngev"], nit=st["k"],
    )


def _two_loop(g, s_hist, y_hist, rho_hist, gamma, k, m):
    """The L-BFGS two-loop recursion over the ``min(k, m)`` newest pairs (ring buffers of
    length ``m``, newest at ``(k - 1) % m``)."""
    q = g
    alphas = []
    n_used = _o.minimum(k, m)
    for j in range(m):  # newest first
        idx = (k - 1 - j) % m
        use = j < n_used
        s = _o.take(s_hist, idx, axis=0)
        y = _o.take(y_hist, idx, axis=0)
        rho = _o.take(rho_hist, idx, axis=0)
        a = _where(use, rho * _o.sum(s * q), 0.0)
        q = q - a * y
        alphas.append((a, s, y, rho, use))
    r = gamma * q
    for a, s, y, rho, use in reversed(alphas):
        b = _where(use, rho * _o.sum(y * r), 0.0)
        r = r + s * (a - b)
    return r


def _lbfgs(fun, x0, maxiter=None, norm=math.inf, maxcor=10, ftol=2.220446049250313e-09, gtol=1e-05, maxfun=None, maxgrad=None, maxls=20):
    """L-BFGS with JAX's stopping rules (gradient norm, relative decrease of f, iteration and
    evaluation limits) and its two-loop recursion."""
    d = x0.shape[0]
    dt = x0.dtype
    if maxiter is None:
        maxiter = math.inf
    if maxfun is None:
        maxfun = math.inf
    if maxgrad is None:
        maxgrad = math.inf
    m = int(maxcor)
    f0, g0 = value_and_grad(fun)(x0)
    f0, g0 = _cast(f0, dt), _cast(g0, dt)
    zi = _to_array(0)
    st = dict(
        converged=_vnorm(g0, norm) < gtol, failed=_to_array(False), k=zi, nfev=_to_array(1), ngev=_to_array(1),
        x_k=x0, f_k=f0, g_k=g0, s_h=_o.zeros((m, d), dt), y_h=_o.zeros((m, d), dt), rho_h=_o.zeros((m,), dt),
        gamma=_o.ones((), dt), status=zi, ls_status=zi,
    )

    def body(st):
        p_k = -_two_loop(st["g_k"], st["s_h"], st["y_h"], st["rho_h"], st["gamma"], st["k"], m)
        ls = _line_search(fun, st["x_k"], p_k, st["f_k"], None, st["g_k"], 1e-4, 0.9, maxls)
        s_k = ls.a_k * p_k
        x1 = st["x_k"] + s_k
        y_k = ls.g_k - st["g_k"]
        rho = 1.0 / _o.sum(s_k * y_k)
        gamma = _o.sum(s_k * y_k) / _o.sum(y_k * y_k)
        slot = st["k"] % m
        oh = _o.arange(m) == slot
        s_h = _where(oh[:, None], s_k[None, :], st["s_h"])
        y_h = _where(oh[:, None], y_k[None, :], st["y_h"])
        rho_h = _where(oh, rho, st["rho_h"])
        k1 = st["k"] + 1
        nfev = st["nfev"] + ls.nfev
        ngev = st["ngev"] + ls.ngev
        status = _where(st["f_k"] - ls.f_k < ftol, 4, zi)
        status = _where(ngev >= maxgrad, 3, status) if maxgrad != math.inf else status
        status = _where(nfev >= maxfun, 2, status) if maxfun != math.inf else status
        status = _where(k1 >= maxiter, 1, status) if maxiter != math.inf else status
        status = _where(ls.failed, 5, status)
        converged = _vnorm(ls.g_k, norm) < gtol
        return dict(
            converged=converged, failed=(status > 0) & (~converged), k=k1, nfev=nfev, ngev=ngev, x_k=x1, f_k=ls.f_k, g_k=ls.g_k,
            s_h=s_h, y_h=y_h, rho_h=rho_h, gamma=gamma, status=_cast(status, zi.dtype), ls_status=ls.status,
        )

    st = while_loop(lambda st: (~st["converged"]) & (~st["failed"]), body, st)
    return OptimizeResults(
        x=st["x_k"], success=st["converged"] & (~st["failed"]), status=st["status"], fun=st["f_k"], jac=st["g_k"], hess_inv=None,
        nfev=st["nfev"], njev=st["ngev"], nit=st["k"],
    )


_METHODS = {"bfgs": _bfgs, "l-bfgs-experimental-do-not-rely-on-this": _lbfgs}
_EAGER = {}


def minimize(fun, x0, args=(), *, method, tol=None, options=None):
    """Minimizes the scalar function ``fun(x, *args)`` of the 1-D array ``x`` (JAX's
    ``jax.scipy.optimize.minimize``).

    Args:
        fun: the objective ``fun(x, *args) -> scalar`` (differentiable).
        x0: the initial guess, shape ``(n,)``.
        args: a tuple of extra arguments of ``fun``.
        method: ``"BFGS"`` or ``"l-bfgs-experimental-do-not-rely-on-this"`` (any case).
        tol: accepted and unused, as in JAX (use ``options["gtol"]``).
        options: the method's options: for BFGS ``maxiter`` (default ``200 n``), ``norm``
            (default inf), ``gtol`` (1e-5), ``line_search_maxiter`` (10); for L-BFGS
            ``maxiter``, ``norm``, ``maxcor``, ``ftol``, ``gtol``, ``maxfun``, ``maxgrad``,
            ``maxls``.

    Returns:
        An :class:`OptimizeResults`.

    Example:
        >>> import quabla.scipy.optimize
        >>> r = qb.scipy.optimize.minimize(lambda x: qb.sum((x - 1.0) ** 2), qb.zeros(3), method="BFGS")
        >>> [round(v, 6) for v in r.x.tolist()], r.nit.item()
        ([1.0, 1.0, 1.0], 2)
    """
    fname = "minimize"
    if not callable(fun):
        raise ArgumentTypeError(f"{fname}: fun must be callable, got {type(fun).__name__}")
    if not isinstance(args, tuple):
        raise ArgumentTypeError(f"{fname}: args must be a tuple, got {type(args).__name__}")
    if not isinstance(method, str):
        raise ArgumentTypeError(f"{fname}: method must be a string, got {type(method).__name__}")
    impl = _METHODS.get(method.lower())
    if impl is None:
        raise InvalidArgumentError(f"{fname}: method {method!r} not recognized (supported: 'BFGS', 'l-bfgs-experimental-do-not-rely-on-this')")
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise ArgumentTypeError(f"{fname}: options must be a dict, got {type(options).__name__}")
    import inspect

    allowed = list(inspect.signature(impl).parameters)[2:]
    bad = [k for k in options if k not in allowed]
    if bad:
        raise InvalidArgumentError(f"{fname}: unknown options {bad} for method {method!r} (allowed: {allowed})")
    for k, v in options.items():
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating))):
            raise ArgumentTypeError(f"{fname}: option {k} must be a number, got {type(v).__name__}")
    if tol is not None and (isinstance(tol, bool) or not isinstance(tol, (int, float))):
        raise ArgumentTypeError(f"{fname}: tol must be a number or None, got {type(tol).__name__}")
    x0 = _vec("x0", x0, fname)
    if x0.ndim != 1:
        raise ShapeError(f"{fname}: x0 must be 1-D, got shape {tuple(x0.shape)}")
    opts = tuple(sorted(options.items()))
    if current() is not None:
        return impl(lambda x: fun(x, *args), x0, **options)
    leaves, a_tree = _tree.flatten(args)
    arrays = [i for i, v in enumerate(leaves) if is_array(v)]
    statics = tuple((i, type(v).__name__, v) for i, v in enumerate(leaves) if not is_array(v))
    key = (fun, impl, opts, a_tree, statics)
    try:
        hit = _EAGER.get(key)
    except TypeError:
        key, hit = None, None
    if hit is None:
        def run(x0, arr):
            vals = list(leaves)
            for i, v in zip(arrays, arr):
                vals[i] = v
            a = _tree.unflatten(a_tree, vals)
            return impl(lambda x: fun(x, *a), x0, **options)

        hit = _jit(run)
        if key is not None:
            if len(_EAGER) > 64:
                _EAGER.clear()
            _EAGER[key] = hit
    return hit(x0, [leaves[i] for i in arrays])
