"""``jax.example_libraries.optimizers`` over Quabla: optimizers as
``(init_fun, update_fun, get_params)`` triples on pytrees of parameters.

* ``init_fun(params) -> opt_state``: the optimizer state (an :class:`OptimizerState`, a
  pytree, so it passes through ``qb.jit`` and the transforms);
* ``update_fun(step, grads, opt_state) -> opt_state``: one step; ``step`` is the step index
  (a Python int, or a traced int under ``qb.jit``), which schedules receive;
* ``get_params(opt_state) -> params``.

The :func:`optimizer` decorator turns a triple written for one array into one for pytrees,
as JAX's. The update formulas, hyperparameter defaults and state layouts are JAX's, so the
same gradients give the same numbers.

Departures from JAX: a learning rate that is an array of another float dtype than a
parameter (a float64 schedule value with float32 parameters) is cast to the parameter's
dtype, so parameters keep their dtype (JAX with x64 would promote them to float64); mismatched
structures raise ArgumentTypeError (a TypeError, as JAX's).

Example:
    >>> from quabla.example_libraries import optimizers
    >>> init, update, get_params = optimizers.sgd(0.1)
    >>> state = update(0, {"w": qb.array([1.0, 2.0])}, init({"w": qb.array([0.0, 0.0])}))
    >>> get_params(state)["w"].tolist()
    [-0.1, -0.2]
"""

import collections
import functools
from typing import Any, Callable, NamedTuple

import numpy as np

from .. import _ops as _o
from .. import tree_util as _tu
from .._math import _join
from .._ops import _to_array
from .._trace import is_array
from ..dtypes import float64
from ..errors import ArgumentTypeError, InvalidArgumentError, ShapeError, ZeroStepError

__all__ = [
    "Optimizer",
    "OptimizerState",
    "JoinPoint",
    "optimizer",
    "sgd",
    "momentum",
    "nesterov",
    "adagrad",
    "rmsprop",
    "rmsprop_momentum",
    "adam",
    "adamax",
    "sm3",
    "constant",
    "exponential_decay",
    "inverse_time_decay",
    "polynomial_decay",
    "piecewise_constant",
    "make_schedule",
    "l2_norm",
    "clip_grads",
    "unpack_optimizer_state",
    "pack_optimizer_state",
]

Array = Any
Params = Any
State = Any
Updates = Params
Step = int
Schedule = Callable[[Step], float]

OptimizerState = collections.namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
OptimizerState.__doc__ = """The state of a pytree optimizer: ``packed_state`` (per parameter leaf, the
leaves of its state), ``tree_def`` (the parameters' structure) and ``subtree_defs`` (each
state's structure). A pytree node whose only child is ``packed_state``; the structures are
its static data."""

_tu.register_pytree_node(
    OptimizerState,
    lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], aux[0], aux[1]),
)

InitFn = Callable[[Params], OptimizerState]
UpdateFn = Callable[[Step, Updates, OptimizerState], OptimizerState]
ParamsFn = Callable[[OptimizerState], Params]


class Optimizer(NamedTuple):
    """An ``(init_fn, update_fn, params_fn)`` triple (unpacks as JAX's)."""

    init_fn: InitFn
    update_fn: UpdateFn
    params_fn: ParamsFn


# ---------------------------------------------------------------------------------------------
# Argument checks


def _is_scalar(v):
    if is_array(v):
        return v.shape == ()
    if isinstance(v, (bool, np.bool_)):
        return False
    if isinstance(v, (int, float, np.integer, np.floating)):
        return True
    return isinstance(v, np.ndarray) and v.shape == () and v.dtype.kind in "iuf"


def _hyper(name, arg, v):
    """A hyperparameter: a real scalar; NumPy scalars become Python numbers (weak, so they
    keep the parameters' dtype)."""
    if not _is_scalar(v):
        raise ArgumentTypeError(f"{name}: {arg} must be a real scalar, got {type(v).__name__}{' of shape ' + str(tuple(v.shape)) if hasattr(v, 'shape') else ''}")
    if isinstance(v, (np.ndarray, np.generic)):
        return v.item()
    return v


