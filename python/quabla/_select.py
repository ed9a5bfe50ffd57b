"""``jax.numpy``'s data-dependent selections with a static ``size=``: ``nonzero``,
``argwhere``, ``flatnonzero``, one-argument ``where``, ``unique`` and its array-API forms, the
set operations, ``lexsort``.
"""

__all__: list[str] = []
