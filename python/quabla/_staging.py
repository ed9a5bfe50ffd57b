"""What ``jit`` and the function transforms share, so that neither imports the other's module
in a circle: ``jit`` (quabla/jit.py) compiles transformed functions, and the transforms
(quabla/_transforms.py) call ``jit`` for top-level calls; both import this module, and
_transforms imports jit (never the reverse).

Owns: :class:`ArgumentError` (bad arguments and options of ``jit`` and the transforms), the
base class of transformed functions (:class:`TransformedFunction`: which positional
arguments a transform differentiates) and the conversion of Python numbers in those positions
to float64 Tensors (:func:`float_args`).
"""

import numpy as np

from . import _quabla as _q
from . import dtypes as _dt
from . import tree as _tree
from .errors import QuablaError


class ArgumentError(QuablaError, TypeError, ValueError):
    """An argument or option of ``jit``, a transform, ``linearize`` or ``check_grads`` that
    does not fit (a bad ``static_argnames``, an unhashable static value, a wrong number of
    tangents, an unknown mode, ...). It is both a TypeError and a ValueError, so code that
    catches either keeps working; the message names the argument."""


def is_pyscalar(x):
    """True for a Python int or float (not a bool, not a NumPy scalar)."""
    return isinstance(x, (int, float)) and not isinstance(x, (bool, np.generic))


def float_args(args, diff):
    """``args`` with Python numbers in the differentiated positions as float64 Tensors."""

    def conv(x):
        return _q.full((), float(x), _dt.float64.code) if is_pyscalar(x) else x

    return tuple(_tree.map(conv, a) if i in diff else a for i, a in enumerate(args))


class TransformedFunction:
    """Base of the functions that ``grad``, ``jvp``, ``vjp``, ``jacobian``, ``hessian`` and
    ``vmap`` return. ``jit`` asks it which positional arguments it differentiates: Python
    numbers there are traced as float64 arrays, not as static values."""

    def _diff(self, nargs):
        """The differentiated positions among ``nargs`` positional arguments."""
        return ()
