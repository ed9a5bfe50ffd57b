"""``qb.scipy``: the parts of ``jax.scipy`` built from Quabla ops.

Subpackages, as ``jax.scipy``'s: :mod:`quabla.scipy.special`, :mod:`quabla.scipy.stats`,
:mod:`quabla.scipy.linalg`, :mod:`quabla.scipy.optimize` (``minimize``) and
:mod:`quabla.scipy.sparse.linalg` (``cg``, ``bicgstab``, ``gmres``).

Example:
    >>> round(qb.scipy.special.expit(qb.array(0.0)).item(), 6)
    0.5
"""

from . import linalg  # noqa: F401
from . import special  # noqa: F401
from . import stats  # noqa: F401
from . import optimize  # noqa: F401
from . import sparse  # noqa: F401
