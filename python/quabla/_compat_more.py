"""More of JAX's top level that existing programs call: ``clear_caches``, the configuration
context managers (``log_compiles``, ``explain_cache_misses``, ``no_tracing``,
``check_tracer_leaks``/``checking_leaks``, ``default_matmul_precision``,
``numpy_dtype_promotion``, ``numpy_rank_promotion``, the transfer guards, ``debug_nans``,
``debug_infs``, ``enable_checks``), ``float0``, ``closure_convert``,
``print_environment_info``, ``version`` and ``make_array_from_callback``.

The configuration context managers are process-wide in Quabla (JAX's are thread-local), as
``qb.disable_jit``. A setting whose effect Quabla cannot give raises
UnsupportedOperationError when it is switched on instead of being ignored.
"""

import functools
import gc
import importlib
import importlib.metadata
import platform
import sys
import types
import weakref

import numpy as np

from . import _compat
from . import _ops as _o
from . import _quabla as _q
from . import dtypes as _dt
from . import image as _image
from . import sharding as _sharding
from . import tree as _tree
from ._trace import Trace, Tracer, user_loc
from ._trace import current as _current
from .errors import (
    ArgumentTypeError,
    DTypeError,
    InvalidArgumentError,
    QuablaError,
    ShapeError,
    UnexpectedTracerError,
    UnsupportedOperationError,
)
from ._xla import XlaJitted

_jit = importlib.import_module(".jit", __package__)  # the module (the package attribute `jit` is the function)

__all__ = [
    "clear_caches",
    "default_matmul_precision",
    "numpy_dtype_promotion",
    "numpy_rank_promotion",
    "transfer_guard",
    "transfer_guard_host_to_device",
    "transfer_guard_device_to_host",
    "transfer_guard_device_to_device",
    "log_compiles",
    "explain_cache_misses",
    "debug_nans",
    "debug_infs",
    "check_tracer_leaks",
    "checking_leaks",
    "enable_checks",
    "no_tracing",
    "float0",
    "closure_convert",
    "print_environment_info",
    "version",
    "make_array_from_callback",
    "live_arrays",
]


class NoTracingError(QuablaError, RuntimeError):
    """A jitted function had to trace while ``qb.no_tracing()`` was on (JAX raises a
    RuntimeError there; this is one)."""


# ---------------------------------------------------------------------------------------------
# clear_caches


def clear_caches():
    """Drops every compiled program Quabla's Python side caches, as ``jax.clear_caches``: the
    traced signatures of every live ``qb.jit`` function (the ``device="xla"`` ones too, and
    those ``qb.grad``/``qb.vmap``/... compile through ``jit``), with their compiled code, and
    ``qb.image``'s resize-weight cache; then returns freed heap pages to the OS. The next
    call of each function traces and compiles again. Not cleared: the extension's cache of
    eager per-op executables (bounded by ``QUABLA_EAGER_CACHE_SIZE``, default 256, least
    recently used first), which has no clear call.

    Returns:
        None.

    Example:
        >>> f = qb.jit(lambda x: x + 1)
        >>> _ = f(qb.ones(2))
        >>> qb.clear_caches()
        >>> f._cache_size
        0
    """
    classes = (_jit.Jitted, XlaJitted)
    for obj in gc.get_objects():
        if isinstance(obj, classes):
            obj.clear_cache()
    _image._cached_weights.cache_clear()
    _q.release_memory()


# ---------------------------------------------------------------------------------------------
# Configuration context managers

_NO_DEFAULT = object()

# The current value of each setting (process-wide). log_compiles and explain_cache_misses
# live in jit.py's module flags instead (`_LOG`, `_EXPLAIN`).
_VALUES = {
    "jax_default_matmul_precision": None,
    "jax_numpy_dtype_promotion": "standard",
    "jax_numpy_rank_promotion": "allow",
    "jax_transfer_guard_host_to_device": None,
    "jax_transfer_guard_device_to_host": None,
    "jax_transfer_guard_device_to_device": None,
    "jax_debug_nans": False,
    "jax_debug_infs": False,
    "jax_check_tracer_leaks": False,
    "jax_enable_checks": False,
    "jax_no_tracing": False,
}


class _Setting:
    """One of JAX's configuration options as a context-manager factory, as JAX's config
    states: ``setting(new_val)`` is a context manager (and a decorator) that sets the option
    inside it and restores it after; ``setting.value`` reads the current value."""

    def __init__(self, name, parse, get, put, default_cm=_NO_DEFAULT, doc=None):
        self._name = name
        self._parse = parse
        self._get = get
        self._put = put
        self._default_cm = default_cm
        self.__name__ = name[4:]
        self.__qualname__ = name[4:]
        self.__doc__ = doc

    @property
    def value(self):
        """The option's current value."""
        return self._get()

    def __call__(self, new_val=_NO_DEFAULT):
        if new_val is _NO_DEFAULT:
            if self._default_cm is _NO_DEFAULT:
                raise ArgumentTypeError(f"{self.__name__}: the context manager needs the option's new value as its argument")
            new_val = self._default_cm
        return _SettingContext(self, self._parse(new_val))

    def __repr__(self):
        return f"<quabla setting {self.__name__}={self.value!r}>"


