"""``qb.lax``: ``jax.lax``'s names over Quabla's ops, so ``from quabla import lax`` runs the
``lax`` calls of existing JAX programs.
"""

__all__: list[str] = []
