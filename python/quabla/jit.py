"""``qb.jit``: trace a function into a quabla module once per signature, compile it for the
CPU, and call the compiled program afterwards.

Cache key = (treedef of the arguments, per-leaf (shape, dtype), static values, static
keyword values, device). The treedef includes namedtuple and registered node types and
their auxiliary data (a registered dataclass's meta fields), so a change of any of them
retraces. Python numbers among the arguments are static (their value is part of the key and they stay
weak scalars in the trace); pass ``qb.array(v)`` to vary a scalar without retracing. The
cache is LRU-bounded (:class:`_TraceCache`): past ``max_traces`` signatures (default
``QUABLA_MAX_TRACES``, 8) the least recently used one is evicted and its compiled code freed.

The per-call path for positional Tensor arguments runs in Rust (``_quabla.JitFunction``):
look up the argument types, run the executable, wrap the outputs. Everything else goes
through :func:`_slow` here.
"""

import collections
import functools
import inspect
import os
import sys
import threading

import numpy as np

from . import _quabla as _q
from . import dtypes as _dt
from . import tree as _tree
from ._ops import _to_array
from ._staging import ArgumentError, TransformedFunction, float_args
from ._trace import Trace, Tracer, is_array
from ._trace import current as _current
from .errors import ArgumentTypeError, InvalidArgumentError, UnsupportedOperationError
from . import errors as _errors

__all__ = ["jit", "ShapeDtype", "Lowered", "Compiled"]

Tensor = _q.Tensor
_LOG = bool(os.environ.get("QUABLA_LOG_COMPILES"))
_EXPLAIN = os.environ.get("QUABLA_EXPLAIN_CACHE_MISSES", "") not in ("", "0")
# Set by `qb.disable_jit()`: jitted functions then run their Python op by op (the Rust fast
# path checks its own copy of the flag, `_q.set_jit_disabled`).
_JIT_DISABLED = False


def _set_jit_disabled(flag):
    """Sets whether jitted calls run op by op; returns the previous setting."""
    global _JIT_DISABLED
    prev, _JIT_DISABLED = _JIT_DISABLED, bool(flag)
    _q.set_jit_disabled(_JIT_DISABLED)
    return prev


def _default_max_traces():
    v = os.environ.get("QUABLA_MAX_TRACES", "").strip()
    try:
        n = int(v) if v else 8
    except ValueError:
        n = 0
    if n < 1:
        print(f"quabla: QUABLA_MAX_TRACES={v!r} is not a positive integer; using 8", file=sys.stderr)
        n = 8
    return n


#: The process-wide default of ``jit(..., max_traces=None)``: ``QUABLA_MAX_TRACES`` (read at
#: import), else 8.
DEFAULT_MAX_TRACES = _default_max_traces()


def _max_traces(fname, max_traces):
    if max_traces is None:
        return DEFAULT_MAX_TRACES
    if isinstance(max_traces, bool) or not isinstance(max_traces, (int, np.integer)) or max_traces < 1:
        raise InvalidArgumentError(f"jit({fname}): max_traces must be a positive integer or None, got {max_traces!r}")
    return int(max_traces)


class _TraceCache:
    """A jitted function's traced signatures, bounded and least recently used first.

    ``get`` marks a hit; ``insert`` first evicts the least recently used entries until there
    is room for one more. Calls served by the Rust fast path (``JitFunction``) never reach
    Python, so each entry registered there remembers its fast-path key and hit count: when
    choosing a victim, an entry whose count moved since it was last looked at was used in the
    meantime and goes to the most recent end instead (second chance), so a signature called
    only through the fast path is not evicted as if idle. An evicted entry leaves the fast path
    too, so its compiled program is freed (``_quabla.live_programs()`` drops) and the heap is
    trimmed (``_quabla.release_memory()``)."""

    __slots__ = ("capacity", "_entries", "_fast", "_owner", "_lock")

    def __init__(self, capacity, owner=None):
        self.capacity = capacity
        self._entries = collections.OrderedDict()
        self._fast = {}  # key -> [fast-path key, hit count last seen]
        self._owner = owner
        self._lock = threading.RLock()

    def get(self, key):
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
            return entry

    def __len__(self):
        return len(self._entries)

    def __iter__(self):
        with self._lock:
            return iter(list(self._entries))

    def register_fast(self, key, entry, args, statics, rebuild, as_tuple):
        """Serves ``key`` (still cached as ``entry``) from the fast path: calls like ``args``
        (positional; ``statics`` the static positions) under the call key the Rust side gives
        (none when such calls cannot be keyed: python/src/callkey.rs)."""
        with self._lock:
            if self._entries.get(key) is entry and key not in self._fast:
                fast_key = self._owner._register(args, statics, entry.compiled, rebuild, as_tuple)
                if fast_key is not None:
                    self._fast[key] = [fast_key, self._owner._fast_hits(fast_key) or 0]

    def _victim(self):
        for _ in range(len(self._entries)):
            key = next(iter(self._entries))
            fast = self._fast.get(key)
            if fast is not None:
                hits = self._owner._fast_hits(fast[0]) or 0
                if hits != fast[1]:
                    fast[1] = hits
                    self._entries.move_to_end(key)
                    continue
            return key
        return next(iter(self._entries))

    def insert(self, key, entry):
        """Caches ``entry``; returns the evicted keys (least recently used first)."""
        evicted, dropped = [], []
        with self._lock:
            while len(self._entries) >= self.capacity:
                victim = self._victim()
                dropped.append(self._entries.pop(victim))
                fast = self._fast.pop(victim, None)
                if fast is not None:
                    self._owner._fast_remove(fast[0])
                evicted.append(victim)
            self._entries[key] = entry
        if dropped:
            del dropped  # the last references to the evicted programs
            _q.release_memory()
        return evicted

    def clear(self):
        with self._lock:
            self._entries.clear()
            self._fast.clear()


