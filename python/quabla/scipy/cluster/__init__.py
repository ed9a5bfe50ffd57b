"""``qb.scipy.cluster``: ``jax.scipy.cluster``'s :mod:`~quabla.scipy.cluster.vq` built from
Quabla ops.

Example:
    >>> from quabla.scipy.cluster import vq
    >>> vq.vq(qb.array([0.0, 2.9]), qb.array([0.0, 3.0]))[0].tolist()
    [0, 1]
"""

from . import vq  # noqa: F401

__all__ = ["vq"]
