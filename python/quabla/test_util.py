"""Testing helpers, as ``jax.test_util``: :func:`check_grads` compares Quabla's derivatives
with central finite differences.

Owns: ``qb.test_util.check_grads`` and its pieces (the numerical JVP, the JVP check, the
VJP check). The derivative side uses ``qb.jvp``/``qb.vjp`` (compiled like ``jit``); the
numerical side evaluates ``qb.jit(f)`` at shifted points.

Example:
    >>> qb.test_util.check_grads(lambda x: qb.sin(x) * x, (qb.array([0.5, 1.5]),), order=2)
"""

import functools

import numpy as np

from . import _quabla as _q
from . import tree as _tree
from ._staging import ArgumentError
from .jit import jit

__all__ = ["check_grads"]

Tensor = _q.Tensor

#: The finite-difference step when ``eps`` is not given (JAX's).
EPS = 1e-4

#: Default absolute and relative tolerance per dtype name (JAX's gradient tolerances).
DEFAULT_TOLERANCE = {"float32": 2e-3, "float64": 1e-5}

_MODES = ("fwd", "rev")


def _as_array(x, path):
    if isinstance(x, Tensor):
        if not x.dtype.is_float:
            raise ArgumentError(
                f"check_grads: argument {path} has dtype {x.dtype.name}; gradients are checked for float32 or float64 inputs"
            )
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        a = np.asarray(x)
        if a.dtype.kind != "f":
            raise ArgumentError(f"check_grads: argument {path} has dtype {a.dtype}; pass float arrays")
        return _from_numpy(a)
    if isinstance(x, float) or (isinstance(x, int) and not isinstance(x, bool)):
        return _from_numpy(np.asarray(float(x)))
    raise ArgumentError(
        f"check_grads: argument {path} is a {type(x).__name__}; arguments must be pytrees of float arrays or Python numbers"
    )


def _from_numpy(a):
    from ._ops import _from_numpy as conv

    return conv(np.array(a, order="C", copy=True))


def _np(x):
    if isinstance(x, Tensor):
        return np.asarray(x.numpy())
    return np.asarray(x)


def _map(f, *trees):
    """``f`` over the leaves of trees of the first one's structure, skipping None leaves."""
    return _tree.map(lambda *xs: None if xs[0] is None else f(*xs), *trees, is_leaf=lambda x: x is None)


def _rand_like(rng, tree):
    return _map(lambda x: _from_numpy(rng.standard_normal(np.shape(_np(x))).astype(_np(x).dtype)), tree)


def _shift(args, tangents, eps):
    return _map(lambda x, t: _from_numpy((_np(x) + eps * _np(t)).astype(_np(x).dtype)), args, tangents)


def _float_leaves(tree):
    return [x for x in _tree.leaves(tree) if x is not None and _np(x).dtype.kind == "f"]


def numerical_jvp(f, primals, tangents, eps=EPS):
    """``(f(primals + eps t) - f(primals - eps t)) / (2 eps)`` for each float output leaf
    (as a pytree of the output's structure; other leaves are None)."""
    fj = jit(f)
    pos = fj(*_shift(primals, tangents, eps))
    neg = fj(*_shift(primals, tangents, -eps))
    return _tree.map(
        lambda p, n: (_np(p) - _np(n)) * (0.5 / eps) if _np(p).dtype.kind == "f" else None, pos, neg
    )


def _tol(given, dtype):
    if given is not None:
        return float(given)
    return DEFAULT_TOLERANCE.get(np.dtype(dtype).name, 1e-5)


def _close(what, got, want, atol, rtol):
    """Asserts ``got`` is close to ``want`` leafwise (None in ``want`` skips the leaf)."""
    gl = _tree.leaves(got, is_leaf=lambda x: x is None)
    wl = _tree.leaves(want, is_leaf=lambda x: x is None)
    if len(gl) != len(wl):
        raise AssertionError(f"{what}: {len(gl)} leaves, expected {len(wl)}")
    for k, (g, w) in enumerate(zip(gl, wl)):
        if w is None or g is None:
            continue
        g, w = _np(g), _np(w)
        if g.shape != w.shape:
            raise AssertionError(f"{what}: leaf {k} has shape {g.shape}, expected {w.shape}")
        dt = g.dtype if g.dtype.kind == "f" else w.dtype
        a, r = _tol(atol, dt), _tol(rtol, dt)
        g64, w64 = g.astype(np.float64), w.astype(np.float64)
        err = np.abs(g64 - w64)
        bound = a + r * np.abs(w64)
        if not np.all(err <= bound):
            i = int(np.argmax(err - bound))
            raise AssertionError(
                f"{what}: leaf {k} differs (atol={a}, rtol={r}): max error {float(np.max(err)):.3e} at flat index {i}\n"
                f"  got      {g}\n  expected {w}"
            )


