"""The optimizers of ``qb.optim`` (python/quabla/optim.py is the public namespace):
hyperparameter objects with pure ``init``/``update`` (optax's formulas) over pytrees of
parameters, for custom training loops around ``jit(value_and_grad(loss))`` and for
:class:`qb.optim.Trainer`, which traces their ``_body`` into its step program.

    opt = qb.optim.Adam(learning_rate=0.05)
    state = opt.init(params)
    params, state = opt.update(params, grads, state)

``learning_rate`` is a float or a schedule (a callable ``count -> lr``, such as those of
:mod:`qb.optim.schedules`), evaluated at the number of updates done before this one, as optax.

Updates run in each parameter's dtype (float32 parameters stay float32, and their step
counter, schedule and bias corrections are float32 too, as optax's) and return new Tensors;
parameters whose gradient is None (bool leaves) are returned unchanged. When every updated
parameter, gradient and moment is a float Tensor, one step runs compiled programs (``qb.jit``
of the update body, compiled once per structure, shapes and dtypes; the step count is an
argument, so later steps reuse it): one for the parameters of fewer than 2^16 elements
together and one per larger parameter (see ``_groups``); other leaves (NumPy arrays, Python numbers, integer
parameters) take the NumPy path on the host. The compiled update and the Trainer's step
program trace the same update body (``_body``). Parameters may be any pytree (dicts, lists,
namedtuples, registered dataclasses); the moments keep the parameters' structure. States are
plain pytrees (dicts), so they can be saved or inspected.
"""

import numpy as np

from . import _quabla as _q
from . import tree as _tree
from ._ops import _from_numpy
from . import errors as _errors

__all__ = ["Adam", "AdamW", "SGD"]

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


def _count_dtype(params):
    """The dtype of the traced step counter for these (float) parameters: float64 when any
    is float64, else float32 (optax's float32 counts and bias corrections for float32
    models; no float64 on executors that lack it)."""
    from .dtypes import float32, float64

    return float64 if any(str(p.dtype) == "float64" for p in params) else float32


# Parameters of at least this many elements get a compiled update of their own.
_ALONE = 1 << 16


def _groups(params):
    """The leaf indices of each compiled update program: every parameter of at least
    ``_ALONE`` elements alone, the smaller ones together (in order, the group of small ones
    first). A large leaf's update is about 25 ops, so its program stays under the CPU
    executor's outlining size (quabla_passes::outline, 64 ops): its fused loops write the
    new parameter and moments straight into the outputs. A whole model's update in one
    program is outlined into chunks whose results are copied into the outputs, an extra
    pass over every array that costs more than a call per large leaf (bench/cpu_table.py
    adam: 1.4 -> 0.8 ms for the MLP's 670k parameters)."""
    big, small = [], []
    for i, p in enumerate(params):
        (big if int(np.prod(p.shape, dtype=np.int64)) >= _ALONE else small).append(i)
    return ([small] if small else []) + [[i] for i in big]


def _learning_rate(lr, name):
    if callable(lr):
        return lr
    try:
        return float(lr)
    except (TypeError, ValueError):
        raise _errors.ArgumentTypeError(f"{name}: learning_rate must be a number or a schedule (a callable count -> lr), got {type(lr).__name__}") from None


