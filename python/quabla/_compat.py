"""The rest of JAX's top level that existing programs call: ``eval_shape``,
``block_until_ready``, ``ShapeDtypeStruct``, ``checkpoint``/``remat`` with
``checkpoint_policies``, ``named_call``, ``named_scope`` and ``config``.
"""

import contextlib
import functools
import types

import numpy as np

from . import tree as _tree
from ._trace import Tracer
from .errors import ArgumentTypeError, UnsupportedOperationError
from .jit import ShapeDtype, _prepare_leaves, _trace

__all__ = ["eval_shape", "block_until_ready", "ShapeDtypeStruct", "checkpoint", "remat", "checkpoint_policies", "named_call", "named_scope", "config"]

ShapeDtypeStruct = ShapeDtype


def _abstract(x):
    """A leaf as something ``_trace`` takes: objects with ``shape`` and ``dtype`` (a
    ShapeDtype, a Tensor, a NumPy array, jax's ShapeDtypeStruct) become ShapeDtypes."""
    if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
        return x
    if type(x) is ShapeDtype or type(x) is Tracer:
        return x
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return ShapeDtype(x.shape, str(np.dtype(x.dtype)) if not hasattr(x.dtype, "mlir") else x.dtype)
    return x


def eval_shape(fun, *args, **kwargs):
    """The shapes and dtypes of ``fun(*args, **kwargs)`` as a pytree of ShapeDtypes, found
    by tracing without computing (as ``jax.eval_shape``). Leaves with ``shape`` and ``dtype``
    (arrays, ShapeDtypes) are abstract; Python numbers are passed as they are.

    Example:
        >>> qb.eval_shape(lambda x: (x @ x.T).sum(0), qb.ShapeDtype((3, 5), qb.float32))
        ShapeDtype((3,), float32)
    """
    if not callable(fun):
        raise ArgumentTypeError(f"eval_shape: fun must be callable, got {type(fun).__name__}")
    leaves, tree = _tree.flatten((args, kwargs))
    name = getattr(fun, "__name__", "fun")
    leaves = _prepare_leaves(name, [_abstract(x) for x in leaves])
    outs, out_tree = _trace(lambda *a, **k: fun(*a, **k), tree, leaves, (), (), len(args), shapes_only=True)
    return _tree.unflatten(out_tree, outs)


def block_until_ready(x):
    """``x`` (a pytree of arrays), once computed: Quabla's executors return finished results,
    so this is the identity, kept for programs that time with ``jax.block_until_ready``.

    Example:
        >>> qb.block_until_ready(qb.ones(2)).tolist()
        [1.0, 1.0]
    """
    return x


def _policy(name, doc):
    def policy(*_args, **_kwargs):
        return name

    policy.__name__ = policy.__qualname__ = name
    policy.__doc__ = doc
    return policy


checkpoint_policies = types.SimpleNamespace(
    **{
        n: _policy(n, f"jax.checkpoint_policies.{n}, accepted by qb.checkpoint (which saves every residual).")
        for n in ("everything_saveable", "nothing_saveable", "dots_saveable", "checkpoint_dots", "dots_with_no_batch_dims_saveable",
                  "checkpoint_dots_with_no_batch_dims", "offload_dot_with_no_batch_dims", "save_anything_except_these_names",
                  "save_any_names_but_these", "save_only_these_names", "save_from_both_policies", "save_and_offload_only_these_names")
    }
)


def checkpoint(fun=None, *, prevent_cse=True, policy=None, static_argnums=()):
    """``jax.checkpoint`` (``jax.remat``): returns ``fun`` with the same values and
    derivatives. Quabla's autodiff keeps every residual of the forward pass (no
    rematerialisation yet), so the memory a gradient uses is that of the undecorated
    function; ``prevent_cse``, ``policy`` (``qb.checkpoint_policies``) and ``static_argnums``
    are accepted. Usable as a decorator with or without arguments.

    Example:
        >>> f = qb.checkpoint(lambda x: qb.sin(x) * x)
        >>> round(qb.grad(f)(qb.array(1.0)).item(), 6)
        1.381773
    """
    del prevent_cse, policy, static_argnums
    if fun is None:
        return checkpoint
    if not callable(fun):
        raise ArgumentTypeError(f"checkpoint: expected a function, got {type(fun).__name__}")
    return functools.wraps(fun)(lambda *a, **k: fun(*a, **k))


remat = checkpoint


def named_call(fun, *, name=None):
    """``fun`` itself (``jax.named_call`` names a function in profiles; Quabla's IR keeps
    Python's structure only through ``jit``).

    Example:
        >>> qb.named_call(qb.sin, name="s")(qb.array(0.0)).item()
        0.0
    """
    del name
    return fun


@contextlib.contextmanager
def named_scope(name):
    """A context manager that does nothing but accept ``jax.named_scope``'s ``name``.

    Example:
        >>> with qb.named_scope("block"):
        ...     y = qb.ones(1)
    """
    if not isinstance(name, str):
        raise ArgumentTypeError(f"named_scope: name must be a string, got {type(name).__name__}")
    yield


class _Config:
    """``qb.config``: ``jax.config``'s ``update`` for the flags whose meaning Quabla has
    (``jax_enable_x64`` is always on: Python floats are float64 unless an array says
    otherwise, as JAX with x64; ``jax_platforms``/``jax_platform_name`` accept ``"cpu"``).
    Other flags raise UnsupportedOperationError rather than being ignored."""

    _FIXED = {"jax_enable_x64": True, "jax_platforms": "cpu", "jax_platform_name": "cpu", "jax_default_matmul_precision": None}

    def update(self, name, value):
        """Sets flag ``name`` to ``value`` where Quabla has that setting.

        Example:
            >>> qb.config.update("jax_enable_x64", True)
        """
        if name == "jax_enable_x64":
            if not value:
                raise UnsupportedOperationError("config.update: jax_enable_x64=False is not available; Quabla types Python numbers as JAX with x64 (cast arrays to float32 explicitly)", op="config")
            return
        if name in ("jax_platforms", "jax_platform_name"):
            if value not in ("cpu", None, ""):
                raise UnsupportedOperationError(f"config.update: {name}={value!r}; choose devices with qb.jit(device=...) instead", op="config")
            return
        if name == "jax_default_matmul_precision":
            return
        raise UnsupportedOperationError(f"config.update: {name!r} is not a setting Quabla has", op="config")

    def __getattr__(self, name):
        if name in _Config._FIXED:
            return _Config._FIXED[name]
        raise AttributeError(name)


config = _Config()
