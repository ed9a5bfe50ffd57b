"""``qb.scipy.spatial``: ``jax.scipy.spatial``'s :mod:`~quabla.scipy.spatial.transform`
(``Rotation`` and ``Slerp``) built from Quabla ops.

Example:
    >>> from quabla.scipy.spatial import transform
    >>> transform.Rotation.identity().as_quat().tolist()
    [0.0, 0.0, 0.0, 1.0]
"""

from . import transform  # noqa: F401

__all__ = ["transform"]
