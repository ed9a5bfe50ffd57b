"""Host-side optimizers over pytrees of parameters: hyperparameter objects with pure
``init``/``update``, for custom training loops around ``jit(value_and_grad(loss))``.

    opt = qb.optim.Adam(learning_rate=0.05)
    state = opt.init(params)
    params, state = opt.update(params, grads, state)

Updates run in each parameter's dtype (float32 parameters stay float32) and return new
Tensors; parameters whose gradient is None (bool leaves) are returned unchanged. When every
updated parameter, gradient and moment is a float Tensor, one step is one compiled program
(``qb.jit`` of the whole pytree's update, compiled once per structure, shapes and dtypes;
the step's bias corrections are arguments, so later steps reuse it); other leaves (NumPy
arrays, Python numbers, integer parameters) take the NumPy path on the host. Parameters may be any pytree (dicts, lists, namedtuples, registered
dataclasses); the moments keep the parameters' structure. States are plain pytrees (dicts),
so they can be saved or inspected.
"""

import numpy as np

from . import _quabla as _q
from . import tree as _tree
from ._ops import _from_numpy
from . import errors as _errors

__all__ = ["Adam", "SGD"]

Tensor = _q.Tensor


def _np(x, name):
    if isinstance(x, Tensor):
        return x.numpy()
    if isinstance(x, (np.ndarray, np.generic, int, float)):
        return np.asarray(x, dtype=np.float64) if isinstance(x, (int, float)) else np.asarray(x)
    raise _errors.ArgumentTypeError(f"optim: {name} leaves must be Tensors, NumPy arrays or Python numbers, got {type(x).__name__}")


def _flatten_keep_none(tree, like):
    """Leaves of ``tree`` aligned with the leaves of ``like``; None where ``tree`` has None
    (a bool parameter's gradient) and ``like`` has a leaf. Any pytree nodes (namedtuples,
    registered dataclasses) count; ``tree`` must have ``like``'s structure."""
    td = _tree.structure(like)
    try:
        out = td.flatten_up_to(tree)
    except _tree.PyTreeError:
        raise _errors.InvalidArgumentError("optim: grads and params have different structures") from None
    for x in out:
        if x is not None and _tree.structure(x).num_leaves != 1:
            raise _errors.InvalidArgumentError("optim: grads and params have different structures")
    return out


def _tensor(a):
    return _from_numpy(np.asarray(a))


def _float_tensors(*groups):
    """True when every leaf of the aligned leaf lists is a float Tensor of its parameter's
    shape (the compiled update's domain; the first group holds the parameters)."""
    for leaves in zip(*groups):
        if not all(isinstance(x, Tensor) for x in leaves):
            return False
        p = leaves[0]
        if str(p.dtype) not in ("float32", "float64"):
            return False
        if any(tuple(x.shape) != tuple(p.shape) for x in leaves[1:]):
            return False
    return True


def _scalar(x):
    from .dtypes import float64
    from . import _ops

    return _ops.array(x, dtype=float64)


class SGD:
    """Stochastic gradient descent, optionally with momentum:
    ``v = momentum * v + g; p = p - learning_rate * v`` (plain ``p - lr * g`` for
    momentum 0).

    Example:
        >>> opt = qb.optim.SGD(learning_rate=0.1)
        >>> p, s = opt.update(qb.array([1.0]), qb.array([2.0]), opt.init(qb.array([1.0])))
        >>> p.tolist()
        [0.8]
    """

    def __init__(self, learning_rate=1e-2, momentum=0.0):
        self.learning_rate = float(learning_rate)
        self.momentum = float(momentum)

    def init(self, params):
        """The optimizer state for ``params``: ``{"step": 0, "velocity": zeros}``."""
        leaves, td = _tree.flatten(params)
        vel = [np.zeros_like(_np(x, "params")) for x in leaves] if self.momentum else [None] * len(leaves)
        return {"step": 0, "velocity": _tree.unflatten(td, [_tensor(v) if v is not None else None for v in vel])}

    def _compiled(self):
        if getattr(self, "_step", None) is None:
            from .jit import jit

            mu = self.momentum

            def step(ps, gs, vs, lr):
                out_p, out_v = [], []
                for p, g, v in zip(ps, gs, vs):
                    d = p.dtype
                    g = g.astype(d)
                    va = mu * v.astype(d) + g if mu else g
                    out_p.append(p - lr.astype(d) * va)
                    out_v.append(va)
                return out_p, out_v

            self._step = jit(step)
        return self._step

    def update(self, params, grads, state):
        """One step; returns ``(new_params, new_state)``."""
        leaves, td = _tree.flatten(params)
        gs = _flatten_keep_none(grads, params)
        vel = _flatten_keep_none(state["velocity"], params)
        live = [i for i, g in enumerate(gs) if g is not None]
        lp, lg = [leaves[i] for i in live], [gs[i] for i in live]
        lv = [vel[i] for i in live] if self.momentum else lp
        if live and _float_tensors(lp, lg, lv):
            out_p, out_v = self._compiled()(lp, lg, lv, _scalar(self.learning_rate))
            new_p, new_v = list(leaves), list(vel)
            for i, p, v in zip(live, out_p, out_v):
                new_p[i] = p
                new_v[i] = v if self.momentum else None
            return _tree.unflatten(td, new_p), {"step": state["step"] + 1, "velocity": _tree.unflatten(td, new_v)}
        new_p, new_v = [], []
        for p, g, v in zip(leaves, gs, vel):
            if g is None:
                new_p.append(p)
                new_v.append(v)
                continue
            pa, ga = _np(p, "params"), _np(g, "grads")
            if self.momentum:
                va = self.momentum * _np(v, "velocity") + ga
                new_v.append(_tensor(va.astype(pa.dtype)))
            else:
                va = ga
                new_v.append(None)
            new_p.append(_tensor((pa - self.learning_rate * va).astype(pa.dtype)))
        return _tree.unflatten(td, new_p), {"step": state["step"] + 1, "velocity": _tree.unflatten(td, new_v)}

    def __repr__(self):
        return f"SGD(learning_rate={self.learning_rate}, momentum={self.momentum})"


