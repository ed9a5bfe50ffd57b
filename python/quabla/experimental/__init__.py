"""``qb.experimental``: JAX's ``jax.experimental`` APIs built from Quabla ops.

Submodules: :mod:`quabla.experimental.ode` (``odeint``), :mod:`quabla.experimental.checkify`
(``checkify``, ``check``: runtime checks as values), :mod:`quabla.experimental.shard_map`
(``shard_map``), :mod:`quabla.experimental.sparse` (``BCOO``, ``BCSR``); ``io_callback`` (a Python function
with effects called from traced code, as ``jax.experimental.io_callback``).

Example:
    >>> import quabla.experimental.ode
    >>> callable(qb.experimental.ode.odeint)
    True
"""

from . import checkify  # noqa: F401
from . import ode  # noqa: F401
from . import shard_map  # noqa: F401
from . import sparse  # noqa: F401
from .._callback import io_callback

__all__ = ["checkify", "ode", "shard_map", "sparse", "io_callback"]
