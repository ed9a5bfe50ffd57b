"""``qb.scipy``: the parts of ``jax.scipy`` built from Quabla ops.

Subpackages, as ``jax.scipy``'s: :mod:`quabla.scipy.special`, :mod:`quabla.scipy.stats`,
:mod:`quabla.scipy.linalg`, :mod:`quabla.scipy.optimize` (``minimize``),
:mod:`quabla.scipy.sparse.linalg` (``cg``, ``bicgstab``, ``gmres``), :mod:`quabla.scipy.signal`
(convolutions, ``detrend``), :mod:`quabla.scipy.integrate` (``trapezoid``),
:mod:`quabla.scipy.ndimage` (``map_coordinates``), :mod:`quabla.scipy.interpolate`
(``RegularGridInterpolator``), :mod:`quabla.scipy.spatial.transform` (``Rotation``, ``Slerp``)
and :mod:`quabla.scipy.cluster.vq` (``vq``).

Example:
    >>> round(qb.scipy.special.expit(qb.array(0.0)).item(), 6)
    0.5
"""

from . import linalg  # noqa: F401
from . import special  # noqa: F401
from . import stats  # noqa: F401
from . import optimize  # noqa: F401
from . import sparse  # noqa: F401
from . import signal  # noqa: F401
from . import integrate  # noqa: F401
from . import ndimage  # noqa: F401
from . import interpolate  # noqa: F401
from . import spatial  # noqa: F401
from . import cluster  # noqa: F401
