"""Learning-rate schedules, ``qb.optim.schedules``: functions ``count -> value`` with optax's
names, arguments and formulas. ``count`` is the number of updates done before this one (0 for
the first update, as optax's ``scale_by_schedule``). Each schedule works on a host number
(returns a Python float) and on an array (a Tensor, or a traced value inside ``qb.jit`` and
the ``qb.optim.Trainer`` step program: returns an array of the count's float dtype).

    sched = qb.optim.schedules.warmup_cosine_decay_schedule(0.0, 1e-2, warmup_steps=100, decay_steps=1000)
    opt = qb.optim.Adam(learning_rate=sched)

Where optax warns and returns a constant schedule (``transition_steps <= 0``, a zero decay
rate) these do the same without the warning; where optax raises (``decay_steps <= 0`` for
cosine decay, negative scales for the piecewise schedule) these raise InvalidArgumentError.
"""

import math

import numpy as np

from . import _ops
from . import errors as _errors
from ._trace import is_array

__all__ = [
    "constant_schedule",
    "linear_schedule",
    "polynomial_schedule",
    "cosine_decay_schedule",
    "warmup_cosine_decay_schedule",
    "exponential_decay",
    "piecewise_constant_schedule",
    "join_schedules",
]


def _count(count):
    """A host count as a Python number; arrays unchanged."""
    if is_array(count):
        return count
    if isinstance(count, np.generic):
        return count.item()
    if isinstance(count, (int, float)) and not isinstance(count, bool):
        return count
    raise _errors.ArgumentTypeError(f"schedule: the count must be a number or an array, got {type(count).__name__}")


def _out(v):
    return v if is_array(v) else float(v)


def _minimum(a, b):
    return _ops.minimum(a, b) if is_array(a) or is_array(b) else min(a, b)


def _maximum(a, b):
    return _ops.maximum(a, b) if is_array(a) or is_array(b) else max(a, b)


def _where(c, a, b):
    return _ops.where(c, a, b) if is_array(c) else (a if c else b)


def _cos(x):
    return _ops.cos(x) if is_array(x) else math.cos(x)


def _floor(x):
    return _ops.floor(x) if is_array(x) else math.floor(x)


def _sign(x):
    return _ops.sign(x) if is_array(x) else float((x > 0) - (x < 0))


def constant_schedule(value):
    """``count -> value`` (optax.constant_schedule).

    Example:
        >>> qb.optim.schedules.constant_schedule(0.1)(7)
        0.1
    """
    value = float(value)

    def schedule(count):
        _count(count)
        return value

    return schedule


def polynomial_schedule(init_value, end_value, power, transition_steps, transition_begin=0):
    """``(init - end) * (1 - k / transition_steps) ** power + end`` with ``k = clip(count -
    transition_begin, 0, transition_steps)`` (optax.polynomial_schedule); a constant
    ``init_value`` when ``transition_steps <= 0``.

    Example:
        >>> qb.optim.schedules.polynomial_schedule(1.0, 0.0, 2, 10)(5)
        0.25
    """
    init_value, end_value, transition_steps = float(init_value), float(end_value), int(transition_steps)
    if transition_steps <= 0:
        return constant_schedule(init_value)
    transition_begin = max(int(transition_begin), 0)

    def schedule(count):
        c = _count(count)
        k = _minimum(_maximum(c - transition_begin, 0), transition_steps)
        frac = 1 - k / transition_steps
        return _out((init_value - end_value) * (frac**power) + end_value)

    return schedule


def linear_schedule(init_value, end_value, transition_steps, transition_begin=0):
    """From ``init_value`` at ``transition_begin`` linearly to ``end_value`` over
    ``transition_steps`` updates, then constant (optax.linear_schedule).

    Example:
        >>> qb.optim.schedules.linear_schedule(1.0, 0.0, 4)(1)
        0.75
    """
    return polynomial_schedule(init_value, end_value, 1, transition_steps, transition_begin)


def cosine_decay_schedule(init_value, decay_steps, alpha=0.0, exponent=1.0):
    """``init_value * ((1 - alpha) * (0.5 * (1 + cos(pi * k / decay_steps))) ** exponent +
    alpha)`` with ``k = min(count, decay_steps)`` (optax.cosine_decay_schedule).

    Example:
        >>> qb.optim.schedules.cosine_decay_schedule(1.0, 10)(5)
        0.5
    """
    if not decay_steps > 0:
        raise _errors.InvalidArgumentError(f"cosine_decay_schedule: decay_steps must be positive, got {decay_steps}")
    init_value, alpha, exponent, decay_steps = float(init_value), float(alpha), float(exponent), int(decay_steps)

    def schedule(count):
        c = _count(count)
        k = _minimum(c, decay_steps)
        cosine = 0.5 * (1 + _cos(math.pi * k / decay_steps))
        return _out(init_value * ((1 - alpha) * cosine**exponent + alpha))

    return schedule


