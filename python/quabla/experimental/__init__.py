"""``qb.experimental``: JAX's ``jax.experimental`` APIs built from Quabla ops.

Submodules: :mod:`quabla.experimental.ode` (``odeint``).

Example:
    >>> import quabla.experimental.ode
    >>> callable(qb.experimental.ode.odeint)
    True
"""

from . import ode  # noqa: F401

__all__ = ["ode"]
