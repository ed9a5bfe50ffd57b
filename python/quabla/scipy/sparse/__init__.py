"""``qb.scipy.sparse``: JAX's ``jax.scipy.sparse``: the iterative solvers of
:mod:`quabla.scipy.sparse.linalg` (``cg``, ``bicgstab``, ``gmres``).

Example:
    >>> import quabla.scipy.sparse.linalg
    >>> x, _ = qb.scipy.sparse.linalg.cg(qb.array([[2.0, 0.0], [0.0, 4.0]]), qb.array([2.0, 4.0]))
    >>> [round(v, 6) for v in x.tolist()]
    [1.0, 1.0]
"""

from . import linalg  # noqa: F401

__all__ = ["linalg"]