class _Optimizer:
    """The shared machinery: ``init`` (zeros for each slot), ``update`` (the compiled update
    on float Tensors, NumPy otherwise) and ``_body`` (the update of aligned leaf lists on
    arrays or traced values; the compiled update and the Trainer trace it).

    A subclass defines ``_slots`` (the names of its per-parameter state trees), ``_consts``
    (the per-dtype scalars of one step from the pre-update count) and ``_leaf`` (one
    parameter's update)."""

    _slots = ()

    def _lr(self, count):
        lr = self.learning_rate
        return lr(count) if callable(lr) else lr

    def _hyper(self):
        """The hyperparameters the compiled update closes over (its cache key)."""
        return tuple(getattr(self, k) for k in self._fields)

    def _flags(self, params):
        """Per-leaf static flags of the update (AdamW's weight-decay mask); None here."""
        return None

    def init(self, params):
        """The optimizer state for ``params``: ``{"step": 0, <slot>: zeros}`` (each slot in
        its parameter's dtype)."""
        leaves, td = _tree.flatten(params)
        state = {"step": 0}
        for s in self._slots:
            state[s] = _tree.unflatten(td, [_tensor(np.zeros_like(_np(x, "params"))) for x in leaves])
        return state

    def _body(self, ps, gs, slots, count, flags=None):
        """One update of aligned leaf lists: parameters ``ps``, gradients ``gs`` (None: left
        unchanged), ``slots`` (one list per slot name) and the pre-update step count
        ``count`` (a scalar array). Returns ``(new_ps, new_slots)``."""
        from ._ops import sqrt

        out_p, out_s = [], [[] for _ in self._slots]
        consts = {}
        for i, (p, g) in enumerate(zip(ps, gs)):
            if g is None:
                out_p.append(p)
                for k, s in enumerate(slots):
                    out_s[k].append(s[i])
                continue
            d = p.dtype
            key = str(d)
            if key not in consts:
                consts[key] = self._consts(count.astype(d))
            np_, ns = self._leaf(p, g.astype(d), [s[i].astype(d) for s in slots], consts[key], sqrt, True if flags is None else flags[i])
            out_p.append(np_)
            for k, x in enumerate(ns):
                out_s[k].append(x)
        return out_p, out_s

    def _compiled(self):
        key = self._hyper()
        if getattr(self, "_step", None) is None or self._step_key != key:
            from .jit import jit

            self._step = jit(self._body, static_argnums=4)
            self._step_key = key
        return self._step

    def update(self, params, grads, state):
        """One step; returns ``(new_params, new_state)``."""
        leaves, td = _tree.flatten(params)
        gs = _flatten_keep_none(grads, params)
        slots = [_flatten_keep_none(state[s], params) for s in self._slots]
        flags = self._flags(params)
        step = state["step"]
        live = [i for i, g in enumerate(gs) if g is not None]
        sel = lambda xs: [xs[i] for i in live]  # noqa: E731
        new_p, new_s = list(leaves), [list(s) for s in slots]
        if live and _float_tensors(sel(leaves), sel(gs), *map(sel, slots)):
            from ._ops import array

            lp, lg, ls = sel(leaves), sel(gs), [sel(s) for s in slots]
            lf = None if flags is None else sel(list(flags))
            count = array(step, dtype=_count_dtype(lp))
            run = self._compiled()
            for group in _groups(lp):
                pick = lambda xs: [xs[k] for k in group]  # noqa: E731
                out_p, out_s = run(pick(lp), pick(lg), [pick(s) for s in ls], count, None if lf is None else tuple(pick(lf)))
                for n, k in enumerate(group):
                    i = live[k]
                    new_p[i] = out_p[n]
                    for j in range(len(slots)):
                        new_s[j][i] = out_s[j][n]
        else:
            consts = {}
            for i in live:
                pa, ga = _np(leaves[i], "params"), _np(gs[i], "grads")
                if ga.shape != pa.shape:
                    raise _errors.InvalidArgumentError(f"optim: a gradient of shape {ga.shape} for a parameter of shape {pa.shape}")
                dt = pa.dtype if pa.dtype.kind == "f" else np.float64
                sa = [_np(s[i], name).astype(dt, copy=False) for s, name in zip(slots, self._slots)]
                if dt not in consts:
                    # The count in the parameters' dtype, as the compiled path's.
                    consts[dt] = self._consts(np.asarray(step, dtype=dt)[()])
                np_, ns = self._leaf(pa.astype(dt, copy=False), ga.astype(dt, copy=False), sa, consts[dt], np.sqrt, True if flags is None else flags[i])
                new_p[i] = _tensor(np.asarray(np_, dtype=dt))
                for j, x in enumerate(ns):
                    new_s[j][i] = _tensor(np.asarray(x, dtype=dt))
        out = dict(state)
        out["step"] = step + 1
        for name, s in zip(self._slots, new_s):
            out[name] = _tree.unflatten(td, s)
        return _tree.unflatten(td, new_p), out

    def __repr__(self):
        args = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._fields)
        return f"{type(self).__name__}({args})"