class ShapeDtype:
    """An abstract argument for :meth:`Jitted.lower`: a shape and a dtype, no values.

    Example:
        >>> qb.jit(lambda x: x * 2).lower(qb.ShapeDtype((3,), qb.float32)).as_text()  # doctest: +ELLIPSIS
        'module {...'
    """

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = (int(shape),) if isinstance(shape, int) else tuple(int(d) for d in shape)
        _q.check_shape("ShapeDtype", list(self.shape), _dt.dtype(dtype).code)
        self.dtype = _dt.dtype(dtype)

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return f"ShapeDtype({self.shape}, {self.dtype.name})"

    def __eq__(self, other):
        return isinstance(other, ShapeDtype) and (self.shape, self.dtype) == (other.shape, other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))


def _device_name(device):
    if device is None:
        return "cpu"
    if not isinstance(device, str):
        raise _errors.ArgumentTypeError(f"jit: device must be a string such as 'cpu', got {type(device).__name__}")
    try:
        # `cuda` is `cuda:0` where the machine has GPUs: one cache entry, one executor.
        return _q.canonical_device(device, "jit")
    except _errors.UnsupportedOperationError:
        # Not a device of the registry (`xla`, a Python executor; or unknown: the first call
        # says so, with the available devices).
        return device


class _Entry:
    """One traced and compiled signature."""

    __slots__ = ("program", "compiled", "out_tree", "n_static_out")

    def __init__(self, program, compiled, out_tree):
        self.program = program
        self.compiled = compiled
        self.out_tree = out_tree


def _leaf_key(x, weak=False):
    if isinstance(x, Tensor) or type(x) is ShapeDtype:
        return (x.shape, x.dtype.code)
    if isinstance(x, (bool, int, float)):
        if weak and _is_number(x):
            return ("weak", type(x).__name__)
        return ("static", type(x).__name__, _Exact(x))
    raise _errors.ArgumentTypeError(x)


def _is_number(x):
    """A Python int or float (not a bool): the leaves that may become weak scalars."""
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _weak_dtype(x):
    return _dt.int64 if isinstance(x, int) else _dt.float64


def _weak_tensor(x):
    """The Python number ``x`` as the 0-d Tensor a weak-scalar parameter receives."""
    d = _weak_dtype(x)
    if d is _dt.int64 and not -(2**63) <= x < 2**63:
        _dt.check_int_range(x, d)
    return _q.full((), x, d.code)


def _changed_numbers(key, cached, refused):
    """Leaf positions holding Python numbers that differ from a cached key which equals
    ``key`` everywhere else (same structure, shapes, dtypes, statics, device), less the
    ``refused`` ones; with that key. (None, None) when there is none."""
    tree, lk = key[0], key[1]
    for old in cached:
        if old[0] != tree or old[2:] != key[2:] or len(old[1]) != len(lk):
            continue
        diff = set()
        for i, (a, b) in enumerate(zip(old[1], lk)):
            if a == b:
                continue
            if a[0] == "static" and b[0] == "static" and a[1] == b[1] and a[1] in ("int", "float") and i not in refused:
                diff.add(i)
            else:
                diff = None
                break
        if diff:
            return diff, old
    return None, None


class _Exact:
    """A static value as a cache key: equal when the values are equal and floats also have the
    same bits, so ``0.0`` and ``-0.0`` differ and every NaN equals itself (a NaN argument hits
    the cache instead of retracing), recursively through tuples, lists and dicts; other values
    compare by their own ``__eq__``/``__hash__``. Shows as the value it wraps."""

    __slots__ = ("value", "_key")

    def __init__(self, value):
        self.value = value
        self._key = _bits(value)

    def __eq__(self, other):
        return type(other) is _Exact and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        return repr(self.value)


def _bits(v):
    t = type(v)
    if t is float:
        return (float, v.hex())
    if t is complex:
        return (complex, v.real.hex(), v.imag.hex())
    if t is tuple or t is list:
        return (t, tuple(_bits(e) for e in v))
    if t is dict:
        return (dict, tuple((k, _bits(e)) for k, e in v.items()))
    return (t, v)


def _prepare_leaves(fname, leaves):
    """Converts NumPy leaves to Tensors and checks leaf types; Python numbers stay static."""
    out = []
    for x in leaves:
        if isinstance(x, Tensor) or type(x) is ShapeDtype:
            out.append(x)
        elif isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
            out.append(x)
        elif isinstance(x, (np.ndarray, np.generic)):
            out.append(_to_array(np.asarray(x)))
        elif type(x) is Tracer:
            out.append(x)
        else:
            raise _errors.ArgumentTypeError(
                f"jit({fname}): argument leaves must be Tensors, NumPy arrays or Python numbers, got {type(x).__name__}; "
                "mark non-array arguments with static_argnums"
            )
    return out