class _SettingContext:
    """``with setting(value):`` (or ``@setting(value)`` on a function)."""

    __slots__ = ("setting", "new_val", "prev")

    def __init__(self, setting, new_val):
        self.setting = setting
        self.new_val = new_val
        self.prev = _NO_DEFAULT

    def __enter__(self):
        self.prev = self.setting._get()
        self.setting._put(self.new_val)
        return None

    def __exit__(self, *exc):
        self.setting._put(self.prev)
        return False

    def __call__(self, func):
        if not callable(func):
            raise ArgumentTypeError(f"{self.setting.__name__}({self.new_val!r}): as a decorator it takes a function, got {type(func).__name__}")

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with _SettingContext(self.setting, self.new_val):
                return func(*args, **kwargs)

        return wrapper


def _stored(name):
    def get():
        return _VALUES[name]

    def put(v):
        _VALUES[name] = v

    return get, put


def _bool_parser(fname, unsupported_true=None):
    """JAX's bool options take any value and use its truth; Quabla takes bools, integers and
    None (False), and refuses strings (``"false"`` would be true)."""

    def parse(v):
        if v is None:
            return False
        if not isinstance(v, (bool, int, np.bool_, np.integer)):
            raise ArgumentTypeError(f"{fname}: the new value must be a bool, got a {type(v).__name__} {v!r}")
        v = bool(v)
        if v and unsupported_true:
            raise UnsupportedOperationError(f"{fname}(True): {unsupported_true}", op=fname)
        return v

    return parse


def _enum_parser(fname, values, optional=False, unsupported=None):
    """Parses one of ``values`` (or None where ``optional``); ``unsupported`` maps values
    Quabla cannot honour to the reason."""

    def parse(v):
        if v is None and optional:
            return None
        if not isinstance(v, str) or v not in values:
            raise InvalidArgumentError(f"{fname}: the new value must be {'None or ' if optional else ''}one of {list(values)}, got {v!r}")
        v = str(v)
        if unsupported and v in unsupported:
            raise UnsupportedOperationError(f"{fname}({v!r}): {unsupported[v]}", op=fname)
        return v

    return parse


def _jit_flag(attr):
    def get():
        return getattr(_jit, attr)

    def put(v):
        setattr(_jit, attr, bool(v))

    return get, put


def _hooked(name):
    """get/put of a setting whose effect is the trace hook (``no_tracing``, leak checks)."""
    get, put = _stored(name)

    def put_and_sync(v):
        put(v)
        _sync_trace_hook()

    return get, put_and_sync


_MATMUL_PRECISIONS = (
    "default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
    "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY", "ANY_F8_ANY_F8_ANY_FAST_ACCUM",
    "F16_F16_F16", "F16_F16_F32", "BF16_BF16_BF16", "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6",
    "BF16_BF16_F32_X9", "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32", "F64_F64_F64",
)  # fmt: skip
_GUARD_LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")

default_matmul_precision = _Setting(
    "jax_default_matmul_precision",
    _enum_parser("default_matmul_precision", _MATMUL_PRECISIONS, optional=True),
    *_stored("jax_default_matmul_precision"),
    doc="""``jax.default_matmul_precision(new_val)``: a context manager (or decorator) setting the
    default precision of matrix products and convolutions. Accepts JAX's values (None,
    ``"default"``, ``"high"``, ``"highest"``, ``"bfloat16"``, ``"tensorfloat32"``,
    ``"float32"`` and the dot-algorithm preset names); others raise InvalidArgumentError.
    Quabla always multiplies in the operands' own precision (float32 products accumulate in
    float32, float64 in float64; no reduced-precision passes), so the value is recorded
    (``.value``) and changes no result.

    Args:
        new_val: the precision name, or None.

    Returns:
        A context manager.

    Example:
        >>> with qb.default_matmul_precision("highest"):
        ...     print((qb.ones((2, 2)) @ qb.ones((2, 2))).tolist())
        [[2.0, 2.0], [2.0, 2.0]]
    """,
)

