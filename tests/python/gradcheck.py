"""check_grads: Quabla's derivatives against central differences, first and second order.

For a function ``f`` of arrays, random directions ``t`` (tangents of the float inputs) and
``c`` (cotangents of the float outputs):

* JVP: ``jvp(f, x, t)`` equals ``(f(x + eps t) - f(x - eps t)) / (2 eps)``;
* VJP: ``<vjp(f, x)(c), t>`` equals ``<c, (f(x + eps t) - f(x - eps t)) / (2 eps)>``;
* second order: the same two checks applied to ``x -> (jvp(f, x, t), vjp(f, x)(c))``, which
  exercises forward-over-forward, reverse-over-forward, forward-over-reverse and
  reverse-over-reverse.

The analytic side of each order is one jitted program; the numerical side evaluates a jitted
function at shifted points (float64 throughout).
"""

import numpy as np

import quabla as qb

EPS = 1e-5
TOL = 2e-6


def _leaves(r):
    if isinstance(r, (list, tuple)):
        out = []
        for x in r:
            out.extend(_leaves(x))
        return out
    return [r]


def _float_outs(r):
    return [x for x in _leaves(r) if x is not None and x.dtype.is_float]


def _np(xs):
    return [np.asarray(x.numpy(), dtype=np.float64) for x in xs]


def _close(what, got, want, tol):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    scale = 1.0 + float(np.max(np.abs(want))) if want.size else 1.0
    err = float(np.max(np.abs(got - want))) if want.size else 0.0
    assert err <= tol * scale, f"{what}: max error {err:.3e} (scale {scale:.3e})\n got {got}\nwant {want}"


def _numerical_jvp(fj, xs, ts, eps):
    plus = _np(_float_outs(fj(*[qb.array(x + eps * t) for x, t in zip(xs, ts)])))
    minus = _np(_float_outs(fj(*[qb.array(x - eps * t) for x, t in zip(xs, ts)])))
    return [(p - m) / (2 * eps) for p, m in zip(plus, minus)]


def _check_order(f, xs, rng, eps, tol, what):
    """One order: the analytic JVP/VJP of ``f`` (a function of float64 arrays ``xs``) against
    central differences. Returns (analytic program, tangents, cotangents) for the next order."""
    ts = [rng.normal(size=x.shape) for x in xs]
    outs = _float_outs(qb.jit(f)(*[qb.array(x) for x in xs]))
    cs = [rng.normal(size=o.shape) for o in outs]

    def derivs(*d):
        _, tan = qb.jvp(f, tuple(d), tuple(qb.array(t) for t in ts))
        out, pull = qb.vjp(f, *d)
        leaves, tree = qb.tree.flatten(out)
        it = iter(cs)
        ct = qb.tree.unflatten(tree, [qb.array(next(it)) if o.dtype.is_float else 0 for o in leaves])
        return _float_outs(tan), list(pull(ct))

    got_t, got_c = qb.jit(derivs)(*[qb.array(x) for x in xs])
    num = _numerical_jvp(qb.jit(f), xs, ts, eps)
    for k, (g, n) in enumerate(zip(_np(got_t), num)):
        _close(f"{what}: JVP output {k}", g, n, tol)
    lhs = sum(float(np.sum(c * n)) for c, n in zip(cs, num))
    rhs = sum(float(np.sum(np.asarray(g.numpy()) * t)) for g, t in zip(got_c, ts))
    _close(f"{what}: VJP <c, J t>", rhs, lhs, tol * (1 + sum(float(np.sum(np.abs(c))) for c in cs)))
    return derivs


def check_grads(f, args, order=2, eps=EPS, tol=TOL, seed=0):
    """Checks ``f``'s derivatives with respect to its float64 array arguments (others are
    held fixed) to ``order`` (1 or 2)."""
    rng = np.random.default_rng(seed)
    diff = [i for i, a in enumerate(args) if isinstance(a, qb.Tensor) and a.dtype == qb.float64]
    if not diff:
        return False
    fixed = list(args)

    def g(*d):
        full = list(fixed)
        for i, v in zip(diff, d):
            full[i] = v
        return f(*full)

    xs = [np.array(args[i].numpy(), dtype=np.float64) for i in diff]
    if not _float_outs(qb.jit(g)(*[qb.array(x) for x in xs])):
        return False
    derivs = _check_order(g, xs, rng, eps, tol, "order 1")
    if order >= 2:
        _check_order(lambda *d: derivs(*d), xs, rng, eps, tol * 10, "order 2")
    return True