def run_concrete(fun, args, kwargs):
    """``fun(*args, **kwargs)`` traced with the arguments' values known (a concrete trace:
    bool()/int()/float() of values computed from them work), compiled and run. The program
    holds the branches this call took, so nothing is kept by signature; the compile cache,
    keyed by the program, serves calls that take the same branches."""
    name = _name(fun)
    leaves, dyn_tree = _tree.flatten((tuple(args), kwargs))
    leaves = _prepare_leaves(name, leaves)
    program, out_tree = _trace(fun, dyn_tree, leaves, (), (), len(args), concrete=True)
    compiled = program.compile()
    outs = compiled([x for x in leaves if isinstance(x, Tensor)])
    return _tree.unflatten(out_tree, outs)


def _trace(fun, dyn_tree, leaves, static, static_argnums, nargs, static_kw=(), shapes_only=False, weak=frozenset(), concrete=False):
    """Traces ``fun`` on abstract leaves; returns (Program, out_tree), or with
    ``shapes_only`` (the output leaves as ShapeDtypes, out_tree) without building a program.
    The Python numbers at the leaf positions ``weak`` are parameters (0-d int64/float64
    tracers marked weak: they promote like Python scalars), the others are static."""
    specs = []
    for i, x in enumerate(leaves):
        if not isinstance(x, (bool, int, float)):
            specs.append((list(x.shape), x.dtype.code))
        elif i in weak and _is_number(x):
            specs.append(([], _weak_dtype(x).code))
    builder = _q.TraceBuilder(specs)
    trace = Trace(builder, concrete=concrete)
    params = iter(builder.params())
    targs = []
    for i, x in enumerate(leaves):
        if isinstance(x, (bool, int, float)) and not (i in weak and _is_number(x)):
            targs.append(x)
        else:
            v = next(params)
            t = Tracer(trace, v[0], tuple(v[1]), _dt.BY_CODE[v[2]])
            t.weak = i in weak
            if concrete:
                t.val = x
            targs.append(t)
    dyn_args, kwargs = _tree.unflatten(dyn_tree, targs)
    args = _merge(dyn_args, static, static_argnums, nargs)
    if static_kw:
        kwargs = dict(kwargs, **dict(static_kw))
    trace.enter()
    try:
        out = fun(*args, **kwargs)
        out_leaves, out_tree = _tree.flatten(out)
        ids, arrays = [], []
        for leaf in out_leaves:
            if not is_array(leaf):
                if isinstance(leaf, (bool, int, float, np.ndarray, np.generic)):
                    leaf = _to_array(leaf)
                else:
                    raise _errors.ArgumentTypeError(f"jit({_name(fun)}): outputs must be arrays or Python numbers, got {type(leaf).__name__}")
            ids.append(trace.id_of(leaf))
            arrays.append(leaf)
        if shapes_only:
            builder.abandon()
            return [ShapeDtype(a.shape, a.dtype) for a in arrays], out_tree
        program = builder.finish(ids)
    except BaseException:
        builder.abandon()
        raise
    finally:
        trace.exit()
    return program, out_tree


def _merge(dyn_args, static, static_argnums, nargs):
    if not static_argnums:
        return dyn_args
    it = iter(dyn_args)
    return tuple(static[static_argnums.index(i)] if i in static_argnums else next(it) for i in range(nargs))


def _name(fun):
    return getattr(fun, "__name__", type(fun).__name__)


def _slow(self, args, kwargs):
    """Every call that the Rust fast path does not serve."""
    kwargs = kwargs or {}
    fun = self.__wrapped__
    # Called inside another trace (with tracers, or while one is in progress): trace through,
    # so that the enclosing program contains this function's ops.
    if _current() is not None:
        return fun(*args, **kwargs)
    if _JIT_DISABLED and not isinstance(fun, TransformedFunction):
        # qb.disable_jit(): op by op (the transforms still compile: they need a trace).
        return fun(*args, **kwargs)
    given, given_tree = _tree.flatten((tuple(args), kwargs))
    for x in given:
        if type(x) is Tracer:
            return fun(*args, **kwargs)
    orig = args
    sa, args, static, kwargs, static_kw = _split_static(self, args, kwargs)
    for i, s in zip(sa, static):
        _check_hashable(fun, f"static argument {i}", s)
    for k, s in static_kw:
        _check_hashable(fun, f"static argument {k!r}", s)
    if not sa and not static_kw and args is orig:
        leaves, dyn_tree = given, given_tree  # nothing static: the arguments as flattened above
    else:
        dyn_args = tuple(a for i, a in enumerate(args) if i not in sa) if sa else tuple(args)
        leaves, dyn_tree = _tree.flatten((dyn_args, kwargs))
    # Only calls whose leaves are all Tensors or NumPy arrays can be served by the Rust fast
    # path (which refuses the arrays it does not import as `_prepare_leaves` does:
    # python/src/callkey.rs).
    fast_ok = all(isinstance(x, (Tensor, np.ndarray)) for x in leaves)
    leaves = _prepare_leaves(_name(fun), leaves)
    try:
        hash(dyn_tree)
    except _tree.PyTreeError as e:
        raise ArgumentError(f"jit({_name(fun)}): the arguments' structure is not hashable: {e}") from None
    weak = self._weak.get(dyn_tree, frozenset())
    rest = (tuple(map(_Exact, static)), tuple((k, _Exact(v)) for k, v in static_kw), self._device)
    key = (dyn_tree, tuple(_leaf_key(x, i in weak) for i, x in enumerate(leaves))) + rest
    entry = self._cache.get(key)
    if entry is None:
        # A Python number that changed since an earlier trace (a step counter, a learning
        # rate) becomes a weak-scalar parameter rather than a static value, as JAX traces
        # numbers: one program for all its values.
        changed, old = _changed_numbers(key, list(self._cache), self._weak_refused.get(dyn_tree, ()))
        if changed:
            grown = weak | frozenset(changed)
            wkey = (dyn_tree, tuple(_leaf_key(x, i in grown) for i, x in enumerate(leaves))) + rest
            entry = self._compile_weak(wkey, old, dyn_tree, leaves, static, sa, len(args), static_kw, grown)
            if entry is None:
                self._weak_refused.setdefault(dyn_tree, set()).update(changed)
            else:
                self._weak[dyn_tree] = weak = grown
                key = wkey
        if entry is None:
            try:
                entry = self._compile(key, dyn_tree, leaves, static, sa, len(args), static_kw, weak)
            except Exception:  # noqa: BLE001 - re-raised unless the retry below succeeds
                retried = self._retry_weak(dyn_tree, leaves, static, sa, len(args), static_kw, weak, rest)
                if retried is None:
                    raise
                entry, key, weak = retried
    if weak:
        leaves = [_weak_tensor(x) if i in weak and _is_number(x) else x for i, x in enumerate(leaves)]
    tensors = [x for x in leaves if isinstance(x, Tensor)]
    outs = entry.compiled(tensors)
    if fast_ok and not kwargs and not static_kw:
        # Pytrees of Tensors (and static values) are served by the Rust fast path from the
        # next call on; `_register` refuses calls it cannot key (NumPy or number leaves).
        single = entry.out_tree.is_leaf()
        flat_tuple = entry.out_tree.is_flat_tuple()
        rebuild = None if single or flat_tuple else functools.partial(_tree.unflatten, entry.out_tree)
        self._cache.register_fast(key, entry, tuple(args), list(sa), rebuild, flat_tuple)
    return _tree.unflatten(entry.out_tree, outs)


