"""``qb.experimental``: JAX's ``jax.experimental`` APIs built from Quabla ops.

Submodules: :mod:`quabla.experimental.ode` (``odeint``); ``io_callback`` (a Python function
with effects called from traced code, as ``jax.experimental.io_callback``).

Example:
    >>> import quabla.experimental.ode
    >>> callable(qb.experimental.ode.odeint)
    True
"""

from . import ode  # noqa: F401
from .._callback import io_callback

__all__ = ["ode", "io_callback"]