numpy_dtype_promotion = _Setting(
    "jax_numpy_dtype_promotion",
    _enum_parser("numpy_dtype_promotion", ("standard", "strict"), unsupported={
        "strict": "Quabla has only its standard promotion (JAX's with x64): strict promotion, which refuses mixing "
                  "array dtypes, cannot be enforced (cast operands explicitly with astype)"}),
    *_stored("jax_numpy_dtype_promotion"),
    doc="""``jax.numpy_dtype_promotion(new_val)``: a context manager (or decorator) choosing the
    type promotion rules. ``"standard"`` (Quabla's rules, JAX's with x64) is accepted;
    ``"strict"`` raises UnsupportedOperationError (it cannot be enforced); other values raise
    InvalidArgumentError.

    Args:
        new_val: ``"standard"`` or ``"strict"``.

    Returns:
        A context manager.

    Example:
        >>> with qb.numpy_dtype_promotion("standard"):
        ...     print((qb.ones(2, qb.float32) + 1.0).dtype)
        float32
    """,
)

numpy_rank_promotion = _Setting(
    "jax_numpy_rank_promotion",
    _enum_parser("numpy_rank_promotion", ("allow", "warn", "raise"), unsupported={
        "warn": "Quabla broadcasts operands of different ranks as NumPy does and has no hook to warn about it",
        "raise": "Quabla broadcasts operands of different ranks as NumPy does and has no hook to refuse it"}),
    *_stored("jax_numpy_rank_promotion"),
    doc="""``jax.numpy_rank_promotion(new_val)``: a context manager (or decorator) choosing what
    implicit rank promotion (broadcasting ``(3,)`` against ``(2, 3)``) does. ``"allow"``
    (Quabla's behaviour, NumPy's) is accepted; ``"warn"`` and ``"raise"`` raise
    UnsupportedOperationError (Quabla cannot check it); other values raise
    InvalidArgumentError.

    Args:
        new_val: ``"allow"``, ``"warn"`` or ``"raise"``.

    Returns:
        A context manager.

    Example:
        >>> with qb.numpy_rank_promotion("allow"):
        ...     print((qb.ones((2, 3)) + qb.ones(3)).shape)
        (2, 3)
    """,
)


def _guard_doc(direction):
    return f"""``jax.transfer_guard_{direction}(new_val)``: a context manager (or decorator) setting
    the guard level of {direction.replace('_', '-')} transfers: None or one of ``"allow"``,
    ``"log"``, ``"disallow"``, ``"log_explicit"``, ``"disallow_explicit"`` (others raise
    InvalidArgumentError). Departure: the level is recorded (``.value``) but Quabla neither
    logs nor blocks transfers. Its arrays live in host memory; Python numbers and NumPy arrays
    become arrays by a host copy, which JAX counts as an (implicit) host-to-device transfer
    even on its CPU backend and Quabla does not; explicit moves (``qb.device_put``,
    ``qb.jit(device=...)``) are not checked either.

    Args:
        new_val: the guard level, or None (the default, ``"allow"``).

    Returns:
        A context manager.

    Example:
        >>> with qb.transfer_guard_{direction}("disallow"):
        ...     print((qb.ones(2) * 2).tolist())
        [2.0, 2.0]
    """


transfer_guard_host_to_device = _Setting(
    "jax_transfer_guard_host_to_device", _enum_parser("transfer_guard_host_to_device", _GUARD_LEVELS, optional=True),
    *_stored("jax_transfer_guard_host_to_device"), doc=_guard_doc("host_to_device"))
transfer_guard_device_to_host = _Setting(
    "jax_transfer_guard_device_to_host", _enum_parser("transfer_guard_device_to_host", _GUARD_LEVELS, optional=True),
    *_stored("jax_transfer_guard_device_to_host"), doc=_guard_doc("device_to_host"))
transfer_guard_device_to_device = _Setting(
    "jax_transfer_guard_device_to_device", _enum_parser("transfer_guard_device_to_device", _GUARD_LEVELS, optional=True),
    *_stored("jax_transfer_guard_device_to_device"), doc=_guard_doc("device_to_device"))


class _TransferGuard:
    """``with transfer_guard(level):``: the three directions' guards together."""

    __slots__ = ("new_val", "ctxs")

    def __init__(self, new_val):
        self.new_val = new_val
        self.ctxs = [s(new_val) for s in (transfer_guard_host_to_device, transfer_guard_device_to_device, transfer_guard_device_to_host)]

    def __enter__(self):
        done = []
        try:
            for c in self.ctxs:
                c.__enter__()
                done.append(c)
        except BaseException:
            for c in reversed(done):
                c.__exit__(None, None, None)
            raise
        return None

    def __exit__(self, *exc):
        for c in reversed(self.ctxs):
            c.__exit__(*exc)
        return False

    def __call__(self, func):
        if not callable(func):
            raise ArgumentTypeError(f"transfer_guard: as a decorator it takes a function, got {type(func).__name__}")

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with _TransferGuard(self.new_val):
                return func(*args, **kwargs)

        return wrapper