def _split_static(self, args, kwargs):
    """(static positions, the arguments, static values, dynamic keyword arguments, static
    keyword pairs) of a call of the jitted function ``self``."""
    fun = self.__wrapped__
    sa = self._normalize_static(len(args))
    if isinstance(fun, TransformedFunction):
        # Python numbers in the differentiated positions of a transform are float64 arrays:
        # dynamic arguments, not static values in the key.
        diff = tuple(i for i in fun._diff(len(args)) if i not in sa)
        if diff:
            args = float_args(args, diff)
    static = tuple(args[i] for i in sa)
    kwargs, static_kw = self._split_kwargs(kwargs)
    return sa, args, static, kwargs, static_kw


def _check_hashable(fun, what, value):
    try:
        hash(value)
    except TypeError:
        raise ArgumentError(
            f"jit({_name(fun)}): {what} of type {type(value).__name__} is not hashable; static arguments are part "
            "of the cache key (pass arrays as ordinary arguments, or a hashable value such as a tuple)"
        ) from None


def _static_options(fun, static_argnums, static_argnames):
    """Normalizes ``static_argnums``/``static_argnames`` as JAX does: each given alone is
    completed from the other through ``fun``'s signature (positional-or-keyword
    parameters); names that ``fun`` cannot take are an error."""
    fname = f"jit({_name(fun)})"
    given_nums = static_argnums is not None
    given_names = static_argnames is not None
    if static_argnums is None:
        static_argnums = ()
    if isinstance(static_argnums, (int, np.integer)) and not isinstance(static_argnums, bool):
        static_argnums = (static_argnums,)
    try:
        nums = tuple(static_argnums)
    except TypeError:
        raise ArgumentError(f"{fname}: static_argnums must be an int or a sequence of ints, got {static_argnums!r}") from None
    if not all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in nums):
        raise ArgumentError(f"{fname}: static_argnums must be an int or a sequence of ints, got {static_argnums!r}")
    nums = tuple(int(i) for i in nums)
    if static_argnames is None:
        static_argnames = ()
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)
    try:
        names = tuple(static_argnames)
    except TypeError:
        raise ArgumentError(f"{fname}: static_argnames must be a str or a sequence of str, got {static_argnames!r}") from None
    if not all(isinstance(n, str) for n in names):
        raise ArgumentError(f"{fname}: static_argnames must be a str or a sequence of str, got {static_argnames!r}")
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return nums, names, None
    by_name = {p.name: (i, p) for i, p in enumerate(params)}
    var_kw = any(p.kind is p.VAR_KEYWORD for p in params)
    for n in names:
        hit = by_name.get(n)
        if hit is None:
            if not var_kw:
                raise ArgumentError(
                    f"{fname}: static_argnames names {n!r}, which is not a parameter of the function "
                    f"(parameters: {', '.join(p.name for p in params) or 'none'})"
                )
        elif hit[1].kind is hit[1].POSITIONAL_ONLY:
            raise ArgumentError(f"{fname}: static_argnames names {n!r}, a positional-only parameter; use static_argnums")
        elif hit[1].kind is hit[1].VAR_POSITIONAL:
            raise ArgumentError(f"{fname}: static_argnames names {n!r}, the *args parameter; use static_argnums")
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if given_nums and not given_names:
        names = tuple(
            positional[i].name for i in nums if 0 <= i < len(positional) and positional[i].kind is positional[i].POSITIONAL_OR_KEYWORD
        )
    elif given_names and not given_nums:
        nums = tuple(i for i, p in enumerate(positional) if p.name in names and p.kind is p.POSITIONAL_OR_KEYWORD)
    npos = None if any(p.kind is p.VAR_POSITIONAL for p in params) else len(positional)
    return nums, names, npos


