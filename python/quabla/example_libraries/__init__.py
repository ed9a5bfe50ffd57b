"""``qb.example_libraries``: JAX's ``jax.example_libraries`` (``stax``, a small neural-network
layer library of ``(init_fun, apply_fun)`` pairs, and ``optimizers``, optimizers as
``(init_fun, update_fun, get_params)`` triples), over Quabla's ops, so programs written
against them (JAX's ``mnist_classifier`` example and the like) run on Quabla.

Example:
    >>> from quabla.example_libraries import optimizers, stax
    >>> init, apply = stax.serial(stax.Dense(4), stax.Relu, stax.Dense(2))
    >>> out_shape, params = init(qb.random.key(0), (-1, 3))
    >>> out_shape
    (-1, 2)
"""

from . import optimizers, stax  # noqa: E402

__all__ = ["optimizers", "stax"]
