"""``qb.profiler``: JAX's ``jax.profiler`` API over a small wall-clock tracer.

Between :func:`start_trace` and :func:`stop_trace` (or inside ``with trace(log_dir):``)
Quabla records, per thread, the spans it can observe from Python:

- each :class:`TraceAnnotation` / :class:`StepTraceAnnotation` block and each call of a
  function decorated with :func:`annotate_function` (category ``annotation`` / ``step``;
  the keyword arguments given become the event's ``args``);
- each top-level call of a ``qb.jit`` function, ``device="xla"`` ones included (category
  ``jit``, named ``jit(f)``: the whole call, trace and compile included when it missed
  the cache), and within it each trace-and-compile of a new signature (category
  ``compile``, ``compile jit(f)``). The transforms' eager calls (``qb.grad(f)(x)``) compile
  and run through ``jit`` and show as ``jit(grad(f))``.

:func:`stop_trace` writes them to ``log_dir/quabla.trace.json`` in the Chrome trace event
format (``{"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}``; complete
events ``"ph": "X"`` with ``ts``/``dur`` in microseconds from the start of the trace, ``pid``
the process id, ``tid`` a small per-thread number, plus ``"ph": "M"`` process and thread
name records), which ``chrome://tracing`` and https://ui.perfetto.dev open.

Departures from JAX: JAX writes an XSpace protobuf under
``log_dir/plugins/profile/<run>/`` for TensorBoard's profile plugin, with device kernels,
XLA ops and Python frames; Quabla's file holds only the spans above (no per-op or device
timeline: a compiled program runs as one span), and TensorBoard does not read it. Outside a
trace the annotations cost one flag test and record nothing, as JAX's.
"""

import functools
import json
import os
import threading
import time

from . import _quabla as _q
from ._trace import current as _current
from ._xla import XlaJitted
from .errors import ArgumentTypeError, QuablaError, UnsupportedOperationError
from .jit import Jitted, _name

__all__ = [
    "TraceAnnotation",
    "StepTraceAnnotation",
    "annotate_function",
    "trace",
    "start_trace",
    "stop_trace",
    "device_memory_profile",
    "save_device_memory_profile",
    "start_server",
    "stop_server",
    "ProfilerError",
]

TRACE_FILE = "quabla.trace.json"


class ProfilerError(QuablaError, RuntimeError):
    """A trace started while one runs, or stopped when none does (JAX raises RuntimeError
    there; this is one)."""


class _State:
    __slots__ = ("lock", "active", "log_dir", "t0", "events", "tids", "saved")

    def __init__(self):
        self.lock = threading.Lock()
        self.active = False
        self.log_dir = None
        self.t0 = 0
        self.events = []
        self.tids = {}
        self.saved = {}


_S = _State()


def _record(name, cat, start_ns, end_ns, args):
    """Appends one complete event (if a trace still runs)."""
    with _S.lock:
        if not _S.active:
            return
        ident = threading.get_ident()
        tid = _S.tids.setdefault(ident, (len(_S.tids) + 1, threading.current_thread().name))[0]
        ev = {"name": name, "cat": cat, "ph": "X", "ts": (start_ns - _S.t0) / 1000.0, "dur": (end_ns - start_ns) / 1000.0,
              "pid": os.getpid(), "tid": tid}
        if args:
            ev["args"] = {str(k): _jsonable(v) for k, v in args.items()}
        _S.events.append(ev)


def _jsonable(v):
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    return str(v)