class Jitted(_q.JitFunction):
    """A jitted function: call it like the original; ``.lower(*args)`` gives a
    :class:`Lowered`."""

    def __init__(self, slow, fun, device=None, static_argnums=None, max_traces=None, static_argnames=None):
        self.__wrapped__ = fun
        functools.update_wrapper(self, fun, updated=())
        self._static_argnums, self._static_argnames, self._npos = _static_options(fun, static_argnums, static_argnames)
        self._device = _device_name(device)
        self._max_traces = _max_traces(_name(fun), max_traces)
        self._cache = _TraceCache(self._max_traces, self)
        self._lock = threading.Lock()
        # Per argument structure: the leaf positions whose Python numbers are weak-scalar
        # parameters, and those that could not be (their trace needs the value: a shape, a
        # Python branch, a loop count), which stay static.
        self._weak = {}
        self._weak_refused = {}

    def _normalize_static(self, nargs):
        """The static positions among ``nargs`` positional arguments. A static position past
        them names a parameter passed by keyword or left at its default (static through
        ``static_argnames``), as in JAX; one past every parameter is an error."""
        out = []
        for i in self._static_argnums:
            j = i + nargs if i < 0 else i
            if not 0 <= j < nargs:
                if i >= 0 and self._npos is not None and i < self._npos:
                    continue
                raise ArgumentError(f"jit({_name(self.__wrapped__)}): static_argnums {self._static_argnums} out of range for {nargs} positional arguments")
            out.append(j)
        return tuple(sorted(set(out)))

    def _split_kwargs(self, kwargs):
        """(dynamic keyword arguments, sorted (name, value) pairs of the static ones)."""
        if not kwargs or not self._static_argnames:
            return kwargs, ()
        dyn = {k: v for k, v in kwargs.items() if k not in self._static_argnames}
        static = tuple(sorted((k, v) for k, v in kwargs.items() if k in self._static_argnames))
        return dyn, static

    def _check_device(self):
        if self._device not in _q.devices():
            raise UnsupportedOperationError(
                f"jit({_name(self.__wrapped__)}): device {self._device!r} is not available in this build or on this machine "
                f"(available: {', '.join(_q.devices())})",
                op="jit",
                device=self._device,
            )

    def _compile_weak(self, key, old, dyn_tree, leaves, static, sa, nargs, static_kw, weak):
        """The entry for ``key`` with the numbers at ``weak`` as weak-scalar parameters, or
        None where that trace fails (the function needs a value: a shape, a Python branch)
        or gives outputs of other types than the static trace ``old`` did."""
        prev = self._cache.get(old)
        if prev is None:
            return None
        try:
            program, out_tree = _trace(self.__wrapped__, dyn_tree, leaves, static, sa, nargs, static_kw, weak=weak)
            if out_tree != prev.out_tree:
                return None
            compiled = program.compile(device=self._device)
        except Exception:  # noqa: BLE001 - any failure keeps the numbers static (the old behaviour)
            return None
        if [tuple(o) for o in compiled.out_avals] != [tuple(o) for o in prev.compiled.out_avals]:
            return None
        return self._compile(key, dyn_tree, leaves, static, sa, nargs, static_kw, weak, done=(program, out_tree, compiled))

    def _retry_weak(self, dyn_tree, leaves, static, sa, nargs, static_kw, weak, rest):
        """For a call whose trace with its Python numbers static raised: the trace with every
        number a weak-scalar parameter (JAX's tracing of numbers: ``x / y`` of 2.0 and 0.0 is
        inf, not Python's ZeroDivisionError; ``y.shape`` is ``()``), as ``(entry, key, weak
        positions)``; None when there is no static number or that trace fails too (the
        function needs a number's value: a shape, a Python branch), so that the caller raises
        the first error."""
        grown = weak | frozenset(i for i, x in enumerate(leaves) if _is_number(x))
        if grown == weak:
            return None
        key = (dyn_tree, tuple(_leaf_key(x, i in grown) for i, x in enumerate(leaves))) + rest
        try:
            entry = self._compile(key, dyn_tree, leaves, static, sa, nargs, static_kw, grown)
        except Exception:  # noqa: BLE001 - the static trace's error is the one to report
            return None
        self._weak[dyn_tree] = grown
        return entry, key, grown

    def _compile(self, key, dyn_tree, leaves, static, sa, nargs, static_kw=(), weak=frozenset(), done=None):
        with self._lock:
            entry = self._cache.get(key)
            if entry is not None:
                return entry
            self._check_device()
            if _EXPLAIN:
                print(f"quabla: jit({_name(self.__wrapped__)}) traces: {explain_miss(key, list(self._cache), sa)}", file=sys.stderr)
            if done is None:
                program, out_tree = _trace(self.__wrapped__, dyn_tree, leaves, static, sa, nargs, static_kw, weak=weak)
                compiled = program.compile(device=self._device)
            else:
                program, out_tree, compiled = done
            if _LOG:
                print(f"quabla: compiled jit({_name(self.__wrapped__)}) for {_show_key(key)}", file=sys.stderr)
            entry = _Entry(program, compiled, out_tree)
            evicted = self._cache.insert(key, entry)
            if evicted and (_LOG or _EXPLAIN):
                print(f"quabla: jit({_name(self.__wrapped__)}) evicted {len(evicted)} least recently used signature(s) "
                      f"(max_traces={self._max_traces}): {', '.join(_show_key(k) for k in evicted)}", file=sys.stderr)
            return entry

    def lower(self, *args, **kwargs):
        """Traces for the given arguments (arrays or :class:`ShapeDtype` leaves) without
        running; returns a :class:`Lowered`.

        Example:
            >>> low = qb.jit(lambda x: qb.sin(x)).lower(qb.ShapeDtype((2,), qb.float32))
            >>> "quabla.sin" in low.as_text()
            True
        """
        sa = self._normalize_static(len(args))
        static = tuple(args[i] for i in sa)
        kwargs, static_kw = self._split_kwargs(kwargs)
        dyn_args = tuple(a for i, a in enumerate(args) if i not in sa)
        leaves, dyn_tree = _tree.flatten((dyn_args, kwargs))
        leaves = _prepare_leaves(_name(self.__wrapped__), leaves)
        program, out_tree = _trace(self.__wrapped__, dyn_tree, leaves, static, sa, len(args), static_kw)
        return Lowered(self, program, out_tree, dyn_tree, sa, static, len(args))

    def trace(self, *args, **kwargs):
        """Traces for the given arguments (arrays or :class:`ShapeDtype` leaves) without
        running, as ``jax.jit(f).trace``; returns a :class:`Traced` (its ``.lower()`` gives the
        :class:`Lowered`).

        Example:
            >>> t = qb.jit(lambda x: x * 2).trace(qb.ones(3))
            >>> t.out_info, t.fun_name
            (ShapeDtype((3,), float64), '<lambda>')
        """
        low = self.lower(*args, **kwargs)
        sa = set(self._normalize_static(len(args)))
        dyn = [a for i, a in enumerate(args) if i not in sa]
        leaves = _prepare_leaves(_name(self.__wrapped__), _tree.leaves((dyn, kwargs)))
        in_avals = [ShapeDtype(tuple(x.shape), x.dtype) if hasattr(x, "shape") else ShapeDtype((), _to_array(x).dtype) for x in leaves]
        outs, out_tree = _trace(self.__wrapped__, low.in_tree, leaves, low._static, low._static_argnums, low._nargs, tuple(self._split_kwargs(kwargs)[1]), shapes_only=True)
        return Traced(_name(self.__wrapped__), low, in_avals, outs, out_tree)

    def clear_cache(self):
        """Drops every traced signature and its compiled code (the next call traces again)."""
        with self._lock:
            self._cache.clear()
            self._fast_clear()

    @property
    def _cache_size(self):
        return len(self._cache)

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __repr__(self):
        return f"<jit({_name(self.__wrapped__)}) device={self._device!r}>"