class SGD(_Optimizer):
    """Stochastic gradient descent, optionally with momentum, as optax.sgd:
    ``v = g + momentum * v``; ``p = p - lr * v`` (``p - lr * (g + momentum * v)`` with
    ``nesterov``; plain ``p - lr * g`` for momentum 0).

    Example:
        >>> opt = qb.optim.SGD(learning_rate=0.1)
        >>> p, s = opt.update(qb.array([1.0]), qb.array([2.0]), opt.init(qb.array([1.0])))
        >>> p.tolist()
        [0.8]
    """

    _fields = ("learning_rate", "momentum", "nesterov")

    def __init__(self, learning_rate=1e-2, momentum=0.0, nesterov=False):
        self.learning_rate = _learning_rate(learning_rate, "SGD")
        self.momentum = float(momentum or 0.0)
        self.nesterov = bool(nesterov)

    @property
    def _slots(self):
        return ("velocity",) if self.momentum else ()

    def init(self, params):
        """The optimizer state for ``params``: ``{"step": 0, "velocity": zeros}`` (the
        velocities None for momentum 0)."""
        state = super().init(params)
        if not self.momentum:
            leaves, td = _tree.flatten(params)
            state["velocity"] = _tree.unflatten(td, [None] * len(leaves))
        return state

    def _consts(self, count):
        return self._lr(count)

    def _leaf(self, p, g, slots, lr, sqrt, flag):
        if not self.momentum:
            return p - lr * g, ()
        v = g + self.momentum * slots[0]
        u = g + self.momentum * v if self.nesterov else v
        return p - lr * u, (v,)


class Adam(_Optimizer):
    """Adam (Kingma and Ba) as optax.adam: ``m = b1 m + (1 - b1) g``, ``v = b2 v + (1 - b2)
    g**2``, ``p = p - lr * m_hat / (sqrt(v_hat + eps_root) + eps)`` with bias-corrected
    moments ``m_hat = m / (1 - b1**t)``, ``v_hat = v / (1 - b2**t)`` at step ``t`` (1 for the
    first update).

    Example:
        >>> opt = qb.optim.Adam(learning_rate=0.1)
        >>> w = qb.array(1.0)
        >>> state = opt.init(w)
        >>> w, state = opt.update(w, qb.array(0.5), state)
        >>> round(w.item(), 6)
        0.9
    """

    _slots = ("m", "v")
    _fields = ("learning_rate", "b1", "b2", "eps", "eps_root")

    def __init__(self, learning_rate=1e-3, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0):
        self.learning_rate = _learning_rate(learning_rate, type(self).__name__)
        self.b1, self.b2, self.eps, self.eps_root = float(b1), float(b2), float(eps), float(eps_root)

    def _consts(self, count):
        t = count + 1
        return self._lr(count), 1 - self.b1**t, 1 - self.b2**t

    def _adam(self, g, slots, consts, sqrt):
        _, c1, c2 = consts
        m = self.b1 * slots[0] + (1.0 - self.b1) * g
        v = self.b2 * slots[1] + (1.0 - self.b2) * (g * g)
        return (m / c1) / (sqrt(v / c2 + self.eps_root) + self.eps), m, v

    def _leaf(self, p, g, slots, consts, sqrt, flag):
        u, m, v = self._adam(g, slots, consts, sqrt)
        return p - consts[0] * u, (m, v)


class AdamW(Adam):
    """Adam with decoupled weight decay, as optax.adamw: the Adam direction plus
    ``weight_decay * p``, scaled by the learning rate: ``p = p - lr * (m_hat / (sqrt(v_hat +
    eps_root) + eps) + weight_decay * p)``. ``mask`` (a pytree of bools with the parameters'
    structure, or a callable ``params ->`` such a pytree) limits the decay to the leaves
    where it is True.

    Example:
        >>> opt = qb.optim.AdamW(learning_rate=0.1, weight_decay=0.5)
        >>> w, _ = opt.update(qb.array(1.0), qb.array(0.5), opt.init(qb.array(1.0)))
        >>> round(w.item(), 6)
        0.85
    """

    _fields = ("learning_rate", "b1", "b2", "eps", "eps_root", "weight_decay")

    def __init__(self, learning_rate=1e-3, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, weight_decay=1e-4, mask=None):
        super().__init__(learning_rate, b1, b2, eps, eps_root)
        self.weight_decay = float(weight_decay)
        self.mask = mask

    def _flags(self, params):
        if self.mask is None:
            return None
        m = self.mask(params) if callable(self.mask) else self.mask
        try:
            flags = _tree.structure(params).flatten_up_to(m)
        except _tree.PyTreeError:
            raise _errors.InvalidArgumentError("AdamW: mask and params have different structures") from None
        return tuple(bool(f) for f in flags)

    def _leaf(self, p, g, slots, consts, sqrt, flag):
        u, m, v = self._adam(g, slots, consts, sqrt)
        if flag and self.weight_decay:
            u = u + self.weight_decay * p
        return p - consts[0] * u, (m, v)

    def __repr__(self):
        return super().__repr__()[:-1] + f", mask={self.mask!r})"