class TraceAnnotation:
    """A named span in the trace, as ``jax.profiler.TraceAnnotation``: a context manager; while
    a trace runs, the time from entering to leaving is recorded as an event named ``name``
    with the keyword arguments as its ``args``; otherwise it does nothing.

    Args:
        name: the span's name.
        **kwargs: values shown with the event (converted to strings unless JSON numbers,
            strings or bools).

    Example:
        >>> with qb.profiler.TraceAnnotation("load", batch=3):
        ...     y = qb.ones(2)
    """

    __slots__ = ("name", "kwargs", "_start", "_cat")

    def __init__(self, name, **kwargs):
        if not isinstance(name, str):
            raise ArgumentTypeError(f"TraceAnnotation: name must be a string, got a {type(name).__name__}")
        self.name = name
        self.kwargs = kwargs
        self._start = None
        self._cat = "annotation"

    def __enter__(self):
        self._start = time.perf_counter_ns() if _S.active else None
        return self

    def __exit__(self, *exc):
        if self._start is not None:
            _record(self.name, self._cat, self._start, time.perf_counter_ns(), self.kwargs)
            self._start = None
        return False


class StepTraceAnnotation(TraceAnnotation):
    """A span marking one step of a training loop, as ``jax.profiler.StepTraceAnnotation``
    (category ``step``; pass ``step_num=i`` as JAX's profiler expects, it is shown in the
    event's ``args``).

    Args:
        name: the step's name (``"train"``).
        **kwargs: values shown with the event, ``step_num`` among them.

    Example:
        >>> for i in range(2):
        ...     with qb.profiler.StepTraceAnnotation("train", step_num=i):
        ...         y = qb.ones(2) * i
    """

    __slots__ = ()

    def __init__(self, name, **kwargs):
        super().__init__(name, **kwargs)
        self._cat = "step"


def annotate_function(func, name=None, **decorator_kwargs):
    """``func`` wrapped so that each call is a :class:`TraceAnnotation` span named ``name``
    (default: the function's qualified name), as ``jax.profiler.annotate_function``; use it as
    a decorator (``functools.partial(annotate_function, name=...)`` for a name).

    Args:
        func: the function.
        name: the span's name, or None.
        **decorator_kwargs: values shown with each event.

    Returns:
        The wrapped function.

    Example:
        >>> f = qb.profiler.annotate_function(lambda x: x + 1, name="inc")
        >>> f(qb.ones(2)).tolist()
        [2.0, 2.0]
    """
    if not callable(func):
        raise ArgumentTypeError(f"annotate_function: func must be callable, got a {type(func).__name__}")
    if name is not None and not isinstance(name, str):
        raise ArgumentTypeError(f"annotate_function: name must be a string or None, got a {type(name).__name__}")
    label = name or getattr(func, "__qualname__", None) or getattr(func, "__name__", type(func).__name__)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with TraceAnnotation(label, **decorator_kwargs):
            return func(*args, **kwargs)

    return wrapper


# --- Observing jit calls: while a trace runs, Jitted.__call__ (the Rust fast path's entry,
# inherited from _quabla.JitFunction) and Jitted._compile are wrapped; stop_trace restores them.


def _timed_call(self, *args, **kwargs):
    if _current() is not None:  # staged into an enclosing trace: not a run
        return _S.saved["call"](self, *args, **kwargs)
    start = time.perf_counter_ns()
    try:
        return _S.saved["call"](self, *args, **kwargs)
    finally:
        _record(f"jit({_name(self.__wrapped__)})", "jit", start, time.perf_counter_ns(), None)


def _timed_xla_call(self, *args, **kwargs):
    if _current() is not None:
        return _S.saved["xla_call"](self, *args, **kwargs)
    start = time.perf_counter_ns()
    try:
        return _S.saved["xla_call"](self, *args, **kwargs)
    finally:
        _record(f"jit({_name(self.__wrapped__)})", "jit", start, time.perf_counter_ns(), {"device": "xla"})


def _timed_compile(self, *args, **kwargs):
    start = time.perf_counter_ns()
    try:
        return _S.saved["compile"](self, *args, **kwargs)
    finally:
        _record(f"compile jit({_name(self.__wrapped__)})", "compile", start, time.perf_counter_ns(), None)


def _hook():
    _S.saved = {"call": _q.JitFunction.__call__, "compile": Jitted.__dict__["_compile"], "xla_call": XlaJitted.__dict__["__call__"]}
    Jitted.__call__ = _timed_call
    Jitted._compile = _timed_compile
    XlaJitted.__call__ = _timed_xla_call