def _show_key(key):
    tree, leaves, static, static_kw, device = key
    parts = []
    for lk in leaves:
        if lk[0] == "static":
            parts.append(f"{lk[1]}={lk[2]!r}")
        elif lk[0] == "weak":
            parts.append(f"{lk[1]} (traced)")
        else:
            parts.append(f"{_dt.BY_CODE[lk[1]].name}{list(lk[0])}")
    s = f"{tree!r} leaves=({', '.join(parts)})"
    if static:
        s += f" static={static!r}"
    if static_kw:
        s += f" static_kw={dict(static_kw)!r}"
    return s + f" device={device!r}"


def _leaf_str(lk):
    if lk[0] == "static":
        return f"{lk[1]} {lk[2]!r}"
    if lk[0] == "weak":
        return f"{lk[1]} (traced)"
    return f"{_dt.BY_CODE[lk[1]].name}{list(lk[0])}"


def explain_miss(key, cached, static_argnums=()):
    """Why ``key`` missed the trace cache, against the closest of the ``cached`` keys (the
    one differing in the fewest places): the changed argument paths with their old and new
    shapes/dtypes, static values, tree structure or device (``QUABLA_EXPLAIN_CACHE_MISSES``)."""
    if not cached:
        return "first call (no earlier trace of this function)"

    def diffs(old):
        out = []
        tree, leaves, static, static_kw, device = key
        otree, oleaves, ostatic, ostatic_kw, odevice = old
        if tree != otree:
            out.append(f"the arguments' structure changed: {otree!r} -> {tree!r}")
        elif leaves != oleaves:
            try:
                paths = [_tree.keystr(p) for p, _ in _tree.flatten_with_path(_tree.unflatten(tree, list(range(len(leaves)))))[0]]
            except Exception:  # noqa: BLE001 - a description, never an error
                paths = [f"leaf {i}" for i in range(len(leaves))]
            for path, a, b in zip(paths, oleaves, leaves):
                if a != b:
                    out.append(f"argument {_arg_path(path)}: {_leaf_str(a)} -> {_leaf_str(b)}")
        for i, (a, b) in enumerate(zip(ostatic, static)):
            if a != b:
                pos = static_argnums[i] if i < len(static_argnums) else i
                out.append(f"static argument {pos}: {a!r} -> {b!r}")
        if ostatic_kw != static_kw:
            out.append(f"static keyword arguments: {dict(ostatic_kw)!r} -> {dict(static_kw)!r}")
        if device != odevice:
            out.append(f"device: {odevice!r} -> {device!r}")
        return out or ["a new signature"]

    best = min((diffs(k) for k in cached), key=len)
    return f"cache miss ({len(cached)} earlier trace{'s' if len(cached) != 1 else ''}); closest differs in: " + "; ".join(best)


def _arg_path(path):
    """``[0][1]['w']`` (a path in ``(args, kwargs)``) as ``args[1]['w']`` / ``kwargs['w']``."""
    if path.startswith("[0]"):
        return "args" + path[3:]
    if path.startswith("[1]"):
        return "kwargs" + path[3:]
    return path


