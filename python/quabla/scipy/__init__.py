"""``qb.scipy``: the parts of ``jax.scipy`` built from Quabla ops.

Subpackages: :mod:`quabla.scipy.special` (erf, erfc, erfinv, expit, logit, gammaln, digamma,
xlogy, xlog1py, logsumexp), :mod:`quabla.scipy.stats` (``norm``) and
:mod:`quabla.scipy.linalg` (cholesky, cho_factor, cho_solve, solve_triangular, lu_factor).

Example:
    >>> round(qb.scipy.special.expit(qb.array(0.0)).item(), 6)
    0.5
"""

from . import linalg  # noqa: F401
from . import special  # noqa: F401
from . import stats  # noqa: F401