def _unhook():
    if "__call__" in Jitted.__dict__ and Jitted.__dict__["__call__"] is _timed_call:
        del Jitted.__call__  # back to the extension's call (the fast path)
    if Jitted.__dict__.get("_compile") is _timed_compile:
        Jitted._compile = _S.saved["compile"]
    if XlaJitted.__dict__.get("__call__") is _timed_xla_call:
        XlaJitted.__call__ = _S.saved["xla_call"]


def _check_dir(fname, log_dir):
    if not isinstance(log_dir, (str, os.PathLike)):
        raise ArgumentTypeError(f"{fname}: log_dir must be a path (str or os.PathLike), got a {type(log_dir).__name__}")
    path = os.fspath(log_dir)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not path:
        raise ArgumentTypeError(f"{fname}: log_dir must not be empty")
    return path


def start_trace(log_dir, create_perfetto_link=False, create_perfetto_trace=False, profiler_options=None):
    """Starts recording (see the module's documentation for what and where), as
    ``jax.profiler.start_trace``. Only one trace runs at a time.

    Args:
        log_dir: the directory :func:`stop_trace` writes ``quabla.trace.json`` to (created if
            missing).
        create_perfetto_link: JAX waits for the trace to be opened in Perfetto; not
            available (UnsupportedOperationError).
        create_perfetto_trace: accepted: the file written is already one Perfetto opens.
        profiler_options: JAX's ``ProfileOptions`` (tracer levels); accepted and unused.

    Returns:
        None.

    Example:
        >>> import tempfile
        >>> d = tempfile.mkdtemp()
        >>> qb.profiler.start_trace(d)
        >>> qb.profiler.stop_trace()
    """
    path = _check_dir("start_trace", log_dir)
    if create_perfetto_link:
        raise UnsupportedOperationError("start_trace: create_perfetto_link is not available (open log_dir/quabla.trace.json in https://ui.perfetto.dev)", op="start_trace")
    del create_perfetto_trace, profiler_options
    with _S.lock:
        if _S.active:
            raise ProfilerError("start_trace: a trace is already running; only one may run at a time (call stop_trace first)")
        try:
            os.makedirs(path, exist_ok=True)
        except OSError as e:
            raise ArgumentTypeError(f"start_trace: cannot create log_dir {path!r}: {e}") from None
        _S.log_dir = path
        _S.events = []
        _S.tids = {}
        _S.t0 = time.perf_counter_ns()
        _hook()
        _S.active = True


def stop_trace():
    """Stops the running trace and writes ``log_dir/quabla.trace.json``, as
    ``jax.profiler.stop_trace``; raises ProfilerError when no trace runs.

    Returns:
        None.

    Example:
        >>> import tempfile, os
        >>> d = tempfile.mkdtemp()
        >>> qb.profiler.start_trace(d)
        >>> with qb.profiler.TraceAnnotation("work"):
        ...     y = qb.ones(2)
        >>> qb.profiler.stop_trace()
        >>> os.path.exists(os.path.join(d, "quabla.trace.json"))
        True
    """
    with _S.lock:
        if not _S.active:
            raise ProfilerError("stop_trace: no trace is running (call start_trace first)")
        _S.active = False
        _unhook()
        events, tids, path = _S.events, _S.tids, _S.log_dir
        _S.events, _S.tids = [], {}
    pid = os.getpid()
    meta = [{"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": {"name": "quabla"}}]
    meta += [{"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": tname}} for tid, tname in tids.values()]
    doc = {
        "traceEvents": meta + sorted(events, key=lambda e: (e["ts"], -e["dur"])),
        "displayTimeUnit": "ms",
        "otherData": {"producer": "quabla.profiler", "clock": "time.perf_counter_ns, microseconds from start_trace"},
    }
    target = os.path.join(path, TRACE_FILE)
    with open(target, "w") as f:
        json.dump(doc, f)


