"""``qb.optim.Trainer``: device-resident training. The loss, its gradient and the optimizer
update are traced once into one step program, compiled for a device of the executor registry;
parameters, optimizer state, the step counter and the data that is not replaced per step stay
in the Rust object (``_quabla.ResidentStep``, python/src/trainer.rs) as the executable's own
buffers, fed back each step. A no-argument ``step()`` is one Rust call: no pytree flattening,
no readback.

    trainer = qb.optim.Trainer(loss, params, qb.optim.Adam(0.05), x, y, batch_argnums=(1,))
    trainer.step()               # the same batch again
    trainer.step(y_next)         # a new batch (same shapes and dtypes)
    trainer.loss()               # the last step's loss, read back
    trainer.params               # the parameters, read back as a pytree
"""

import sys
import time

import numpy as np

from . import _quabla as _q
from . import tree as _tree
from ._ops import _to_array
from ._trace import is_array
from . import errors as _errors

__all__ = ["Trainer"]

Tensor = _q.Tensor


def _as_tensor(x):
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        return _to_array(np.asarray(x))
    return None


def _flatten_batch(self, args):
    """The batch leaves of ``step(*args)`` (called from Rust when a batch position is not
    one Tensor): each argument flattened against the structure it had at construction."""
    out = []
    for k, (a, td) in enumerate(zip(args, self._batch_trees)):
        pos = self._batch_argnums[k]
        leaves, got = _tree.flatten(a)
        if got != td:
            raise _errors.InvalidArgumentError(f"Trainer.step: batch argument {k} (data[{pos}]) has structure {got!r}, but the Trainer was built with {td!r}")
        for leaf in leaves:
            t = _as_tensor(leaf)
            if t is None:
                raise _errors.ArgumentTypeError(f"Trainer.step: batch leaves must be Tensors or NumPy arrays, got {type(leaf).__name__} in data[{pos}]")
            out.append(t)
    return out


def _paths(prefix, tree):
    return [prefix + _tree.keystr(p) for p, _ in _tree.flatten_with_path(tree)[0]]