def _lr(step_size, i, x):
    """The step size at step ``i``, cast to ``x``'s dtype when it is an array of another
    float dtype (see the module docstring)."""
    lr = step_size(i)
    d = getattr(x, "dtype", None)
    if d is None or not getattr(d, "is_float", False):
        return lr
    if is_array(lr) and lr.dtype != d:
        lr = _o.astype(lr, d)
    elif isinstance(lr, (np.ndarray, np.generic)):
        lr = _o.asarray(np.asarray(lr).astype(d.np))
    return lr


def _arr(name, x):
    try:
        x = _to_array(x)
    except (ArgumentTypeError, ShapeError) as e:
        raise ArgumentTypeError(f"{name}: parameters and gradients must be arrays or numbers: {e}") from None
    return x


def _sq(g):
    g = _to_array(g)
    return g * g


def _pow_b(b, x, i):
    """``b ** (i + 1)`` with ``b`` a scalar of ``x``'s dtype (JAX's bias correction)."""
    d = x.dtype if x.dtype.is_float else float64
    b = _o.astype(b, d) if is_array(b) else _o.asarray(np.asarray(b).astype(d.np), dtype=d)
    return b ** (i + 1)


# ---------------------------------------------------------------------------------------------
# The pytree decorator


def _unzip2(pairs):
    a, b = [], []
    for x, y in pairs:
        a.append(x)
        b.append(y)
    return tuple(a), tuple(b)


