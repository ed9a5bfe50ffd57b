"""More of ``jax.numpy``: constants, elementwise functions, NaN-aware and statistical
reductions, polynomials (built from Quabla ops, so they trace, differentiate and batch).
"""

__all__: list[str] = []