class Trainer(_q.ResidentStep):
    """Trains ``params`` to minimise ``loss(params, *data)`` with ``optimizer``, keeping the
    parameters, optimizer state and non-batch data resident on ``device`` between steps.

    The step program is ``value_and_grad(loss)`` followed by the optimizer's update (the same
    traced update body as ``optimizer.update``'s compiled path), compiled once for the
    structure, shapes and dtypes given here.

    Args:
        loss: ``loss(params, *data) -> scalar``, or ``-> (scalar, aux)`` with ``has_aux``.
        params: a pytree of float arrays (Tensors or NumPy arrays): the initial parameters.
        optimizer: ``qb.optim.SGD``, ``Adam`` or ``AdamW`` (any schedule as learning rate).
        *data: the other arguments of ``loss``: pytrees of arrays (Python numbers among the
            leaves are constants of the program).
        device: a device of :func:`qb.devices` (``"cpu"``; ``"mlx"`` where built).
        batch_argnums: the positions in ``data`` that ``step(*batch)`` replaces (an int or
            a sequence); the others are fixed at construction.
        has_aux: ``loss`` returns ``(value, aux)`` with ``aux`` a pytree of arrays (as
            ``value_and_grad(has_aux=True)``); the last step's ``aux`` is :meth:`aux`.

    Example:
        >>> def loss(w, x):
        ...     return qb.sum((w * x - 1.0) ** 2)
        >>> tr = qb.optim.Trainer(loss, qb.array(0.0), qb.optim.SGD(0.1), qb.array([1.0, 2.0]))
        >>> tr.fit(50, progress=False)
        >>> round(tr.params.item(), 4)
        0.6
    """

    def __init__(self, loss, params, optimizer, *data, device="cpu", batch_argnums=(), has_aux=False):
        from .jit import PYTHON_EXECUTORS, _device_name, _trace
        from ._optimizers import _Optimizer, _count_dtype, _flatten_keep_none
        from ._transforms import value_and_grad
        from ._ops import array

        if not callable(loss):
            raise _errors.ArgumentTypeError(f"Trainer: loss must be a callable, got {type(loss).__name__}")
        if not isinstance(optimizer, _Optimizer):
            raise _errors.ArgumentTypeError(f"Trainer: optimizer must be qb.optim.SGD, Adam or AdamW, got {type(optimizer).__name__}")
        device = _device_name(device)
        if device in PYTHON_EXECUTORS:
            raise _errors.UnsupportedOperationError(
                f"Trainer: device {device!r} is an executor written in Python (qb.jit(device={device!r})); the Trainer runs on the "
                f"executors of the Rust registry: {', '.join(_q.devices())}", op="Trainer", device=device
            )
        if device not in _q.devices():
            raise _errors.UnsupportedOperationError(
                f"Trainer: device {device!r} is not available in this build (available: {', '.join(_q.devices())})", op="Trainer", device=device
            )
        if not isinstance(has_aux, bool):
            raise _errors.ArgumentTypeError(f"Trainer: has_aux must be a bool, got {type(has_aux).__name__}")
        self._has_aux, self._aux_tree = has_aux, None
        self._batch_argnums = _batch_positions(batch_argnums, len(data))
        self._loss_fn, self._optimizer, self._device = loss, optimizer, device

        # Parameters: float Tensors.
        p_leaves, self._ptree = _tree.flatten(params)
        p_names = _paths("params", params)
        conv = []
        for name, x in zip(p_names, p_leaves):
            t = _as_tensor(x)
            if t is None or str(t.dtype) not in ("float32", "float64"):
                what = type(x).__name__ if t is None else str(t.dtype)
                raise _errors.DTypeError(f"Trainer: parameters must be float32 or float64 arrays, got {what} at {name}")
            conv.append(t)
        if not conv:
            raise _errors.InvalidArgumentError("Trainer: params has no array leaves")
        params = _tree.unflatten(self._ptree, conv)
        self._n = n = len(conv)
        self._p_names = p_names
        self._template = optimizer.init(params)
        slots = [_flatten_keep_none(self._template[s], params) for s in optimizer._slots]
        self._slots = tuple(optimizer._slots)
        flags = optimizer._flags(params)
        state = [array(0, dtype=_count_dtype(conv))] + conv + [x for s in slots for x in s]
        self._state_names = ["opt_state['step']"] + p_names + [f"opt_state[{s!r}]" + name[len("params"):] for s in self._slots for name in p_names]

        # Data: per position its structure and leaves; arrays become inputs (fixed ones in
        # data order, batch ones in batch_argnums order), Python numbers stay constants.
        batch_set = set(self._batch_argnums)
        self._data_trees, fixed = [], []
        for i, d in enumerate(data):
            leaves, td = _tree.flatten(d)
            consts = []
            for name, leaf in zip(_paths(f"data[{i}]", d), leaves):
                t = _as_tensor(leaf)
                if t is None and not (isinstance(leaf, (bool, int, float)) and i not in batch_set):
                    raise _errors.ArgumentTypeError(
                        f"Trainer: data leaves must be arrays or Python numbers (batch leaves arrays), got {type(leaf).__name__} at {name}"
                    )
                consts.append(leaf if t is None else None)
                if t is not None and i not in batch_set:
                    fixed.append(t)
            self._data_trees.append((td, consts))
        self._batch_trees = [self._data_trees[i][0] for i in self._batch_argnums]
        batch = [_as_tensor(x) for i in self._batch_argnums for x in _tree.leaves(data[i])]
        batch_names = [nm for i in self._batch_argnums for nm in _paths(f"data[{i}]", data[i])]
        direct = all(td.is_leaf() for td in self._batch_trees)
        data_trees, ptree, nslots = self._data_trees, self._ptree, len(self._slots)
        order = self._batch_argnums

        def step(state, fixed_in, batch_in):
            count, ps = state[0], list(state[1 : 1 + n])
            sl = [list(state[1 + n + k * n : 1 + n + (k + 1) * n]) for k in range(nslots)]
            fi = iter(fixed_in)
            bi = {}
            it = iter(batch_in)
            for i in order:
                bi[i] = [next(it) for _ in range(data_trees[i][0].num_leaves)]
            args = []
            for i, (td, consts) in enumerate(data_trees):
                if i in batch_set:
                    args.append(_tree.unflatten(td, bi[i]))
                else:
                    args.append(_tree.unflatten(td, [next(fi) if c is None else c for c in consts]))
            head = []
            if has_aux:
                (value, aux), grads = value_and_grad(loss, has_aux=True)(_tree.unflatten(ptree, ps), *args)
                head, self._aux_tree = _tree.flatten(aux)
                for name, leaf in zip(_paths("aux", aux), head):
                    if not is_array(leaf):
                        raise _errors.ArgumentTypeError(f"Trainer: with has_aux=True the aux leaves must be arrays, got {type(leaf).__name__} at {name}")
            else:
                value, grads = value_and_grad(loss)(_tree.unflatten(ptree, ps), *args)
            if not is_array(value) or tuple(value.shape) != ():
                shape = tuple(value.shape) if is_array(value) else type(value).__name__
                raise _errors.ShapeError(f"Trainer: loss must return a scalar, got {shape}")
            gs = _flatten_keep_none(grads, _tree.unflatten(ptree, ps))
            new_p, new_s = optimizer._body(ps, gs, sl, count, flags)
            return [value] + list(head) + [count + 1] + list(new_p) + [x for s in new_s for x in s]

        step.__name__ = f"Trainer({getattr(loss, '__name__', 'loss')})"
        inputs = (state, fixed, batch)
        leaves, dyn_tree = _tree.flatten((inputs, {}))
        program, _ = _trace(step, dyn_tree, leaves, (), (), 3)
        compiled = program.compile(device=device)
        self._program = program
        if device != "cpu" and (state or fixed):
            # Executors that keep data on a device (mlx): move the state and the fixed data
            # there once (an identity program's outputs are device buffers), so that no step
            # copies them from the host again.
            from .jit import jit

            moved = jit(lambda *a: list(a), device=device)(*state, *fixed)
            state, fixed = list(moved[: len(state)]), list(moved[len(state) :])
        n_aux = self._aux_tree.num_leaves if self._aux_tree is not None else 0
        self._bind(compiled, state, fixed, batch, batch_names, len(self._batch_argnums), direct, _flatten_batch, n_aux)

    # --- readback -------------------------------------------------------------------------

    def loss(self):
        """The last step's loss as a Tensor (read back from the executor)."""
        v = self._loss()
        if v is None:
            raise _errors.InvalidArgumentError("Trainer.loss: no step has run yet")
        return v

    def aux(self):
        """The last step's ``aux`` (``has_aux=True``), read back as a pytree of Tensors."""
        if not self._has_aux:
            raise _errors.InvalidArgumentError("Trainer.aux: this Trainer was built without has_aux=True")
        leaves = self._aux()
        if leaves is None:
            raise _errors.InvalidArgumentError("Trainer.aux: no step has run yet")
        return _tree.unflatten(self._aux_tree, leaves)

    @property
    def params(self):
        """The current parameters, read back as a pytree of the initial structure."""
        return _tree.unflatten(self._ptree, self._state()[1 : 1 + self._n])

    @params.setter
    def params(self, new):
        st = self._state()
        st[1 : 1 + self._n] = self._check_tree(new, "params")
        self._set_state(st, self._state_names)

    @property
    def opt_state(self):
        """The optimizer state, read back in ``optimizer.init``'s structure (``step`` an int)."""
        st = self._state()
        out = dict(self._template)
        out["step"] = int(st[0].item())
        n = self._n
        for k, s in enumerate(self._slots):
            out[s] = _tree.unflatten(self._ptree, st[1 + n + k * n : 1 + n + (k + 1) * n])
        return out

    @opt_state.setter
    def opt_state(self, new):
        from ._ops import array

        if not isinstance(new, dict) or "step" not in new:
            raise _errors.InvalidArgumentError("Trainer.opt_state: expected a dict with optimizer.init's keys")
        st = self._state()
        st[0] = array(new["step"], dtype=st[0].dtype)
        n = self._n
        for k, s in enumerate(self._slots):
            if s not in new:
                raise _errors.InvalidArgumentError(f"Trainer.opt_state: missing {s!r}")
            st[1 + n + k * n : 1 + n + (k + 1) * n] = self._check_tree(new[s], f"opt_state[{s!r}]")
        self._set_state(st, self._state_names)

    def _check_tree(self, tree, what):
        leaves, td = _tree.flatten(tree)
        if td != self._ptree:
            raise _errors.InvalidArgumentError(f"Trainer: {what} has structure {td!r}, but the parameters have {self._ptree!r}")
        out = []
        for name, x in zip(self._p_names, leaves):
            t = _as_tensor(x)
            if t is None:
                raise _errors.ArgumentTypeError(f"Trainer: {what} leaves must be arrays, got {type(x).__name__} at {name}")
            out.append(t)
        return out

    # --- loops -----------------------------------------------------------------------------

    def fit(self, steps=None, batches=None, progress=True):
        """Runs ``steps`` steps (``step()``, or ``step(*b)`` for each ``b`` of ``batches``,
        stopping early when ``batches`` ends; all of ``batches`` when ``steps`` is None). Each
        ``b`` is a tuple with one argument per ``batch_argnums`` position; with one position it
        may also be the argument itself (any pytree that is not a 1-tuple).
        ``progress`` shows a tqdm bar with the loss and steps/s when tqdm is importable, else
        a line on stderr every second. Returns None (read ``loss()`` and ``params``).
        """
        if steps is None and batches is None:
            raise _errors.InvalidArgumentError("Trainer.fit: give steps, batches or both")
        if steps is not None:
            steps = int(steps)
            if steps < 0:
                raise _errors.InvalidArgumentError(f"Trainer.fit: steps must be non-negative, got {steps}")
        it = None if batches is None else iter(batches)
        bar = _Progress(self, steps) if progress else None
        step = self.step
        single = len(self._batch_argnums) == 1
        done = 0
        try:
            while steps is None or done < steps:
                if it is None:
                    step()
                else:
                    b = next(it, _END)
                    if b is _END:
                        break
                    step(b) if single and not (type(b) is tuple and len(b) == 1) else step(*b)
                done += 1
                if bar is not None:
                    bar.tick(done)
        finally:
            if bar is not None:
                bar.close(done)

    def __repr__(self):
        return f"<Trainer({getattr(self._loss_fn, '__name__', 'loss')}) {self._optimizer!r} device={self._device!r} steps={self.steps}>"


