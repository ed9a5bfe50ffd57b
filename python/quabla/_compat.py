"""The rest of JAX's top level that existing programs call: ``eval_shape``,
``block_until_ready``, ``ShapeDtypeStruct``, ``checkpoint``/``remat`` with
``checkpoint_policies``, ``named_call``, ``named_scope``, ``config``, ``make_jaxpr`` (the
traced Quabla program), ``linear_transpose``, ``custom_gradient``, ``typeof``,
``ensure_compile_time_eval``, ``device_get`` and the device and process counts.
"""

import contextlib
import functools
import types

import numpy as np

from . import _quabla as _q
from . import sharding as _sharding
from . import tree as _tree
from ._custom import custom_vjp
from ._ops import _to_array, zeros
from ._trace import Tracer
from ._transforms import vjp
from .errors import ArgumentTypeError, InvalidArgumentError, UnsupportedOperationError
from .jit import ShapeDtype, _prepare_leaves, _set_jit_disabled, _trace, jit

__all__ = [
    "eval_shape",
    "block_until_ready",
    "ShapeDtypeStruct",
    "checkpoint",
    "remat",
    "checkpoint_policies",
    "named_call",
    "named_scope",
    "config",
    "make_jaxpr",
    "Jaxpr",
    "linear_transpose",
    "custom_gradient",
    "typeof",
    "ensure_compile_time_eval",
    "device_get",
    "device_count",
    "local_device_count",
    "local_devices",
    "process_index",
    "process_count",
    "default_backend",
    "disable_jit",
    "enable_x64",
    "default_device",
    "host_count",
    "host_id",
    "host_ids",
    "NamedSharding",
    "P",
    "make_mesh",
]

NamedSharding = _sharding.NamedSharding
P = _sharding.PartitionSpec
make_mesh = _sharding.make_mesh

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


class Jaxpr:
    """What :func:`make_jaxpr` returns: the traced Quabla program of a call (JAX returns a
    ClosedJaxpr; Quabla's intermediate form is its ``quabla`` MLIR dialect, so ``str()`` is
    that module's text). ``in_avals``/``out_avals`` are the arguments' and results' shapes
    and dtypes as flat lists of :class:`ShapeDtypeStruct`; ``text`` the module;
    ``optimized`` the same program after the pass pipeline (transforms expanded)."""

    def __init__(self, lowered, in_avals, out_avals):
        self._lowered = lowered
        self.in_avals = in_avals
        self.out_avals = out_avals

    @property
    def text(self):
        return self._lowered.as_text()

    @property
    def optimized(self):
        return self._lowered.as_text(optimized=True)

    def __str__(self):
        return self.text

    def __repr__(self):
        return self.text

    def pretty_print(self, **kwargs):
        """The program's text (JAX's ``pretty_print`` options are accepted and ignored)."""
        del kwargs
        return self.text


def make_jaxpr(fun, static_argnums=(), axis_env=None, return_shape=False, abstracted_axes=None):
    """A function that traces ``fun`` on its arguments and returns the program, as
    ``jax.make_jaxpr``: the :class:`Jaxpr` of ``fun(*args, **kwargs)`` (with
    ``return_shape``, also the output's ShapeDtypeStruct pytree). The program is Quabla's own
    IR (the ``quabla`` MLIR dialect), not a jaxpr: read it, do not parse it as JAX's.
    ``axis_env`` and ``abstracted_axes`` (named axes, dynamic shapes) are not available.

    Example:
        >>> print(qb.make_jaxpr(lambda x: qb.sin(x) * 2.0)(qb.ones(3)).text.count("quabla.sin"))
        1
    """
    if not callable(fun):
        raise ArgumentTypeError(f"make_jaxpr: fun must be callable, got {type(fun).__name__}")
    if axis_env is not None or abstracted_axes is not None:
        raise UnsupportedOperationError("make_jaxpr: axis_env and abstracted_axes (named axes, dynamic shapes) are not available in Quabla", op="make_jaxpr")
    jitted = jit(fun, static_argnums=static_argnums)

    @functools.wraps(fun)
    def make(*args, **kwargs):
        statics = set(jitted._normalize_static(len(args))) if static_argnums else set()
        dyn = [a for i, a in enumerate(args) if i not in statics]
        in_avals = [_aval(x) for x in _tree.leaves((dyn, kwargs))]
        lowered = jitted.lower(*args, **kwargs)
        out = eval_shape(lambda *d: fun(*_merge(args, statics, d), **kwargs), *dyn)
        jp = Jaxpr(lowered, in_avals, _tree.leaves(out))
        return (jp, out) if return_shape else jp

    return make


def _merge(args, statics, dyn):
    it = iter(dyn)
    return tuple(a if i in statics else next(it) for i, a in enumerate(args))


def _aval(x):
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return _abstract(x)
    return ShapeDtype((), _to_array(x).dtype)