def transfer_guard(new_val):
    """``jax.transfer_guard(new_val)``: a context manager (or decorator) setting the guard level
    of all transfers (host-to-device, device-to-device, device-to-host) at once; see
    ``qb.transfer_guard_host_to_device`` for the levels and Quabla's departure (the levels
    are recorded, transfers are neither logged nor blocked).

    Args:
        new_val: ``"allow"``, ``"log"``, ``"disallow"``, ``"log_explicit"``,
            ``"disallow_explicit"`` or None.

    Returns:
        A context manager.

    Example:
        >>> with qb.transfer_guard("allow"):
        ...     print(qb.transfer_guard_device_to_host.value)
        allow
    """
    return _TransferGuard(new_val)


log_compiles = _Setting(
    "jax_log_compiles", _bool_parser("log_compiles"), *_jit_flag("_LOG"), default_cm=True,
    doc="""``jax.log_compiles(enable=True)``: a context manager (or decorator) in which each
    compilation of a ``qb.jit`` signature prints a line naming the function and the argument
    types (and evictions from its trace cache), as ``QUABLA_LOG_COMPILES=1`` does.
    Departure: the lines go to stderr, not through Python's ``logging`` as JAX's.

    Args:
        new_val: True (the default) to log, False not to.

    Returns:
        A context manager.

    Example:
        >>> with qb.log_compiles(False):
        ...     print(qb.jit(lambda x: x + 1)(qb.ones(1)).tolist())
        [2.0]
    """,
)

explain_cache_misses = _Setting(
    "jax_explain_cache_misses", _bool_parser("explain_cache_misses"), *_jit_flag("_EXPLAIN"), default_cm=True,
    doc="""``jax.explain_cache_misses(enable=True)``: a context manager (or decorator) in which
    each trace of a ``qb.jit`` function prints why the call missed its cache (what differs
    from the closest earlier signature), as ``QUABLA_EXPLAIN_CACHE_MISSES=1``. Departure: the
    lines go to stderr, not through Python's ``logging``.

    Args:
        new_val: True (the default) to explain, False not to.

    Returns:
        A context manager.

    Example:
        >>> with qb.explain_cache_misses(False):
        ...     print(qb.jit(lambda x: x * 2)(qb.ones(1)).tolist())
        [2.0]
    """,
)

debug_nans = _Setting(
    "jax_debug_nans",
    _bool_parser("debug_nans", "checking every operation's results for NaN (and rerunning jitted functions op by op "
                               "to find the first one) is not available in Quabla; check results with qb.isnan, or use "
                               "qb.experimental.checkify"),
    *_stored("jax_debug_nans"), default_cm=True,
    doc="""``jax.debug_nans(enable=True)``: JAX checks every result for NaN inside it. Quabla
    cannot: ``debug_nans(True)`` raises UnsupportedOperationError; ``debug_nans(False)`` (the
    default state) is accepted.

    Args:
        new_val: True (the default) or False.

    Returns:
        A context manager.

    Example:
        >>> with qb.debug_nans(False):
        ...     y = qb.ones(1)
    """,
)

debug_infs = _Setting(
    "jax_debug_infs",
    _bool_parser("debug_infs", "checking every operation's results for infinities is not available in Quabla; check "
                               "results with qb.isinf, or use qb.experimental.checkify"),
    *_stored("jax_debug_infs"), default_cm=True,
    doc="""``jax.debug_infs(enable=True)``: JAX checks every result for infinities inside it.
    Quabla cannot: ``debug_infs(True)`` raises UnsupportedOperationError; ``debug_infs(False)``
    is accepted.

    Args:
        new_val: True (the default) or False.

    Returns:
        A context manager.

    Example:
        >>> with qb.debug_infs(False):
        ...     y = qb.ones(1)
    """,
)

check_tracer_leaks = _Setting(
    "jax_check_tracer_leaks", _bool_parser("check_tracer_leaks"), *_hooked("jax_check_tracer_leaks"), default_cm=True,
    doc="""``jax.check_tracer_leaks(enable=True)``: a context manager (or decorator) in which every
    trace that ``qb.jit`` (and the transforms compiled through it, and ``qb.eval_shape``)
    runs is checked for leaked tracers when it ends: a tracer of that trace (or of a trace
    nested in it) still referenced afterwards, e.g. stored in a global list, raises
    ``qb.errors.UnexpectedTracerError`` naming it. The check runs the garbage collector after
    each trace, so tracing is slower inside. Departure: JAX checks its ``jit``, ``vmap`` and
    loop traces but not ``grad``'s; Quabla checks whatever it traces at the top level (an
    eager ``qb.grad(f)(x)`` too), and without the setting a leaked tracer raises only when
    used.

    Args:
        new_val: True (the default) or False.

    Returns:
        A context manager.

    Example:
        >>> with qb.check_tracer_leaks():
        ...     print(qb.jit(lambda x: x * 3)(qb.ones(1)).tolist())
        [3.0]
    """,
)


def checking_leaks():
    """``jax.checking_leaks()``: ``qb.check_tracer_leaks(True)``.

    Returns:
        A context manager.

    Example:
        >>> with qb.checking_leaks():
        ...     print(qb.check_tracer_leaks.value)
        True
    """
    return check_tracer_leaks(True)