_END = object()


class _Progress:
    """A tqdm bar (loss as postfix; tqdm shows steps/s) or, without tqdm, a line on stderr
    about once a second; updated at most ten times a second (each update reads the loss)."""

    def __init__(self, trainer, total):
        self.trainer, self.total = trainer, total
        self.t0 = self.last = time.perf_counter()
        self.shown = 0
        try:
            from tqdm.auto import tqdm
        except ImportError:
            tqdm = None
        self.bar = tqdm(total=total, unit="step", dynamic_ncols=True) if tqdm is not None else None
        self.every = 0.1 if self.bar is not None else 1.0

    def _loss(self):
        v = self.trainer._loss()
        return float("nan") if v is None else v.item()

    def tick(self, done):
        now = time.perf_counter()
        if now - self.last < self.every:
            return
        self.last = now
        self.show(done, now)

    def show(self, done, now):
        if self.bar is not None:
            self.bar.set_postfix(loss=f"{self._loss():.4e}", refresh=False)
            self.bar.update(done - self.shown)
        else:
            rate = done / max(now - self.t0, 1e-9)
            total = "" if self.total is None else f"/{self.total}"
            print(f"step {done}{total}  loss {self._loss():.4e}  {rate:.0f} steps/s", file=sys.stderr)
        self.shown = done

    def close(self, done):
        self.show(done, time.perf_counter())
        if self.bar is not None:
            self.bar.close()


def _batch_positions(batch_argnums, ndata):
    if isinstance(batch_argnums, (int, np.integer)) and not isinstance(batch_argnums, bool):
        batch_argnums = (batch_argnums,)
    try:
        nums = [int(i) for i in batch_argnums]
    except (TypeError, ValueError):
        raise _errors.InvalidArgumentError(f"Trainer: batch_argnums must be an int or a sequence of ints, got {batch_argnums!r}") from None
    out = []
    for i in nums:
        j = i + ndata if i < 0 else i
        if not 0 <= j < ndata:
            raise _errors.InvalidArgumentError(f"Trainer: batch_argnums {tuple(nums)} out of range for {ndata} data argument(s)")
        if j in out:
            raise _errors.InvalidArgumentError(f"Trainer: batch_argnums {tuple(nums)} repeats position {j}")
        out.append(j)
    return tuple(out)
