"""More of ``jax.numpy``: array construction, splitting, stacking and layout, index helpers,
selection by condition (built from Quabla ops, so they trace, differentiate and batch).
"""

__all__: list[str] = []