enable_checks = _Setting(
    "jax_enable_checks", _bool_parser("enable_checks"), *_stored("jax_enable_checks"), default_cm=True,
    doc="""``jax.enable_checks(enable=True)``: JAX's switch for checking its internals'
    invariants (its jaxprs' types) as it goes. Quabla checks every traced op against its
    shape and dtype rules always, so there is nothing more to switch on: the value is
    recorded (``.value``) and changes nothing.

    Args:
        new_val: True (the default) or False.

    Returns:
        A context manager.

    Example:
        >>> with qb.enable_checks():
        ...     print(qb.enable_checks.value)
        True
    """,
)

no_tracing = _Setting(
    "jax_no_tracing", _bool_parser("no_tracing"), *_hooked("jax_no_tracing"), default_cm=True,
    doc="""``jax.no_tracing(enable=True)``: a context manager (or decorator) inside which a call
    that would trace raises instead (to check that a loop reuses compiled programs): a
    ``qb.jit`` call of a new signature, ``.lower()``, an eager transform (``qb.grad(f)(x)``
    compiles through ``jit``) or ``qb.eval_shape`` raise ``NoTracingError`` (a
    RuntimeError, as JAX's). Calls served from the cache run. Departure: JAX also stages its
    eager ``jax.numpy`` operations through ``jit``, so a first eager ``jnp.sin`` of a new
    shape raises there; Quabla's eager operations (and its eager ``lax`` loops and conditionals,
    which run op by op) do not trace and run.

    Args:
        new_val: True (the default) or False.

    Returns:
        A context manager.

    Example:
        >>> f = qb.jit(lambda x: x + 1)
        >>> _ = f(qb.ones(2))
        >>> with qb.no_tracing():
        ...     print(f(qb.ones(2)).tolist())
        [2.0, 2.0]
    """,
)


# The trace hook behind no_tracing and check_tracer_leaks: jit.py's `_trace` (every trace
# qb.jit, the transforms compiled through it, run_concrete and the xla executor make) and
# the copy _compat imported for eval_shape/make_jaxpr are replaced while either is on.
_ORIGINAL_TRACE = _jit._trace


def _guarded_trace(fun, *args, **kwargs):
    name = _jit._name(fun)
    if _VALUES["jax_no_tracing"]:
        raise NoTracingError(f"re-tracing function {name} for jit, but no_tracing is set (a call that was not served from the trace cache)")
    if not _VALUES["jax_check_tracer_leaks"]:
        return _ORIGINAL_TRACE(fun, *args, **kwargs)
    seen = []

    def spy(*a, **k):
        t = _current()
        if t is not None and not seen:
            seen.append(weakref.ref(t))
        return fun(*a, **k)

    spy.__name__ = name
    out = _ORIGINAL_TRACE(spy, *args, **kwargs)
    if seen:
        _check_leaks(seen[0], name)
    return out


def _within(trace, root):
    while trace is not None:
        if trace is root:
            return True
        trace = trace.parent
    return False


def _check_leaks(ref, name):
    if ref() is None:
        return
    gc.collect()
    root = ref()
    if root is None:
        return
    found = [o for o in gc.get_objects() if type(o) is Tracer and _within(o._trace, root)]
    del root
    # A leaked tracer keeps its trace alive, and with it the tracers the trace itself holds
    # (its constants, its captures and their sources): those are not leaks of their own.
    held = set()
    for tr in {id(o._trace): o._trace for o in found}.values():
        held.update(id(c[1]) for c in tr._consts.values())
        held.update(id(c) for c in tr._caps.values())
        held.update(id(c) for c in tr.cap_sources)
    leaked = [o for o in found if id(o) not in held]
    del found
    if leaked:
        shown = ", ".join(repr(t) for t in leaked[:5]) + (", ..." if len(leaked) > 5 else "")
        raise UnexpectedTracerError(
            f"check_tracer_leaks: {len(leaked)} tracer(s) of the trace of {name} are still referenced after it ended "
            f"(stored in a global, an outer list, an object's attribute...): {shown}; return them as outputs instead"
        )


def _sync_trace_hook():
    on = _VALUES["jax_no_tracing"] or _VALUES["jax_check_tracer_leaks"]
    for mod in (_jit, _compat):
        if on and mod._trace is _ORIGINAL_TRACE:
            mod._trace = _guarded_trace
        elif not on and mod._trace is _guarded_trace:
            mod._trace = _ORIGINAL_TRACE


# ---------------------------------------------------------------------------------------------
# float0