def typeof(x):
    """The shape and dtype of ``x`` (an array, tracer or Python number) as a
    :class:`ShapeDtypeStruct`, as ``jax.typeof`` gives its abstract value.

    Example:
        >>> qb.typeof(qb.ones((2, 3), qb.float32))
        ShapeDtype((2, 3), float32)
    """
    if type(x) is Tracer or isinstance(x, _q.Tensor):
        return ShapeDtype(tuple(x.shape), x.dtype)
    return _aval(x)


def linear_transpose(fun, *primals, reduce_axes=()):
    """The transpose of the linear function ``fun`` at the shapes and dtypes of ``primals``
    (arrays or ShapeDtypeStructs), as ``jax.linear_transpose``: the returned function maps a
    cotangent of ``fun``'s output to a tuple with one cotangent per primal. ``fun`` must be
    linear in its arguments (JAX checks it while tracing; Quabla does not: for a function
    that is not linear the result is its VJP at zero).

    Example:
        >>> t = qb.linear_transpose(lambda x: 2.0 * x[::-1], qb.ShapeDtype((3,), qb.float64))
        >>> t(qb.array([1.0, 2.0, 3.0]))[0].tolist()
        [6.0, 4.0, 2.0]
    """
    if not callable(fun):
        raise ArgumentTypeError(f"linear_transpose: fun must be callable, got {type(fun).__name__}")
    if reduce_axes:
        raise UnsupportedOperationError("linear_transpose: reduce_axes is not available (named axes)", op="linear_transpose")
    leaves, tree = _tree.flatten(primals)
    points = []
    for x in leaves:
        a = _abstract(x)
        if type(a) is not ShapeDtype and type(a) is not Tracer:
            a = ShapeDtype((), _to_array(a).dtype)
        dt = a.dtype
        if not dt.is_float:
            raise UnsupportedOperationError(f"linear_transpose: primal of dtype {dt.name} (only floating-point arguments have cotangents)", op="linear_transpose")
        points.append(zeros(tuple(a.shape), dt))
    at = _tree.unflatten(tree, points)

    def transposed(ct):
        _, f_vjp = vjp(fun, *at)
        return f_vjp(ct)

    return transposed


def custom_gradient(fun):
    """A function with a custom gradient, as ``jax.custom_gradient``: ``fun(*args)`` returns
    ``(value, vjp_fn)`` and ``vjp_fn(cotangent)`` gives the cotangent of each argument.
    Built on :class:`custom_vjp` (reverse mode; ``jvp`` raises as for any custom_vjp
    function). Departure: ``vjp_fn`` may close over the forward pass's values, which do not
    cross from the forward pass into the backward program, so the backward pass calls
    ``fun`` again (recomputing its forward values) and applies the ``vjp_fn`` of that call.

    Example:
        >>> @qb.custom_gradient
        ... def f(x):
        ...     return qb.sin(x), lambda g: (2.0 * g,)
        >>> qb.grad(f)(qb.array(0.3)).item()
        2.0
    """
    if not callable(fun):
        raise ArgumentTypeError(f"custom_gradient: fun must be callable, got {type(fun).__name__}")

    def split(out):
        if not (isinstance(out, (tuple, list)) and len(out) == 2 and callable(out[1])):
            raise ArgumentTypeError(f"custom_gradient {getattr(fun, '__name__', 'fun')}: the function must return a pair (value, vjp_fn)")
        return out

    @custom_vjp
    def wrapped(*args):
        return split(fun(*args))[0]

    def fwd(*args):
        return split(fun(*args))[0], args

    def bwd(args, g):
        cts = split(fun(*args))[1](g)
        if not isinstance(cts, (tuple, list)):
            cts = (cts,)
        return tuple(cts)

    wrapped.defvjp(fwd, bwd)
    functools.update_wrapper(wrapped, fun)
    return wrapped


@contextlib.contextmanager
def ensure_compile_time_eval():
    """A context manager accepted for ``jax.ensure_compile_time_eval``: inside a traced
    function Quabla already computes every operation whose inputs are all concrete (not
    traced) eagerly, at trace time, so there is nothing to switch on.

    Example:
        >>> with qb.ensure_compile_time_eval():
        ...     y = qb.ones(2) * 2
    """
    yield


def device_get(x):
    """``x`` (a pytree) with every array leaf as a NumPy array, as ``jax.device_get``;
    other leaves are returned as they are.

    Example:
        >>> qb.device_get({"w": qb.ones(2)})["w"].tolist()
        [1.0, 1.0]
    """

    def get(v):
        if type(v) is Tracer:
            raise ArgumentTypeError("device_get: a traced value has no contents yet (call it outside jit)")
        if isinstance(v, _q.Tensor):
            return np.asarray(v)
        return v

    return _tree.map(get, x)