class Adam:
    """Adam (Kingma and Ba): ``m = b1 m + (1 - b1) g``, ``v = b2 v + (1 - b2) g**2``,
    ``p = p - learning_rate * m_hat / (sqrt(v_hat) + eps)`` with bias-corrected moments
    ``m_hat = m / (1 - b1**t)``, ``v_hat = v / (1 - b2**t)`` at step ``t`` (1 for the first
    update), as optax.adam.

    Example:
        >>> opt = qb.optim.Adam(learning_rate=0.1)
        >>> w = qb.array(1.0)
        >>> state = opt.init(w)
        >>> w, state = opt.update(w, qb.array(0.5), state)
        >>> round(w.item(), 6)
        0.9
    """

    def __init__(self, learning_rate=1e-3, b1=0.9, b2=0.999, eps=1e-8):
        self.learning_rate = float(learning_rate)
        self.b1, self.b2, self.eps = float(b1), float(b2), float(eps)

    def init(self, params):
        """The optimizer state for ``params``: ``{"step": 0, "m": zeros, "v": zeros}``
        (moments in each parameter's dtype)."""
        leaves, td = _tree.flatten(params)
        zs = [_tensor(np.zeros_like(_np(x, "params"))) for x in leaves]
        return {"step": 0, "m": _tree.unflatten(td, zs), "v": _tree.unflatten(td, list(zs))}

    def _compiled(self):
        if getattr(self, "_step", None) is None:
            from .jit import jit
            from ._ops import sqrt

            b1, b2, eps = self.b1, self.b2, self.eps

            def step(ps, gs, ms, vs, lr, c1, c2):
                out = ([], [], [])
                for p, g, m, v in zip(ps, gs, ms, vs):
                    d = p.dtype
                    g = g.astype(d)
                    ma = b1 * m.astype(d) + (1.0 - b1) * g
                    va = b2 * v.astype(d) + (1.0 - b2) * (g * g)
                    stp = lr.astype(d) * (ma / c1.astype(d)) / (sqrt(va / c2.astype(d)) + eps)
                    for o, x in zip(out, (p - stp, ma, va)):
                        o.append(x)
                return out

            self._step = jit(step)
        return self._step

    def update(self, params, grads, state):
        """One step; returns ``(new_params, new_state)``."""
        leaves, td = _tree.flatten(params)
        gs = _flatten_keep_none(grads, params)
        ms = _flatten_keep_none(state["m"], params)
        vs = _flatten_keep_none(state["v"], params)
        t = state["step"] + 1
        c1 = 1.0 - self.b1**t
        c2 = 1.0 - self.b2**t
        lr = self.learning_rate
        live = [i for i, g in enumerate(gs) if g is not None]
        sel = lambda xs: [xs[i] for i in live]  # noqa: E731
        if live and _float_tensors(sel(leaves), sel(gs), sel(ms), sel(vs)):
            out_p, out_m, out_v = self._compiled()(sel(leaves), sel(gs), sel(ms), sel(vs), _scalar(lr), _scalar(c1), _scalar(c2))
            new_p, new_m, new_v = list(leaves), list(ms), list(vs)
            for k, i in enumerate(live):
                new_p[i], new_m[i], new_v[i] = out_p[k], out_m[k], out_v[k]
            return _tree.unflatten(td, new_p), {"step": t, "m": _tree.unflatten(td, new_m), "v": _tree.unflatten(td, new_v)}
        new_p, new_m, new_v = [], [], []
        for p, g, m, v in zip(leaves, gs, ms, vs):
            if g is None:
                new_p.append(p)
                new_m.append(m)
                new_v.append(v)
                continue
            pa, ga = _np(p, "params"), _np(g, "grads")
            if ga.shape != pa.shape:
                raise _errors.InvalidArgumentError(f"optim: a gradient of shape {ga.shape} for a parameter of shape {pa.shape}")
            dt = pa.dtype if pa.dtype.kind == "f" else np.float64
            ga = ga.astype(dt, copy=False)
            ma = self.b1 * _np(m, "m").astype(dt, copy=False) + (1.0 - self.b1) * ga
            va = self.b2 * _np(v, "v").astype(dt, copy=False) + (1.0 - self.b2) * (ga * ga)
            step = lr * (ma / c1) / (np.sqrt(va / c2) + self.eps)
            new_p.append(_tensor((pa - step).astype(dt, copy=False)))
            new_m.append(_tensor(np.asarray(ma, dtype=dt)))
            new_v.append(_tensor(np.asarray(va, dtype=dt)))
        return _tree.unflatten(td, new_p), {"step": t, "m": _tree.unflatten(td, new_m), "v": _tree.unflatten(td, new_v)}

    def __repr__(self):
        return f"Adam(learning_rate={self.learning_rate}, b1={self.b1}, b2={self.b2}, eps={self.eps})"