#: JAX's dtype of the tangents and cotangents of integer and boolean values: a NumPy
#: structured void dtype with one zero-size field (itemsize 0), equal to ``jax.float0``.
#: Quabla arrays cannot have it (``qb.zeros(s, qb.float0)`` raises DTypeError); NumPy
#: arrays of it (``np.zeros(s, qb.float0)``) are what JAX programs build with it.
#: Departure: ``qb.grad(..., allow_int=True)`` gives None for integer arguments where JAX
#: gives a float0 array of the argument's shape.
from .dtypes import float0  # noqa: E402 - defined with the dtypes (qb.dtypes.float0)


# ---------------------------------------------------------------------------------------------
# closure_convert


def _example_leaf(fname, x):
    """(shape, DType) of an example argument leaf."""
    if type(x) is Tracer or isinstance(x, _q.Tensor):
        return tuple(x.shape), x.dtype
    if isinstance(x, _jit.ShapeDtype):
        return tuple(x.shape), x.dtype
    if isinstance(x, (bool, int, float, np.ndarray, np.generic)):
        a = _o._to_array(x)
        return tuple(a.shape), a.dtype
    raise ArgumentTypeError(f"{fname}: example arguments must be pytrees of arrays or numbers, got a {type(x).__name__}")


def closure_convert(fun, *example_args):
    """``fun`` with the traced values it closes over made explicit, as
    ``jax.closure_convert``: returns ``(converted, consts)`` where ``converted(*args, *consts)``
    equals ``fun(*args)`` for arguments of the example arguments' structure, shapes and
    dtypes, and ``consts`` are the floating-point traced values of enclosing traces that
    ``fun`` uses (so a ``custom_vjp`` function taking ``converted`` as a non-differentiable
    argument gets them as ordinary arguments and can return their cotangents). Outside any
    trace nothing can be closed over that carries derivatives, so ``consts`` is empty, as in
    JAX.

    Inside a trace ``fun`` is traced once on the example arguments' shapes into a function of
    the enclosing program; ``converted`` calls it (from that trace or traces nested in it).
    Departure: where ``fun`` computes something from closed-over values alone, that part is
    computed in the enclosing trace and its result is the hoisted value (JAX hoists the
    closed-over values themselves): the values and the derivatives with respect to the
    original values are the same. Integer and boolean closed-over values stay closed over,
    as in JAX.

    Args:
        fun: the function (pure).
        example_args: arrays, numbers or ShapeDtypes (pytrees of them) giving the argument
            types.

    Returns:
        ``(converted, consts)``, consts a list.

    Example:
        >>> g, consts = qb.closure_convert(lambda x: x * 2.0, qb.ones(2))
        >>> g(qb.ones(2)).tolist(), consts
        ([2.0, 2.0], [])
    """
    fname = "closure_convert"
    if not callable(fun):
        raise ArgumentTypeError(f"{fname}: fun must be callable, got {type(fun).__name__}")
    leaves, in_tree = _tree.flatten(example_args)
    specs = [_example_leaf(fname, x) for x in leaves]
    parent = _current()
    if parent is None:
        def converted(*args):
            _check_args(fname, args, in_tree, specs)
            return fun(*args)

        functools.update_wrapper(converted, fun)
        return converted, []
    b = parent.builder.child([(list(s), d.code) for s, d in specs], "closure_" + _jit._name(fun).replace("<", "").replace(">", ""))
    t = Trace(b, parent)
    params = [t.tracer(a) for a in b.params()]
    t.enter()
    try:
        out = fun(*_tree.unflatten(in_tree, params))
        out_leaves, out_tree = _tree.flatten(out)
        ids = []
        for x in out_leaves:
            if type(x) is not Tracer and not isinstance(x, _q.Tensor):
                if not isinstance(x, (bool, int, float, np.ndarray, np.generic)):
                    raise ArgumentTypeError(f"{fname}: fun must return pytrees of arrays or numbers, got a {type(x).__name__}")
                x = _o._to_array(x)
            ids.append(t.id_of(x))
        callee, _ = b.finish(ids)
    except BaseException:
        b.abandon()
        raise
    finally:
        t.exit()
    caps = list(t.cap_sources)
    hoisted = [i for i, c in enumerate(caps) if c.dtype.is_float]
    consts = [caps[i] for i in hoisted]

    def converted(*args_consts):
        n = len(args_consts) - len(hoisted)
        if n < 0:
            raise ArgumentTypeError(f"{fname}: the converted function takes the arguments and then {len(hoisted)} hoisted values, got {len(args_consts)} arguments")
        args, given = args_consts[:n], args_consts[n:]
        arg_leaves = _check_args(fname, args, in_tree, specs)
        here = _current()
        if here is None or not _within(here, parent):
            raise UnexpectedTracerError(
                f"{fname}: the converted function of {_jit._name(fun)} is a function of the trace it was made in; "
                "call it inside that trace (or a transform or loop within it)"
            )
        operands = list(caps)
        for i, v in zip(hoisted, given):
            if not (type(v) is Tracer or isinstance(v, _q.Tensor)):
                v = _o._to_array(v)
            if tuple(v.shape) != tuple(caps[i].shape) or v.dtype != caps[i].dtype:
                raise ShapeError(f"{fname}: hoisted value {hoisted.index(i)} must have shape {tuple(caps[i].shape)} and dtype {caps[i].dtype.name}, got {tuple(v.shape)} {v.dtype.name}")
            operands[i] = v
        ids = [here.id_of(x) for x in arg_leaves] + [here.id_of(x) for x in operands]
        outs = [here.tracer(r) for r in here.builder.call(callee, ids, user_loc())]
        return _tree.unflatten(out_tree, outs)

    functools.update_wrapper(converted, fun)
    return converted, consts


