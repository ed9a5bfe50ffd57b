"""``qb.experimental.shard_map``: ``jax.experimental.shard_map``'s ``shard_map(f, mesh,
in_specs, out_specs, check_rep=True, auto=frozenset())`` (quabla/_shard_map.py; the top-level
``qb.shard_map`` takes JAX's keyword form).

Example:
    >>> from quabla.experimental.shard_map import shard_map
    >>> f = shard_map(lambda x: x * 2, qb.sharding.AbstractMesh((2,), ("i",)), qb.P("i"), qb.P("i"))
    >>> f(qb.arange(4.0)).tolist()
    [0.0, 2.0, 4.0, 6.0]
"""

from .._shard_map import experimental_shard_map as shard_map

__all__ = ["shard_map"]