def join_schedules(schedules, boundaries):
    """``schedules[i](count - boundaries[i-1])`` on ``[boundaries[i-1], boundaries[i])``
    (optax.join_schedules).

    Example:
        >>> s = qb.optim.schedules
        >>> s.join_schedules([s.constant_schedule(1.0), s.constant_schedule(2.0)], [3])(3)
        2.0
    """
    schedules, boundaries = list(schedules), [int(b) for b in boundaries]
    if len(schedules) != len(boundaries) + 1:
        raise _errors.InvalidArgumentError(f"join_schedules: {len(schedules)} schedules need {len(schedules) - 1} boundaries, got {len(boundaries)}")

    def schedule(count):
        c = _count(count)
        out = schedules[0](c)
        for b, s in zip(boundaries, schedules[1:]):
            out = _where(c < b, out, s(c - b))
        return _out(out)

    return schedule


def warmup_cosine_decay_schedule(init_value, peak_value, warmup_steps, decay_steps, end_value=0.0, exponent=1.0):
    """Linear warmup from ``init_value`` to ``peak_value`` over ``warmup_steps``, then cosine
    decay to ``end_value`` at ``decay_steps`` (counted from 0, warmup included), as
    optax.warmup_cosine_decay_schedule.

    Example:
        >>> sched = qb.optim.schedules.warmup_cosine_decay_schedule(0.0, 1.0, 2, 12)
        >>> [round(sched(k), 3) for k in (0, 1, 2, 7, 12)]
        [0.0, 0.5, 1.0, 0.5, 0.0]
    """
    peak_value, end_value = float(peak_value), float(end_value)
    alpha = 0.0 if peak_value == 0.0 else end_value / peak_value
    return join_schedules(
        [
            linear_schedule(init_value, peak_value, warmup_steps),
            cosine_decay_schedule(peak_value, int(decay_steps) - int(warmup_steps), alpha=alpha, exponent=exponent),
        ],
        [warmup_steps],
    )


def exponential_decay(init_value, transition_steps, decay_rate, transition_begin=0, staircase=False, end_value=None):
    """``init_value * decay_rate ** ((count - transition_begin) / transition_steps)`` (the
    exponent floored with ``staircase``), ``init_value`` before ``transition_begin``, bounded
    by ``end_value`` when given (optax.exponential_decay).

    Example:
        >>> qb.optim.schedules.exponential_decay(1.0, 10, 0.5)(20)
        0.25
    """
    init_value, decay_rate, transition_steps = float(init_value), float(decay_rate), int(transition_steps)
    if transition_steps <= 0 or decay_rate == 0.0:
        return constant_schedule(init_value)
    transition_begin = max(int(transition_begin), 0)
    clip = None
    if end_value is not None:
        end_value = float(end_value)
        clip = _maximum if decay_rate < 1.0 else _minimum

    def schedule(count):
        c = _count(count)
        d = c - transition_begin
        p = d / transition_steps
        if staircase:
            p = _floor(p)
        out = _where(d <= 0, init_value, init_value * decay_rate**p)
        if clip is not None:
            out = clip(out, end_value)
        return _out(out)

    return schedule


def piecewise_constant_schedule(init_value, boundaries_and_scales=None):
    """``init_value`` times the product of the scales of every boundary ``<= count``
    (optax.piecewise_constant_schedule; ``boundaries_and_scales`` maps int boundaries to
    non-negative scales).

    Example:
        >>> sched = qb.optim.schedules.piecewise_constant_schedule(1.0, {2: 0.5, 4: 0.1})
        >>> [sched(k) for k in (0, 2, 3, 4)]
        [1.0, 0.5, 0.5, 0.05]
    """
    init_value = float(init_value)
    items = sorted((int(b), float(s)) for b, s in (boundaries_and_scales or {}).items())
    if any(s < 0 for _, s in items):
        raise _errors.InvalidArgumentError("piecewise_constant_schedule: every scale must be non-negative")

    def schedule(count):
        c = _count(count)
        v = init_value
        for b, s in items:
            ind = _maximum(0.0, _sign(b - c))
            v = v * ind + (1 - ind) * s * v
        return _out(v)

    return schedule