class Traced:
    """What ``qb.jit(f).trace(...)`` returns (``jax.stages.Traced``): ``fun_name``,
    ``in_avals``/``out_avals`` (flat lists of :class:`ShapeDtype`), ``out_info`` (the output
    pytree of ShapeDtypes), ``in_tree``/``out_tree``, ``jaxpr`` (the traced program's text:
    Quabla's IR is its ``quabla`` MLIR dialect) and ``lower()``."""

    def __init__(self, fun_name, lowered, in_avals, out_avals, out_tree):
        self.fun_name = fun_name
        self._lowered = lowered
        self.in_avals = in_avals
        self.out_avals = out_avals
        self.in_tree = lowered.in_tree
        self.out_tree = out_tree
        self.out_info = _tree.unflatten(out_tree, out_avals)

    @property
    def jaxpr(self):
        return self._lowered.as_text()

    def lower(self):
        """The :class:`Lowered` program (``.as_text()``, ``.compile()``)."""
        return self._lowered


class Lowered:
    """A traced program: ``.as_text()`` is its quabla-dialect MLIR (with the user's source
    locations), ``.compile()`` compiles it for the jitted function's device."""

    def __init__(self, jitted, program, out_tree, in_tree, static_argnums, static, nargs):
        self._jitted = jitted
        self.program = program
        self.out_tree = out_tree
        self.in_tree = in_tree
        self._static_argnums = static_argnums
        self._static = static
        self._nargs = nargs

    def as_text(self, optimized=False, dialect="quabla"):
        """The module as MLIR text.

        Args:
          optimized: for ``dialect="quabla"``, give the module after quabla-autodiff,
            quabla-inline and quabla-canonicalize (what is compiled).
          dialect: ``"quabla"`` (the traced program) or ``"stablehlo"`` (the optimized
            program exported to StableHLO with a public ``@main``, runnable by XLA and IREE).

        Returns:
          The MLIR text.

        Example:
          >>> import quabla as qb
          >>> text = qb.jit(lambda x: qb.sin(x) * 2.0).lower(qb.ones((3,))).as_text(dialect="stablehlo")
          >>> "stablehlo.sine" in text
          True
        """
        if dialect == "stablehlo":
            return self.program.stablehlo_text()
        if dialect != "quabla":
            from .errors import UnsupportedOperationError

            raise UnsupportedOperationError(
                f"Lowered.as_text: dialect must be 'quabla' or 'stablehlo', got {dialect!r}", op="as_text"
            )
        return self.program.optimized_text() if optimized else self.program.as_text()

    def as_stablehlo(self):
        """The optimized program exported to StableHLO (see :meth:`as_text`)."""
        return self.as_text(dialect="stablehlo")

    def compile(self):
        """Compiles; returns a :class:`Compiled` callable with arguments of the same
        structure, shapes and dtypes."""
        self._jitted._check_device()
        return Compiled(self, self.program.compile(device=self._jitted._device))


class Compiled:
    """A compiled program, called with arguments matching the lowered signature."""

    def __init__(self, lowered, compiled):
        self._lowered = lowered
        self._compiled = compiled

    def __call__(self, *args, **kwargs):
        low = self._lowered
        sa = low._static_argnums
        kwargs, _ = low._jitted._split_kwargs(kwargs)
        dyn_args = tuple(a for i, a in enumerate(args) if i not in sa)
        leaves, tree = _tree.flatten((dyn_args, kwargs))
        if tree != low.in_tree:
            raise _errors.ArgumentTypeError(f"compiled function: argument structure {tree!r} differs from the lowered {low.in_tree!r}")
        tensors = [_to_array(np.asarray(x)) if isinstance(x, (np.ndarray, np.generic)) else x for x in leaves]
        tensors = [x for x in tensors if isinstance(x, Tensor)]
        return _tree.unflatten(low.out_tree, self._compiled(tensors))