def optimizer(opt_maker):
    """Decorator turning an optimizer written for single arrays into one for pytrees
    (``jax.example_libraries.optimizers.optimizer``).

    Args:
        opt_maker: a function returning ``(init, update, get_params)`` for one array:
            ``init(x0) -> state`` (a pytree), ``update(i, g, state) -> state`` and
            ``get_params(state) -> x``.

    Returns:
        A function with ``opt_maker``'s arguments returning an :class:`Optimizer` whose
        functions map over the leaves of a parameter pytree; its state is an
        :class:`OptimizerState`.

    Example:
        >>> from quabla.example_libraries import optimizers
        >>> @optimizers.optimizer
        ... def halve():
        ...     return (lambda x: x), (lambda i, g, x: x / 2), (lambda x: x)
        >>> init, update, get = halve()
        >>> get(update(0, [1.0], init([qb.array(4.0)])))[0].item()
        2.0
    """
    if not callable(opt_maker):
        raise ArgumentTypeError(f"optimizer: opt_maker must be callable, got {type(opt_maker).__name__}")

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        triple = opt_maker(*args, **kwargs)
        try:
            init, update, get_params = triple
        except (TypeError, ValueError):
            raise ArgumentTypeError(f"optimizer: {getattr(opt_maker, '__name__', 'opt_maker')} must return an (init, update, get_params) triple") from None

        @functools.wraps(init)
        def tree_init(x0_tree):
            x0_flat, tree = _tu.tree_flatten(x0_tree)
            initial_states = [init(x0) for x0 in x0_flat]
            states_flat, subtrees = _unzip2(map(_tu.tree_flatten, initial_states))
            return OptimizerState(states_flat, tree, subtrees)

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            states_flat, tree, subtrees = _state("update_fun", opt_state)
            grad_flat, tree2 = _tu.tree_flatten(grad_tree)
            if tree2 != tree:
                raise ArgumentTypeError(
                    "optimizer update function was passed a gradient tree that did not match the parameter tree "
                    f"structure with which it was initialized: parameter tree {tree} and grad tree {tree2}."
                )
            states = [_tu.tree_unflatten(s, f) for s, f in zip(subtrees, states_flat)]
            new_states = [update(i, g, s) for g, s in zip(grad_flat, states)]
            new_flat, subtrees2 = _unzip2(map(_tu.tree_flatten, new_states))
            for s, s2 in zip(subtrees, subtrees2):
                if s2 != s:
                    raise ArgumentTypeError(
                        f"optimizer update function produced an output structure that did not match its input structure: input {s} and output {s2}."
                    )
            return OptimizerState(new_flat, tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            states_flat, tree, subtrees = _state("get_params", opt_state)
            states = [_tu.tree_unflatten(s, f) for s, f in zip(subtrees, states_flat)]
            return _tu.tree_unflatten(tree, [get_params(s) for s in states])

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


def _state(name, opt_state):
    if not isinstance(opt_state, OptimizerState):
        raise ArgumentTypeError(f"{name}: opt_state must be an OptimizerState (from init_fun), got {type(opt_state).__name__}")
    states_flat, tree, subtrees = opt_state
    if not isinstance(tree, _tu.PyTreeDef) or len(states_flat) != len(subtrees) or len(subtrees) != tree.num_leaves:
        raise ArgumentTypeError(f"{name}: opt_state is not a consistent OptimizerState")
    return states_flat, tree, subtrees


# ---------------------------------------------------------------------------------------------
# Optimizers


@optimizer
def sgd(step_size):
    """Stochastic gradient descent, ``x - step_size(i) * g``
    (``jax.example_libraries.optimizers.sgd``).

    Args:
        step_size: a positive scalar or a schedule ``i -> step size``.

    Returns:
        An ``(init_fun, update_fun, get_params)`` triple.

    Example:
        >>> from quabla.example_libraries import optimizers
        >>> init, update, get = optimizers.sgd(0.5)
        >>> get(update(0, qb.array(2.0), init(qb.array(1.0)))).item()
        0.0
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return _arr("sgd", x0)

    def update(i, g, x):
        return x - _lr(step_size, i, x) * g

    def get_params(x):
        return x

    return Optimizer(init, update, get_params)


@optimizer
def momentum(step_size, mass):
    """SGD with momentum: ``v = mass * v + g; x = x - step_size(i) * v``
    (``jax.example_libraries.optimizers.momentum``).

    Args:
        step_size: a positive scalar or a schedule.
        mass: the momentum coefficient.

    Returns:
        An ``(init_fun, update_fun, get_params)`` triple.

    Example:
        >>> from quabla.example_libraries import optimizers
        >>> init, update, get = optimizers.momentum(0.1, 0.9)
        >>> s = init(qb.array(0.0)); s = update(0, 1.0, s); s = update(1, 1.0, s)
        >>> round(get(s).item(), 6)
        -0.29
    """
    step_size = make_schedule(step_size)
    mass = _hyper("momentum", "mass", mass)

    def init(x0):
        x0 = _arr("momentum", x0)
        return x0, _o.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - _lr(step_size, i, x) * velocity, velocity

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def nesterov(step_size, mass):
    """SGD with Nesterov momentum: ``v = mass * v + g; x = x - step_size(i) * (mass * v + g)``
    (``jax.example_libraries.optimizers.nesterov``).

    Args:
        step_size: a positive scalar or a schedule.
        mass: the momentum coefficient.

    Returns:
        An ``(init_fun, update_fun, get_params)`` triple.

    Example:
        >>> from quabla.example_libraries import optimizers
        >>> init, update, get = optimizers.nesterov(0.1, 0.9)
        >>> round(get(update(0, 1.0, init(qb.array(0.0)))).item(), 6)
        -0.19
    """
    step_size = make_schedule(step_size)
    mass = _hyper("nesterov", "mass", mass)

    def init(x0):
        x0 = _arr("nesterov", x0)
        return x0, _o.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - _lr(step_size, i, x) * (mass * velocity + g), velocity

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad with momentum (``jax.example_libraries.optimizers.adagrad``): the gradient
    scaled by the inverse root of the accumulated squared gradients, averaged with momentum.

    Args:
        step_size: a positive scalar or a schedule.
        momentum: the momentum coefficient (default 0.9).

    Returns:
        An ``(init_fun, update_fun, get_params)`` triple.

    Example:
        >>> from quabla.example_libraries import optimizers
        >>> init, update, get = optimizers.adagrad(1.0)
        >>> round(get(update(0, qb.array(4.0), init(qb.array(0.0)))).item(), 6)
        -0.1
    """
    step_size = make_schedule(step_size)
    momentum = _hyper("adagrad", "momentum", momentum)

    def init(x0):
        x0 = _arr("adagrad", x0)
        return x0, _o.zeros_like(x0), _o.zeros_like(x0)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + _sq(g)
        g_sq_inv_sqrt = _o.where(g_sq > 0, 1.0 / _o.sqrt(g_sq), 0.0)
        m = (1.0 - momentum) * (g * g_sq_inv_sqrt) + momentum * m
        return x - _lr(step_size, i, x) * m, g_sq, m

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp (``jax.example_libraries.optimizers.rmsprop``):
    ``a = gamma * a + (1 - gamma) * g^2; x = x - step_size(i) * g / sqrt(a + eps)``.

    Args:
        step_size: a positive scalar or a schedule.
        gamma: the decay of the squared-gradient average.
        eps: added under the square root.

    Returns:
        An ``(init_fun, update_fun, get_params)`` triple.

    Example:
        >>> from quabla.example_libraries import optimizers
        >>> init, update, get = optimizers.rmsprop(0.1, gamma=0.75, eps=0.0)
        >>> round(get(update(0, qb.array(3.0), init(qb.array(0.0)))).item(), 6)
        -0.2
    """
    step_size = make_schedule(step_size)
    gamma, eps = _hyper("rmsprop", "gamma", gamma), _hyper("rmsprop", "eps", eps)

    def init(x0):
        x0 = _arr("rmsprop", x0)
        return x0, _o.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + _sq(g) * (1.0 - gamma)
        return x - _lr(step_size, i, x) * g / _o.sqrt(avg_sq_grad + eps), avg_sq_grad

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum (``jax.example_libraries.optimizers.rmsprop_momentum``):
    ``mom = momentum * mom + step_size(i) * g / sqrt(a + eps); x = x - mom``.

    Args:
        step_size: a positive scalar or a schedule.
        gamma: the decay of the squared-gradient average.
        eps: added under the square root.
        momentum: the momentum coefficient.

    Returns:
        An ``(init_fun, update_fun, get_params)`` triple.

    Example:
        >>> from quabla.example_libraries import optimizers
        >>> init, update, get = optimizers.rmsprop_momentum(0.1, gamma=0.75, eps=0.0)
        >>> round(get(update(0, qb.array(3.0), init(qb.array(0.0)))).item(), 6)
        -0.2
    """
    step_size = make_schedule(step_size)
    gamma, eps, momentum = (_hyper("rmsprop_momentum", a, v) for a, v in (("gamma", gamma), ("eps", eps), ("momentum", momentum)))

    def init(x0):
        x0 = _arr("rmsprop_momentum", x0)
        return x0, _o.zeros_like(x0), _o.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + _sq(g) * (1.0 - gamma)
        mom = momentum * mom + _lr(step_size, i, x) * g / _o.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (``jax.example_libraries.optimizers.adam``): bias-corrected first and second
    moment estimates, ``x = x - step_size(i) * mhat / (sqrt(vhat) + eps)``.

    Args:
        step_size: a positive scalar or a schedule.
        b1: the decay of the first moment (default 0.9).
        b2: the decay of the second moment (default 0.999).
        eps: added to the root of the second moment (default 1e-8).

    Returns:
        An ``(init_fun, update_fun, get_params)`` triple.

    Example:
        >>> from quabla.example_libraries import optimizers
        >>> init, update, get = optimizers.adam(0.1)
        >>> round(get(update(0, qb.array(3.0), init(qb.array(0.0)))).item(), 6)
        -0.1
    """
    step_size = make_schedule(step_size)
    b1, b2, eps = (_hyper("adam", a, v) for a, v in (("b1", b1), ("b2", b2), ("eps", eps)))

    def init(x0):
        x0 = _arr("adam", x0)
        return x0, _o.zeros_like(x0), _o.zeros_like(x0)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * _sq(g) + b2 * v
        mhat = m / (1 - _pow_b(b1, m, i))
        vhat = v / (1 - _pow_b(b2, m, i))
        return x - _lr(step_size, i, x) * mhat / (_o.sqrt(vhat) + eps), m, v

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax, Adam with an infinity norm (``jax.example_libraries.optimizers.adamax``):
    ``u = max(b2 * u, |g|); x = x - step_size(i) / (1 - b1^(i+1)) * m / (u + eps)``.

    Args:
        step_size: a positive scalar or a schedule.
        b1: the decay of the first moment (default 0.9).
        b2: the decay of the infinity norm (default 0.999).
        eps: added to the norm (default 1e-8).

    Returns:
        An ``(init_fun, update_fun, get_params)`` triple.

    Example:
        >>> from quabla.example_libraries import optimizers
        >>> init, update, get = optimizers.adamax(0.1)
        >>> round(get(update(0, qb.array(3.0), init(qb.array(0.0)))).item(), 6)
        -0.1
    """
    step_size = make_schedule(step_size)
    b1, b2, eps = (_hyper("adamax", a, v) for a, v in (("b1", b1), ("b2", b2), ("eps", eps)))

    def init(x0):
        x0 = _arr("adamax", x0)
        return x0, _o.zeros_like(x0), _o.zeros_like(x0)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = _o.maximum(b2 * u, _o.abs(g))
        x = x - (_lr(step_size, i, x) / (1 - _pow_b(b1, m, i))) * m / (u + eps)
        return x, m, u

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3, memory-efficient adaptive optimization (``jax.example_libraries.optimizers.sm3``):
    one accumulator vector per axis of each parameter; their broadcast minimum plus ``g^2``
    scales the gradient, averaged with momentum.

    Args:
        step_size: a positive scalar or a schedule.
        momentum: the momentum coefficient (default 0.9).

    Returns:
        An ``(init_fun, update_fun, get_params)`` triple (the state keeps the parameter's
        shape as Python ints, as JAX's).

    Example:
        >>> from quabla.example_libraries import optimizers
        >>> init, update, get = optimizers.sm3(1.0)
        >>> [round(v, 6) for v in get(update(0, qb.array([[2.0, -4.0]]), init(qb.zeros((1, 2)))))[0].tolist()]
        [-0.1, 0.1]
    """
    step_size = make_schedule(step_size)
    momentum = _hyper("sm3", "momentum", momentum)

    def broadcast_into(ndim, v, axis):
        idx = [None] * ndim
        idx[axis] = slice(None)
        return v[tuple(idx)]

    def init(x0):
        x0 = _arr("sm3", x0)
        x_shape = tuple(x0.shape)
        x0 = _o.reshape(x0, (1,)) if x0.ndim == 0 else x0
        vs = [_o.zeros((n,), dtype=x0.dtype) for n in x0.shape]
        return x0, _o.zeros_like(x0), vs, x_shape

    def update(i, g, state):
        x, m, vs, x_shape = state
        g = _to_array(g)
        if g.ndim == 0:
            g = _o.reshape(g, (1,))
        vs = [broadcast_into(g.ndim, v, j) for j, v in enumerate(vs)]
        accum = functools.reduce(_o.minimum, vs) + _sq(g)
        accum_inv_sqrt = _o.where(accum > 0, 1.0 / _o.sqrt(accum), 0)
        m = (1.0 - momentum) * (g * accum_inv_sqrt) + momentum * m
        x = x - _lr(step_size, i, x) * m
        vs = [_o.max(accum, tuple(a for a in range(x.ndim) if a != j)) if x.ndim > 1 else accum for j in range(x.ndim)]
        return x, m, vs, x_shape

    def get_params(state):
        x, _, _, x_shape = state
        return _o.reshape(x, tuple(int(d) for d in x_shape))

    return init, update, get_params


# ---------------------------------------------------------------------------------------------
# Learning-rate schedules


def _schedule_arg(name, arg, v, nonzero=False):
    """A schedule hyperparameter: a real scalar (NumPy scalars become Python numbers)."""
    if not _is_scalar(v):
        raise ArgumentTypeError(f"{name}: {arg} must be a real scalar, got {type(v).__name__}")
    if isinstance(v, (np.ndarray, np.generic)):
        v = v.item()
    if nonzero and not is_array(v) and v == 0:
        raise ZeroStepError(f"{name}: {arg} must be nonzero, got {v}")
    return v


def _step(name, i):
    """The step of a schedule: a 0-d array (kept), or a host number as a NumPy float64."""
    if is_array(i):
        if i.shape != () or i.dtype.is_bool:
            raise ArgumentTypeError(f"{name}: the step must be a scalar number, got an array of shape {tuple(i.shape)} and dtype {i.dtype.name}")
        return i
    if not _is_scalar(i):
        raise ArgumentTypeError(f"{name}: the step must be a number, got {type(i).__name__}")
    return np.float64(i.item() if isinstance(i, (np.ndarray, np.generic)) else i)


def _host(f):
    """Runs a schedule formula on host numbers (NumPy float64, overflow to inf as XLA's) and
    returns a Python float; array steps pass through."""
    with np.errstate(all="ignore"):
        r = f()
    return float(r) if isinstance(r, (np.generic, float)) else r


def constant(step_size):
    """The constant schedule ``i -> step_size`` (``jax.example_libraries.optimizers.constant``).

    Args:
        step_size: the value.

    Returns:
        A schedule.

    Example:
        >>> from quabla.example_libraries import optimizers
        >>> optimizers.constant(0.1)(7)
        0.1
    """

    def schedule(i):
        return step_size

    return schedule


def exponential_decay(step_size, decay_steps, decay_rate):
    """``i -> step_size * decay_rate ** (i / decay_steps)``
    (``jax.example_libraries.optimizers.exponential_decay``).

    Args:
        step_size: the initial value.
        decay_steps: the steps per factor of ``decay_rate``.
        decay_rate: the decay factor.

    Returns:
        A schedule (Python numbers for a Python ``i``, arrays for an array ``i``).

    Example:
        >>> from quabla.example_libraries import optimizers
        >>> round(optimizers.exponential_decay(1.0, 10, 0.5)(20), 6)
        0.25
    """
    step_size = _schedule_arg("exponential_decay", "step_size", step_size)
    decay_steps = _schedule_arg("exponential_decay", "decay_steps", decay_steps, nonzero=True)
    decay_rate = _schedule_arg("exponential_decay", "decay_rate", decay_rate)

    def schedule(i):
        i = _step("exponential_decay", i)
        return _host(lambda: step_size * decay_rate ** (i / decay_steps))

    return schedule


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    """``i -> step_size / (1 + decay_rate * i / decay_steps)`` (with ``staircase``, ``i /
    decay_steps`` floored) (``jax.example_libraries.optimizers.inverse_time_decay``).

    Args:
        step_size: the initial value.
        decay_steps: the step scale.
        decay_rate: the decay rate.
        staircase: floor ``i / decay_steps``.

    Returns:
        A schedule.

    Example:
        >>> from quabla.example_libraries import optimizers
        >>> float(optimizers.inverse_time_decay(1.0, 10, 1.0, staircase=True)(15))
        0.5
    """
    step_size = _schedule_arg("inverse_time_decay", "step_size", step_size)
    decay_steps = _schedule_arg("inverse_time_decay", "decay_steps", decay_steps, nonzero=True)
    decay_rate = _schedule_arg("inverse_time_decay", "decay_rate", decay_rate)
    if staircase:

        def schedule(i):
            i = _step("inverse_time_decay", i)
            q = i / decay_steps
            q = _o.floor(q) if is_array(q) else np.floor(q)
            return _host(lambda: step_size / (1 + decay_rate * q))

    else:

        def schedule(i):
            i = _step("inverse_time_decay", i)
            return _host(lambda: step_size / (1 + decay_rate * i / decay_steps))

    return schedule


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    """``i -> (step_size - final_step_size) * (1 - min(i, decay_steps) / decay_steps) ** power
    + final_step_size`` (``jax.example_libraries.optimizers.polynomial_decay``).

    Args:
        step_size: the initial value.
        decay_steps: the steps to reach ``final_step_size``.
        final_step_size: the final value.
        power: the polynomial's power.

    Returns:
        A schedule.

    Example:
        >>> from quabla.example_libraries import optimizers
        >>> float(optimizers.polynomial_decay(1.0, 10, 0.0)(5))
        0.5
    """
    step_size = _schedule_arg("polynomial_decay", "step_size", step_size)
    decay_steps = _schedule_arg("polynomial_decay", "decay_steps", decay_steps, nonzero=True)
    final_step_size = _schedule_arg("polynomial_decay", "final_step_size", final_step_size)
    power = _schedule_arg("polynomial_decay", "power", power)

    def schedule(step_num):
        step_num = _step("polynomial_decay", step_num)
        step_num = _o.minimum(step_num, decay_steps) if is_array(step_num) else np.minimum(step_num, decay_steps)
        return _host(lambda: (1 - step_num / decay_steps) ** power * (step_size - final_step_size) + final_step_size)

    return schedule


def piecewise_constant(boundaries, values):
    """``i -> values[number of boundaries below i]``
    (``jax.example_libraries.optimizers.piecewise_constant``).

    Args:
        boundaries: the increasing step boundaries (a 1-D sequence).
        values: one more value than boundaries.

    Returns:
        A schedule returning a 0-d array.

    Example:
        >>> from quabla.example_libraries import optimizers
        >>> s = optimizers.piecewise_constant([10, 20], [1.0, 0.5, 0.1])
        >>> s(5).item(), s(15).item(), s(25).item()
        (1.0, 0.5, 0.1)
    """
    try:
        b = _to_array(boundaries)
        v = _to_array(values)
    except (ArgumentTypeError, ShapeError) as e:
        raise ArgumentTypeError(f"piecewise_constant: boundaries and values must be sequences of numbers: {e}") from None
    if not b.ndim == v.ndim == 1:
        raise ShapeError(f"piecewise_constant: boundaries and values must be sequences, got shapes {tuple(b.shape)} and {tuple(v.shape)}")
    if b.shape[0] != v.shape[0] - 1:
        raise ShapeError(f"piecewise_constant: boundaries length must be one shorter than values length, got {b.shape[0]} and {v.shape[0]}")

    def schedule(i):
        i = _step("piecewise_constant", i)
        return v[_o.sum(_o.asarray(i) > b)]

    return schedule


def make_schedule(scalar_or_schedule):
    """A schedule from a step size: a callable is returned as it is, a scalar becomes
    :func:`constant` (``jax.example_libraries.optimizers.make_schedule``).

    Args:
        scalar_or_schedule: a scalar or a callable ``i -> step size``.

    Returns:
        A schedule.

    Raises:
        ArgumentTypeError: for anything else (JAX raises TypeError).

    Example:
        >>> from quabla.example_libraries import optimizers
        >>> optimizers.make_schedule(0.5)(3)
        0.5
    """
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if _is_scalar(scalar_or_schedule):
        return constant(scalar_or_schedule)
    raise ArgumentTypeError(f"make_schedule: expected a scalar or a callable schedule, got {type(scalar_or_schedule).__name__}")


# ---------------------------------------------------------------------------------------------
# Utilities


def l2_norm(tree):
    """The l2 norm of all the leaves of ``tree`` together (``jax.example_libraries.optimizers.l2_norm``).

    Args:
        tree: a pytree of arrays (at least one leaf).

    Returns:
        A 0-d array (the leaves' promoted dtype).

    Example:
        >>> from quabla.example_libraries import optimizers
        >>> optimizers.l2_norm({"a": qb.array([3.0]), "b": qb.array(4.0)}).item()
        5.0
    """
    leaves = [_arr("l2_norm", x) for x in _tu.tree_leaves(tree)]
    if not leaves:
        raise InvalidArgumentError("l2_norm: the pytree has no leaves")
    d = leaves[0].dtype
    for x in leaves[1:]:
        d = _join(d, x.dtype)
    total = None
    for x in leaves:
        x = x if x.dtype == d else _o.astype(x, d)
        s = _o.sum(x * x)
        total = s if total is None else total + s
    return _o.sqrt(total)


def clip_grads(grad_tree, max_norm):
    """``grad_tree`` scaled so its l2 norm is at most ``max_norm``
    (``jax.example_libraries.optimizers.clip_grads``).

    Args:
        grad_tree: a pytree of arrays.
        max_norm: the largest norm.

    Returns:
        The pytree unchanged when its norm is below ``max_norm``, else scaled by
        ``max_norm / norm`` (each leaf keeps its dtype).

    Example:
        >>> from quabla.example_libraries import optimizers
        >>> [round(v, 6) for v in optimizers.clip_grads([qb.array([3.0, 4.0])], 1.0)[0].tolist()]
        [0.6, 0.8]
    """
    max_norm = _hyper("clip_grads", "max_norm", max_norm)
    norm = l2_norm(grad_tree)

    def normalize(g):
        g = _to_array(g)
        n = norm if norm.dtype == g.dtype or not g.dtype.is_float else _o.astype(norm, g.dtype)
        return _o.where(n < max_norm, g, g * (max_norm / n))

    return _tu.tree_map(normalize, grad_tree)


# ---------------------------------------------------------------------------------------------
# Serialization


class JoinPoint:
    """Marks the boundary between two joined (nested) pytrees: a leaf of the outer pytree
    holding an inner one in ``subtree``."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree


def unpack_optimizer_state(opt_state):
    """An :class:`OptimizerState` as a pytree of the parameters' structure whose leaves are
    :class:`JoinPoint` s holding each parameter's state (for serialization)
    (``jax.example_libraries.optimizers.unpack_optimizer_state``).

    Args:
        opt_state: an OptimizerState.

    Returns:
        The marked pytree.

    Example:
        >>> from quabla.example_libraries import optimizers
        >>> init, _, _ = optimizers.momentum(0.1, 0.9)
        >>> marked = optimizers.unpack_optimizer_state(init({"w": qb.array(1.0)}))
        >>> [float(t) for t in marked["w"].subtree]
        [1.0, 0.0]
    """
    states_flat, tree_def, subtree_defs = _state("unpack_optimizer_state", opt_state)
    subtrees = [_tu.tree_unflatten(s, f) for s, f in zip(subtree_defs, states_flat)]
    return _tu.tree_unflatten(tree_def, [JoinPoint(s) for s in subtrees])


def pack_optimizer_state(marked_pytree):
    """The inverse of :func:`unpack_optimizer_state`
    (``jax.example_libraries.optimizers.pack_optimizer_state``).

    Args:
        marked_pytree: a pytree whose leaves are JoinPoints.

    Returns:
        The OptimizerState.

    Example:
        >>> from quabla.example_libraries import optimizers
        >>> init, _, get = optimizers.sgd(0.1)
        >>> s = optimizers.pack_optimizer_state(optimizers.unpack_optimizer_state(init([qb.array(2.0)])))
        >>> get(s)[0].item()
        2.0
    """
    sentinels, tree_def = _tu.tree_flatten(marked_pytree)
    if not all(isinstance(s, JoinPoint) for s in sentinels):
        raise ArgumentTypeError("pack_optimizer_state: every leaf of marked_pytree must be a JoinPoint (from unpack_optimizer_state)")
    states_flat, subtree_defs = _unzip2(_tu.tree_flatten(s.subtree) for s in sentinels)
    return OptimizerState(states_flat, tree_def, subtree_defs)