def _inner(xs, ys):
    total = 0.0
    for x, y in zip(_tree.leaves(xs, is_leaf=lambda v: v is None), _tree.leaves(ys, is_leaf=lambda v: v is None)):
        if x is None or y is None:
            continue
        total += float(np.sum(_np(x).astype(np.float64) * _np(y).astype(np.float64)))
    return np.asarray(total)


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    """Checks ``f_jvp(primals, tangents) -> (out, tangent_out)`` against ``f`` and central
    differences along one random direction."""
    rng = np.random.default_rng(0)
    tangent = _rand_like(rng, args)
    v_out, t_out = f_jvp(args, tangent)
    what = err_msg or "JVP"
    _close(f"{what}: primal output", v_out, jit(f)(*args), atol, rtol)
    _close(f"{what}: tangent output", t_out, numerical_jvp(f, args, tangent, eps), atol, rtol)


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    """Checks ``f_vjp(*primals) -> (out, vjp_fun)``: ``<vjp_fun(c), t>`` against
    ``<c, numerical JVP along t>`` for random ``t`` and ``c``."""
    rng = np.random.default_rng(1)
    v_out, vjpfun = f_vjp(*args)
    what = err_msg or "VJP"
    _close(f"{what}: primal output", v_out, jit(f)(*args), atol, rtol)
    tangent = _rand_like(rng, args)
    t_out = numerical_jvp(f, args, tangent, eps)
    cot = _map(lambda o: _from_numpy(rng.standard_normal(np.shape(_np(o))).astype(_np(o).dtype)), v_out)
    ct_out = vjpfun(cot)
    dt = max((np.dtype(_np(x).dtype) for x in _float_leaves(args)), key=lambda d: d.itemsize, default=np.dtype("float64"))
    ip = _inner(tangent, tuple(ct_out)).astype(dt)
    ip_expected = _inner(t_out, cot).astype(dt)
    _close(f"{what}: <vjp(cotangent), tangent> vs <cotangent, numerical jvp(tangent)>", ip, ip_expected, atol, rtol)


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
    """Checks ``f``'s derivatives at ``args`` against central finite differences, as
    ``jax.test_util.check_grads``; raises AssertionError naming the failing check.

    Args:
        f: a function of pytrees of float arrays.
        args: a tuple (or list) of the arguments (pytrees of float Tensors, NumPy arrays or
            Python numbers; Python numbers become float64 arrays).
        order: derivatives up to this order (1, 2, ...): each order checks the forward and
            reverse derivatives of the previous order's derivative functions.
        modes: ``"fwd"`` (JVPs against finite differences), ``"rev"`` (VJPs through the
            inner product with a JVP), or both.
        atol, rtol: tolerances (default per dtype: 1e-5 for float64, 2e-3 for float32).
        eps: the finite-difference step (default 1e-4).

    Raises:
        AssertionError: a derivative differs from the finite differences.
        ArgumentError: bad arguments (a non-float argument, an unknown mode, order < 1).

    Example:
        >>> qb.test_util.check_grads(lambda x, y: qb.sum(x * qb.exp(y)), (qb.ones(3), qb.zeros(3)), order=1)
        >>> qb.test_util.check_grads(qb.tanh, (0.3,), order=3, modes=("rev",))
    """
    if not callable(f):
        raise ArgumentError(f"check_grads: f must be callable, got a {type(f).__name__}")
    if not isinstance(args, (tuple, list)):
        raise ArgumentError(f"check_grads: args must be a tuple or list of arguments, got a {type(args).__name__}")
    if isinstance(order, bool) or not isinstance(order, (int, np.integer)) or order < 1:
        raise ArgumentError(f"check_grads: order must be an int >= 1, got {order!r}")
    if isinstance(modes, str):
        modes = (modes,)
    try:
        modes = tuple(modes)
    except TypeError:
        raise ArgumentError(f"check_grads: modes must be a sequence of 'fwd' and 'rev', got {modes!r}") from None
    bad = [m for m in modes if m not in _MODES]
    if bad or not modes:
        raise ArgumentError(f"check_grads: modes must be a non-empty sequence of 'fwd' and 'rev', got {modes!r}")
    for name, v in (("atol", atol), ("rtol", rtol), ("eps", eps)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0):
            raise ArgumentError(f"check_grads: {name} must be a non-negative number or None, got {v!r}")
    eps = float(eps) if eps else EPS
    pairs, td = _tree.flatten_with_path(tuple(args))
    args = _tree.unflatten(td, [_as_array(x, "args" + _tree.keystr(p)) for p, x in pairs])
    _check(f, args, int(order), modes, atol, rtol, eps, "")


def _check(f, args, order, modes, atol, rtol, eps, msg):
    from ._transforms import jvp, vjp

    if "fwd" in modes:
        what = f"JVP of {msg}" if msg else "JVP"
        check_jvp(f, functools.partial(jvp, f), args, atol, rtol, eps, what)
        if order > 1:
            _check(functools.partial(jvp, f), (args, args), order - 1, modes, atol, rtol, eps, what)
    if "rev" in modes:
        what = f"VJP of {msg}" if msg else "VJP"
        check_vjp(f, functools.partial(vjp, f), args, atol, rtol, eps, what)
        if order > 1:

            def f_vjp(*primals):
                out, pull = vjp(f, *primals)
                return pull(out)

            _check(f_vjp, args, order - 1, modes, atol, rtol, eps, what)