def _xla_or_local(name, fn, default, backend=None):
    """``fn()`` on the XLA runtime when jax is installed (``qb.distributed`` runs there),
    ``default`` otherwise (one CPU, one process)."""
    if backend is not None and not isinstance(backend, str):
        raise ArgumentTypeError(f"{name}: backend must be a platform name such as 'cpu' or None, got a {type(backend).__name__}")
    if not _sharding.available():
        if backend not in (None, "cpu", "xla"):
            raise UnsupportedOperationError(f"{name}: no {backend!r} devices (jax is not installed; Quabla's own executor is 'cpu')", op=name)
        return default
    try:
        return fn()
    except RuntimeError as e:
        raise UnsupportedOperationError(f"{name}: {e}", op=name) from None
    except ValueError as e:
        raise InvalidArgumentError(f"{name}: {e}") from None


def device_count(backend=None):
    """The number of devices (``jax.device_count``): XLA's count when jax is installed (the
    devices ``qb.distributed`` and ``qb.sharding`` run on), else 1 (this machine's CPU).

    Example:
        >>> qb.device_count() >= 1
        True
    """
    return _xla_or_local("device_count", lambda: _sharding.device_count(backend or "xla"), 1, backend)


def local_devices(process_index=None, backend=None):
    """This process's devices (``jax.local_devices``): XLA's devices when jax is installed,
    else ``["cpu"]``."""
    if process_index is not None and (not isinstance(process_index, int) or isinstance(process_index, bool)):
        raise ArgumentTypeError(f"local_devices: process_index must be an int or None, got a {type(process_index).__name__}")
    return _xla_or_local("local_devices", lambda: list(_sharding._jax().local_devices(process_index, backend)), ["cpu"], backend)


def local_device_count(backend=None):
    """The number of this process's devices (``jax.local_device_count``).

    Example:
        >>> qb.local_device_count() >= 1
        True
    """
    return len(local_devices(backend=backend))


def process_index(backend=None):
    """This process's index (0 unless ``qb.distributed.initialize`` started several).

    Example:
        >>> qb.process_index()
        0
    """
    del backend
    return _xla_or_local("process_index", _sharding.process_index, 0)


def process_count(backend=None):
    """The number of processes (1 unless ``qb.distributed.initialize`` started several).

    Example:
        >>> qb.process_count()
        1
    """
    del backend
    return _xla_or_local("process_count", _sharding.process_count, 1)


def default_backend():
    """``"cpu"``: the platform Quabla's default executor compiles for (``jax.default_backend``).

    Example:
        >>> qb.default_backend()
        'cpu'
    """
    return "cpu"


@contextlib.contextmanager
def disable_jit(disable=True):
    """A context manager in which jitted functions run their Python op by op instead of
    their compiled programs, as ``jax.disable_jit`` (to print or step through values while
    debugging). The transforms (``grad``, ``vmap``, ...) still trace and compile: they
    transform programs. Departure: the setting is process-wide, not per thread.

    Example:
        >>> f = qb.jit(lambda x: print(type(x).__name__) or x * 2)
        >>> with qb.disable_jit():
        ...     y = f(qb.ones(2))
        Tensor
    """
    prev = _set_jit_disabled(bool(disable))
    try:
        yield
    finally:
        _set_jit_disabled(prev)


@contextlib.contextmanager
def enable_x64(new_val=True):
    """``jax.enable_x64`` as a context manager: Quabla always types numbers as JAX with x64,
    so ``True`` changes nothing and ``False`` raises UnsupportedOperationError.

    Example:
        >>> with qb.enable_x64():
        ...     print(qb.array(1.5).dtype)
        float64
    """
    if not new_val:
        raise UnsupportedOperationError("enable_x64(False) is not available: Quabla types Python numbers as JAX with x64 (cast arrays to float32 explicitly)", op="enable_x64")
    yield


@contextlib.contextmanager
def default_device(device):
    """``jax.default_device`` as a context manager: eager ops and programs without a
    ``device=`` run on the host CPU in Quabla, so ``None`` or the CPU (``"cpu"``, a
    ``qb.devices()`` entry naming it) is accepted and anything else raises
    UnsupportedOperationError (choose a device with ``qb.jit(device=...)`` or
    ``qb.device_put``).

    Example:
        >>> with qb.default_device("cpu"):
        ...     print((qb.ones(2) * 2).tolist())
        [2.0, 2.0]
    """
    name = getattr(device, "platform", device)
    if name not in (None, "cpu"):
        raise UnsupportedOperationError(f"default_device({device!r}): only the host CPU is the default device in Quabla; use qb.jit(device=...) or qb.device_put for others", op="default_device")
    yield


def host_count(backend=None):
    """The number of processes (``jax.host_count``, JAX's older name of ``process_count``).

    Example:
        >>> qb.host_count()
        1
    """
    return process_count(backend)


def host_id(backend=None):
    """This process's index (``jax.host_id``, JAX's older name of ``process_index``).

    Example:
        >>> qb.host_id()
        0
    """
    return process_index(backend)


def host_ids(backend=None):
    """The indices of all processes (``jax.host_ids``).

    Example:
        >>> qb.host_ids()
        [0]
    """
    return list(range(process_count(backend)))