def _check_args(fname, args, in_tree, specs):
    """The array leaves of ``args``, checked against the example arguments."""
    leaves, tree = _tree.flatten(tuple(args))
    if tree != in_tree:
        raise ArgumentTypeError(f"{fname}: the converted function's arguments must have the structure of the example arguments, {in_tree}; got {tree}")
    out = []
    for k, (x, (shape, dt)) in enumerate(zip(leaves, specs)):
        if not (type(x) is Tracer or isinstance(x, _q.Tensor)):
            if not isinstance(x, (bool, int, float, np.ndarray, np.generic)):
                raise ArgumentTypeError(f"{fname}: argument leaf {k} must be an array or a number, got a {type(x).__name__}")
            x = _o._to_array(x, dt) if isinstance(x, (bool, int, float)) else _o._to_array(x)
        if tuple(x.shape) != tuple(shape):
            raise ShapeError(f"{fname}: argument leaf {k} has shape {tuple(x.shape)}, the example's is {tuple(shape)}")
        if x.dtype != dt:
            raise DTypeError(f"{fname}: argument leaf {k} has dtype {x.dtype.name}, the example's is {dt.name}")
        out.append(x)
    return out


# ---------------------------------------------------------------------------------------------
# Environment and version


def _quabla_version():
    try:
        return importlib.metadata.version("quabla")
    except Exception:  # noqa: BLE001 - a source tree without metadata
        return "0.0.0"


def _version_info(v):
    parts = []
    for p in v.split("+")[0].split("."):
        digits = "".join(ch for ch in p if ch.isdigit()) if p[:1].isdigit() else ""
        if not digits:
            break
        parts.append(int(digits))
        if not p.isdigit():
            break
    return tuple(parts)


#: ``jax.version``: a module with ``__version__`` (Quabla's version string, ``qb.__version__``)
#: and ``__version_info__`` (its leading numbers as a tuple of ints). Also importable as
#: ``quabla.version`` once this module is loaded.
version = types.ModuleType("quabla.version", "Quabla's version (jax.version's attributes).")
version.__version__ = _quabla_version()
version.__version_info__ = _version_info(version.__version__)
sys.modules.setdefault("quabla.version", version)


def print_environment_info(return_string=False):
    """Prints (or returns) the versions and devices of this installation, for bug reports, as
    ``jax.print_environment_info``: Quabla's, NumPy's and Python's versions, jax's when it is
    installed (the ``xla`` executor), Quabla's devices, the process count and the platform.
    Departure: no ``nvidia-smi`` output (JAX adds it where it finds GPUs).

    Args:
        return_string: return the text instead of printing it.

    Returns:
        The text with ``return_string``, else None.

    Example:
        >>> qb.print_environment_info(return_string=True).splitlines()[0].startswith("quabla:")
        True
    """
    if not isinstance(return_string, (bool, np.bool_)):
        raise ArgumentTypeError(f"print_environment_info: return_string must be a bool, got a {type(return_string).__name__}")
    try:
        jax_version = importlib.metadata.version("jax")
    except Exception:  # noqa: BLE001 - not installed
        jax_version = "not installed"
    lines = [
        f"quabla: {version.__version__}",
        f"numpy:  {np.__version__}",
        f"jax:    {jax_version} (the xla executor)",
        f"python: {sys.version}",
        f"device info: {', '.join(_q.devices())}; eager ops on {_q.eager_device_name()}",
        f"process_count: {_process_count()}",
        f"platform: {platform.uname()}",
    ]
    text = "\n".join(lines)
    if return_string:
        return text
    print(text)
    return None


def _process_count():
    """1, or XLA's process count where jax is already loaded (``qb.distributed`` runs there);
    jax is not imported just for this."""
    if "jax" not in sys.modules or not _sharding.available():
        return 1
    try:
        return _compat.process_count()
    except QuablaError:
        return 1


# ---------------------------------------------------------------------------------------------
# make_array_from_callback