class trace:
    """A context manager recording a trace into ``log_dir`` (:func:`start_trace` on entry,
    :func:`stop_trace` on exit), as ``jax.profiler.trace``; also a decorator.

    Args:
        log_dir: the directory for ``quabla.trace.json``.
        create_perfetto_link: not available (UnsupportedOperationError).
        create_perfetto_trace: accepted (the file is one Perfetto opens).
        profiler_options: accepted and unused.

    Example:
        >>> import tempfile, os, json
        >>> d = tempfile.mkdtemp()
        >>> f = qb.jit(lambda x: x * 2)
        >>> with qb.profiler.trace(d):
        ...     y = f(qb.ones(2))
        >>> names = [e["name"] for e in json.load(open(os.path.join(d, "quabla.trace.json")))["traceEvents"]]
        >>> "jit(<lambda>)" in names and "compile jit(<lambda>)" in names
        True
    """

    def __init__(self, log_dir, create_perfetto_link=False, create_perfetto_trace=False, profiler_options=None):
        self._args = (_check_dir("trace", log_dir), create_perfetto_link, create_perfetto_trace, profiler_options)
        if create_perfetto_link:
            raise UnsupportedOperationError("trace: create_perfetto_link is not available (open log_dir/quabla.trace.json in https://ui.perfetto.dev)", op="trace")

    def __enter__(self):
        start_trace(*self._args)
        return None

    def __exit__(self, *exc):
        stop_trace()
        return False

    def __call__(self, func):
        if not callable(func):
            raise ArgumentTypeError(f"trace: as a decorator it takes a function, got a {type(func).__name__}")

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with trace(*self._args):
                return func(*args, **kwargs)

        return wrapper


def device_memory_profile(backend=None):
    """JAX returns a pprof profile of the live device buffers; Quabla keeps no per-buffer
    allocation record to build one from, so this raises UnsupportedOperationError.

    Args:
        backend: accepted as JAX's.

    Returns:
        Does not return.

    Example:
        >>> try:
        ...     qb.profiler.device_memory_profile()
        ... except qb.UnsupportedOperationError:
        ...     print("unavailable")
        unavailable
    """
    del backend
    raise UnsupportedOperationError("device_memory_profile: Quabla keeps no record of its buffers' allocations to build a pprof memory profile from", op="device_memory_profile")


def save_device_memory_profile(filename, backend=None):
    """JAX writes :func:`device_memory_profile` to ``filename``; not available in Quabla
    (UnsupportedOperationError).

    Args:
        filename: accepted as JAX's.
        backend: accepted as JAX's.

    Returns:
        Does not return.

    Example:
        >>> try:
        ...     qb.profiler.save_device_memory_profile("memory.prof")
        ... except qb.UnsupportedOperationError:
        ...     print("unavailable")
        unavailable
    """
    del filename, backend
    raise UnsupportedOperationError("save_device_memory_profile: Quabla keeps no record of its buffers' allocations to build a pprof memory profile from", op="save_device_memory_profile")


def start_server(port, requires_backend=True):
    """JAX starts a profiler server that TensorBoard connects to for on-demand captures;
    Quabla has none (UnsupportedOperationError): record with :func:`trace` instead.

    Args:
        port: accepted as JAX's.
        requires_backend: accepted as JAX's.

    Returns:
        Does not return.

    Example:
        >>> try:
        ...     qb.profiler.start_server(9999)
        ... except qb.UnsupportedOperationError:
        ...     print("unavailable")
        unavailable
    """
    del port, requires_backend
    raise UnsupportedOperationError("start_server: Quabla has no profiler server for TensorBoard; record with qb.profiler.trace(log_dir)", op="start_server")


def stop_server():
    """JAX stops its profiler server; Quabla has none (UnsupportedOperationError).

    Returns:
        Does not return.

    Example:
        >>> try:
        ...     qb.profiler.stop_server()
        ... except qb.UnsupportedOperationError:
        ...     print("unavailable")
        unavailable
    """
    raise UnsupportedOperationError("stop_server: Quabla has no profiler server", op="stop_server")