def jit(fun=None, *, device=None, static_argnums=None, static_argnames=None, max_traces=None, in_shardings=None, out_shardings=None, resident=False,
        donate_argnums=None, donate_argnames=None, keep_unused=False, inline=False, backend=None, compiler_options=None, abstracted_axes=None):
    """Compiles ``fun`` with Quabla: traced once per signature, then run as a compiled
    program.

    Args:
        fun: a function of pytrees of arrays (Tensors, NumPy arrays) and Python numbers.
        device: None or "cpu" (the devices of :func:`qb.devices`); "mlx": run by MLX
            (``mx.compile`` of the emitted ``mlx.core`` calls; results stay MLX arrays until
            read); or "xla": compiled and run by XLA (through jaxlib), partitioned over the
            mesh of the shardings.
        static_argnums: positional arguments passed by value (hashable, part of the key).
        static_argnames: parameters passed by value when given by keyword. As in JAX, when
            only one of ``static_argnums``/``static_argnames`` is given the other is
            inferred from ``fun``'s signature, so a static parameter is static whether it is
            passed by position or by keyword.
        max_traces: the most signatures kept compiled (LRU: a new signature past it evicts the
            least recently used one and frees its code); None means ``QUABLA_MAX_TRACES``
            (default 8).
        in_shardings: as in JAX: a :class:`qb.sharding.NamedSharding` (or None: replicated)
            for every argument, or a tuple with one per positional argument, each a pytree
            prefix of that argument. Implies ``device="xla"`` (docs/distributed.md).
        out_shardings: likewise for the results (None: XLA chooses).
        resident: on the xla device, return the results as XLA arrays that stay on the
            devices (pass them to the next call: no host round trip) instead of Tensors.
        donate_argnums, donate_argnames: JAX's donation hints, checked and accepted:
            Quabla does not reuse a donated argument's buffer (the caller's array stays
            valid), so programs written for donation run unchanged.
        keep_unused, inline, compiler_options: accepted for JAX compatibility (Quabla's
            pipeline decides both; compiler options are XLA's).
        backend: None or ``"cpu"``; another platform name is the ``device``.
        abstracted_axes: must be None (no dynamic shapes).

    Returns:
        A callable with ``.lower(*args)``.

    Example:
        >>> f = qb.jit(lambda x, y: qb.sum(x * y))
        >>> f(qb.array([1.0, 2.0]), qb.array([3.0, 4.0])).item()
        11.0
        >>> g = qb.jit(lambda x, axis: qb.sum(x, axis=axis), static_argnames="axis")
        >>> g(qb.ones((2, 3)), axis=1).tolist()
        [3.0, 3.0]
    """
    if fun is None:
        return lambda f: jit(
            f, device=device, static_argnums=static_argnums, static_argnames=static_argnames, max_traces=max_traces,
            in_shardings=in_shardings, out_shardings=out_shardings, resident=resident, donate_argnums=donate_argnums,
            donate_argnames=donate_argnames, keep_unused=keep_unused, inline=inline, backend=backend,
            compiler_options=compiler_options, abstracted_axes=abstracted_axes,
        )
    if not callable(fun):
        raise ArgumentTypeError(f"jit: expected a callable, got {type(fun).__name__}")
    _check_jax_options(donate_argnums, donate_argnames, compiler_options, abstracted_axes)
    if backend is not None:
        if not isinstance(backend, str):
            raise ArgumentTypeError(f"jit: backend must be a platform name such as 'cpu' or None, got {type(backend).__name__}")
        if backend != "cpu" and device is None:
            device = backend
    if isinstance(fun, Jitted):
        fun = fun.__wrapped__
    if device == "xla" or in_shardings is not None or out_shardings is not None or resident:
        return _xla_jit(fun, device, static_argnums, static_argnames, max_traces, in_shardings, out_shardings, resident)
    return Jitted(_slow, fun, device=device, static_argnums=static_argnums, max_traces=max_traces, static_argnames=static_argnames)


def _check_jax_options(donate_argnums, donate_argnames, compiler_options, abstracted_axes):
    """Checks the jit options Quabla accepts for JAX compatibility without acting on them."""
    if donate_argnums is not None:
        nums = (donate_argnums,) if isinstance(donate_argnums, int) else donate_argnums
        if isinstance(donate_argnums, bool) or not isinstance(nums, (tuple, list)) or not all(isinstance(i, int) and not isinstance(i, bool) for i in nums):
            raise ArgumentTypeError(f"jit: donate_argnums must be an int or a sequence of ints, got {donate_argnums!r}")
    if donate_argnames is not None:
        names = (donate_argnames,) if isinstance(donate_argnames, str) else donate_argnames
        if not isinstance(names, (tuple, list)) or not all(isinstance(n, str) for n in names):
            raise ArgumentTypeError(f"jit: donate_argnames must be a str or a sequence of str, got {donate_argnames!r}")
    if compiler_options is not None and not isinstance(compiler_options, dict):
        raise ArgumentTypeError(f"jit: compiler_options must be a dict or None, got {type(compiler_options).__name__}")
    if abstracted_axes is not None:
        raise UnsupportedOperationError("jit: abstracted_axes (dynamic shapes) is not available in Quabla", op="jit")


# Executors written in Python, by device name: the jitted-function class of each. Filled by
# their modules when the package loads (python/quabla/_xla.py registers "xla"), so that this
# module does not import them (they build on it).
PYTHON_EXECUTORS = {}


def _xla_jit(fun, device, static_argnums, static_argnames, max_traces, in_shardings, out_shardings, resident):
    """The ``xla`` executor's jit (python/quabla/_xla.py)."""
    if device not in (None, "xla"):
        raise UnsupportedOperationError(
            f"jit({_name(fun)}): in_shardings, out_shardings and resident need device='xla', got device={device!r}", op="jit", device=device
        )
    from .sharding import available

    if not available():
        raise UnsupportedOperationError(
            f"jit({_name(fun)}): device 'xla' needs jax and jaxlib (pip install 'quabla[xla]')", op="jit", device="xla"
        )
    return PYTHON_EXECUTORS["xla"](fun, in_shardings, out_shardings, static_argnums, static_argnames, max_traces, resident)


def export(fun, *args, static_argnums=None, **kwargs):
    """Traces ``fun`` on ``args`` (arrays or :class:`ShapeDtype` leaves) and returns the
    program exported to StableHLO text (generic form, public ``@main`` with the flattened
    arguments and results), ready for XLA or IREE (docs/stablehlo.md).

    Args:
      fun: the function to export; transforms inside it (grad, vmap, ...) are expanded.
      *args: example arguments or ShapeDtype leaves fixing shapes and dtypes.
      static_argnums: positions of arguments treated as compile-time constants.

    Returns:
      The StableHLO module as text.

    Example:
      >>> import quabla as qb
      >>> text = qb.export(qb.grad(lambda x: qb.sum(x ** 2)), qb.ShapeDtype((3,), qb.float64))
      >>> text.count("func.func @main")
      1
    """
    if not callable(fun):
        raise ArgumentTypeError(f"export: expected a callable, got {type(fun).__name__}")
    return jit(fun, static_argnums=static_argnums).lower(*args, **kwargs).as_text(dialect="stablehlo")