def make_array_from_callback(shape, sharding, data_callback, dtype=None):
    """An array of ``shape`` built from ``data_callback(index)``, as
    ``jax.make_array_from_callback``. With a ``qb.sharding.NamedSharding`` it is JAX's (an XLA
    array laid out over the mesh, one callback per shard; jax must be installed), as
    ``qb.sharding.make_array_from_process_local_data``. With a single device (None, a device
    name such as ``"cpu"``) the callback is called once with the full index (one
    ``slice(None)`` per dimension) and its result (an array or a NumPy array of exactly
    ``shape``) becomes a Quabla array on that device.

    Args:
        shape: the global shape (a sequence of positive ints).
        sharding: a ``NamedSharding``, None or a device name.
        data_callback: ``index -> array``: the data of the index's part.
        dtype: the expected dtype (None: the data's); data of another dtype raises, as JAX.

    Returns:
        The array.

    Example:
        >>> qb.make_array_from_callback((2, 3), None, lambda idx: np.arange(6.0).reshape(2, 3)[idx]).tolist()
        [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    """
    fname = "make_array_from_callback"
    try:
        shp = tuple(shape)
    except TypeError:
        raise ArgumentTypeError(f"{fname}: shape must be a sequence of ints, got a {type(shape).__name__}") from None
    if not all(isinstance(d, (int, np.integer)) and not isinstance(d, (bool, np.bool_)) and d >= 0 for d in shp):
        raise ArgumentTypeError(f"{fname}: shape must be a sequence of ints >= 0, got {shape!r}")
    shp = tuple(int(d) for d in shp)
    if not callable(data_callback):
        raise ArgumentTypeError(f"{fname}: data_callback must be callable, got {type(data_callback).__name__}")
    want = None if dtype is None else _dt.dtype(dtype)
    if isinstance(sharding, _sharding.NamedSharding):
        if not _sharding.available():
            raise UnsupportedOperationError(f"{fname}: a NamedSharding lays arrays out on XLA devices, and jax is not installed", op=fname)
        sharding.check(fname, shp)
        jax = _sharding._jax()
        with jax.enable_x64(True):
            try:
                return jax.make_array_from_callback(shp, sharding.jax_sharding, lambda idx: np.asarray(data_callback(idx)), dtype=None if want is None else want.np)
            except ValueError as e:
                raise ShapeError(f"{fname}: {e}") from None
    if sharding is not None and not isinstance(sharding, str):
        raise ArgumentTypeError(f"{fname}: sharding must be a qb.sharding.NamedSharding, None or a device name, got a {type(sharding).__name__}")
    device = "cpu" if sharding is None else _q.canonical_device(sharding, fname)
    if 0 in shp:
        raise ShapeError(f"{fname}: shape {shp} has an extent 0; Quabla arrays have no zero-size dimensions")
    data = data_callback(tuple(slice(None) for _ in shp))
    if type(data) is Tracer:
        raise ArgumentTypeError(f"{fname}: data_callback returned a traced value; it must return concrete data")
    if not isinstance(data, (_q.Tensor, np.ndarray, np.generic)):
        raise ArgumentTypeError(f"{fname}: data_callback must return an array or a NumPy array, got a {type(data).__name__}")
    arr = data if isinstance(data, _q.Tensor) else _o.asarray(data)
    if tuple(arr.shape) != shp:
        raise ShapeError(f"{fname}: data_callback returned data of shape {tuple(arr.shape)} for the whole array of shape {shp}")
    if want is not None and arr.dtype != want:
        raise DTypeError(f"{fname}: dtype={want.name} was given but data_callback returned {arr.dtype.name} data")
    if device != "cpu":
        arr = _o.device_put(arr, device)
    return arr


# ---------------------------------------------------------------------------------------------
# live_arrays


def live_arrays(platform=None):
    """The arrays alive in this process on the devices of ``platform`` (default: Quabla's
    default device, the host CPU), as ``jax.live_arrays``: every ``qb.Tensor`` object that
    still exists (found through the garbage collector, which tracks them all), those Quabla
    itself holds (cached constants) included, as JAX's list includes its own. Arrays only
    reachable from garbage cycles not yet collected are still listed, as in JAX until they
    are freed.

    Args:
        platform: a device name (``"cpu"``, ``"cuda"``, ``"mlx"``) or None.

    Returns:
        A list of Tensors.

    Example:
        >>> a = qb.ones(3)
        >>> any(x is a for x in qb.live_arrays())
        True
    """
    if platform is None:
        name = "cpu"
    elif isinstance(platform, str):
        name = _q.canonical_device(platform, "live_arrays")
    else:
        raise ArgumentTypeError(f"live_arrays: platform must be a device name or None, got a {type(platform).__name__}")
    tensor = _q.Tensor
    return [o for o in gc.get_objects() if isinstance(o, tensor) and _device_matches(o.device, name)]


def _device_matches(dev, name):
    return dev == name or dev.split(":")[0] == name


# The settings are objects, not functions: doctest finds their examples through __test__.
__test__ = {name: globals()[name].__doc__ for name in __all__ if isinstance(globals()[name], _Setting)}
