"""``quabla.numpy``: the package's NumPy-shaped names in one namespace (what ``jax.numpy``
has and Quabla provides), so ``import quabla.numpy as jnp`` runs code written against
``jax.numpy``; ``quabla.numpy.linalg`` is :mod:`quabla.linalg`. The transforms, control
flow and the other subpackages stay at the top level (``qb.jit``, ``qb.lax``, ...).

Example:
    >>> import quabla.numpy as jnp
    >>> jnp.sum(jnp.arange(4)).item()
    6
"""

import quabla as _qb
from quabla import linalg  # noqa: F401

# The top-level names that are not NumPy's: transforms, control flow, staging, devices,
# errors, subpackages and JAX's top-level utilities.
_NOT_NUMPY = {
    "jit", "grad", "value_and_grad", "jvp", "vjp", "vmap", "jacobian", "jacfwd", "jacrev", "hessian", "linearize",
    "custom_jvp", "custom_vjp", "cond", "switch", "while_loop", "fori_loop", "scan", "associative_scan",
    "stop_gradient", "export", "Lowered", "Compiled", "Tracer", "ShapeDtype", "ShapeDtypeStruct", "eval_shape",
    "block_until_ready", "checkpoint", "remat", "checkpoint_policies", "named_call", "named_scope", "config",
    "devices", "device_put", "dynamic_slice", "dynamic_update_slice", "tree", "optim", "typing", "test_util",
    "random", "nn", "ops", "scipy", "sharding", "distributed", "debug", "lax", "tree_util", "linalg", "ArgumentError",
    "make_jaxpr", "Jaxpr", "linear_transpose", "custom_gradient", "typeof", "ensure_compile_time_eval", "device_get",
    "device_count", "local_device_count", "local_devices", "process_index", "process_count", "default_backend", "disable_jit",
}
_names = sorted(n for n in set(_qb.__all__) | _qb._SHADOWING if n not in _NOT_NUMPY and not n.endswith("Error"))
globals().update({n: getattr(_qb, n) for n in _names})
# jax.numpy names that are not (yet) package attributes: defined over `quabla.lax`, which
# imports the modules the package's NumPy functions come from.
from quabla._nextafter import nextafter, spacing  # noqa: E402

_names = sorted(set(_names) | {"nextafter", "spacing"})
__all__ = _names + ["linalg"]

# `import quabla.numpy.linalg` (as `import jax.numpy.linalg`): this module is not a package, so
# the submodule is registered under its dotted name.
_sys_modules = __import__("sys").modules
_sys_modules.setdefault(__name__ + ".linalg", linalg)
