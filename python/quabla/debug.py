"""Debugging aids that work inside ``jit``, ``grad`` and ``vmap``, as ``jax.debug``.

``qb.debug.print("x = {x}", x=x)`` formats its arguments with ``str.format`` on their runtime
values and writes the line to ``sys.stdout``; ``qb.debug.callback(fn, *args, **kwargs)``
calls ``fn`` on them. Outside a trace both run at once. Inside a traced function each array
argument that is traced becomes one ``quabla.host_callback`` op of the program (the other
arguments are kept by the Python callback as they were at trace time); the compiled program
(or the interpreter) hands the values to the callback when it runs, every time it runs, in
program order. Under ``grad`` the callback sees the primal values (it has no tangent); under
``vmap`` it is called once per example, as JAX's unrolled batching rule (nested vmaps: the
innermost vmap's index varies slowest, as in JAX). Exported StableHLO keeps the callback as a
host-only ``stablehlo.custom_call @quabla.host_callback`` (docs/stablehlo.md).
"""

import cmd
import inspect
import itertools
import linecache
import os
import pprint
import sys
import traceback

from . import _quabla as _q
from . import _trace
from . import tree as _tree
from .errors import ArgumentTypeError, InvalidArgumentError

__all__ = ["breakpoint", "callback", "print"]


def _leaf_values(items):
    """The callback's array values and their vmap flags (outermost vmap first)."""
    return [t for t, _ in items], [list(f) for _, f in items]


def _examples(values, flags):
    """Each example's values: one tuple per combination of the vmapped axes, the innermost
    vmap's index varying slowest (JAX's order). Unbatched values repeat in every example."""
    levels = len(flags[0]) if flags else 0
    sizes = {}
    for v, fl in zip(values, flags):
        for lvl, on in enumerate(fl):
            if on:
                sizes[lvl] = v.shape[sum(fl[:lvl])]
    order = sorted(sizes, reverse=True)  # innermost vmap first: the slowest index
    if not order:
        yield tuple(values)
        return
    for idx in itertools.product(*(range(sizes[lvl]) for lvl in order)):
        at = dict(zip(order, idx))
        ex = []
        for v, fl in zip(values, flags):
            lead = tuple(at[lvl] for lvl in range(levels) if fl[lvl])
            ex.append(v[lead] if lead else v)
        yield tuple(ex)


def _innermost(leaves):
    trace = None
    for x in leaves:
        if type(x) is _trace.Tracer:
            t = x._trace
            if trace is None or (t is not trace and t.depth > trace.depth):
                trace = t
    return trace if trace is not None else _trace.current()


def callback(callback, *args, ordered=False, **kwargs):
    """Calls ``callback(*args, **kwargs)`` with the runtime values of the arguments, as
    ``jax.debug.callback``, inside ``jit``, ``grad`` and ``vmap`` too (once per example under
    ``vmap``; primal values under ``grad``).

    Args:
        callback: a Python callable; its return value is ignored.
        *args, **kwargs: pytrees; traced array leaves arrive as ``qb.Tensor``, every other
            leaf as it was when the function was traced.
        ordered: accepted for JAX compatibility; callbacks always run in program order.

    Returns:
        None. An exception the callback raises inside a compiled program cannot unwind through
        it: it is reported through ``sys.unraisablehook`` and the program goes on.

    Example:
        >>> seen = []
        >>> f = qb.jit(lambda x: (qb.debug.callback(lambda v: seen.append(v.tolist()), x), x + 1)[1])
        >>> f(qb.array([1.0, 2.0])).tolist(), seen
        ([2.0, 3.0], [[1.0, 2.0]])
    """
    if not callable(callback):
        raise ArgumentTypeError(f"qb.debug.callback: callback must be callable, got {type(callback).__name__}")
    _stage(callback, args, kwargs)


def _stage(fn, args, kwargs):
    leaves, treedef = _tree.flatten((args, kwargs))
    trace = _innermost(leaves)
    if trace is None:
        fn(*args, **kwargs)
        return
    pos = [i for i, x in enumerate(leaves) if type(x) is _trace.Tracer]
    operands = [trace.lift(leaves[i]) for i in pos]

    def host(items):
        values, flags = _leaf_values(items)
        for ex in _examples(values, flags):
            full = list(leaves)
            for i, v in zip(pos, ex):
                full[i] = v
            a, k = _tree.unflatten(treedef, full)
            fn(*a, **k)

    cid = _q.register_host_callback(host)
    if not operands:  # still runs each time the program runs: a dummy scalar operand
        operands = [trace.const(_q.full([], 0, _dtypes.int32.code, "qb.debug.callback"))]
        pos = []
    n = len(operands)
    for k, x in enumerate(operands):
        _trace.bind(_q.Op("host_callback", callback=cid, index=k, count=n, batched=[]), x)


def _numpy(x):
    return x.numpy() if isinstance(x, _q.Tensor) else x


def print(fmt, *args, ordered=False, **kwargs):  # noqa: A001 (JAX's name)
    """Prints ``fmt.format(*args, **kwargs)`` with the arguments' runtime values on
    ``sys.stdout``, as ``jax.debug.print``: inside ``jit`` every time the compiled program runs,
    in program order; under ``grad`` the primal values; under ``vmap`` one line per example.

    Args:
        fmt: a ``str.format`` string.
        *args, **kwargs: pytrees; array leaves are formatted as NumPy arrays.
        ordered: accepted for JAX compatibility; prints always run in program order.

    Returns:
        None.

    Example:
        >>> f = qb.jit(lambda x: (qb.debug.print("x = {x}", x=x), x * 2)[1])
        >>> _ = f(qb.array([1.0, 2.0]))
        x = [1. 2.]
    """
    if not isinstance(fmt, str):
        raise ArgumentTypeError(f"qb.debug.print: fmt must be a str, got {type(fmt).__name__}")

    def show(*a, **k):
        a = _tree.map(_numpy, a)
        k = _tree.map(_numpy, k)
        sys.stdout.write(fmt.format(*a, **k) + "\n")

    _stage(show, args, kwargs)



_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


class _Opaque:
    """A local variable the breakpoint keeps as it was at trace time (not a pytree)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _local(value):
    """``value`` itself when it flattens as a pytree (its traced leaves then arrive at run
    time), else wrapped so that flattening the frame does not fail on it."""
    try:
        _tree.flatten(value)
        return value
    except Exception:
        return _Opaque(value)


class _Frame:
    """One stack frame as the debugger shows it: where it is, its globals (as at the call)
    and its locals (runtime values filled in when the program runs)."""

    def __init__(self, filename, lineno, function, f_globals, f_locals):
        self.filename, self.lineno, self.function = filename, lineno, function
        self.globals, self.locals = f_globals, f_locals


class _Debugger(cmd.Cmd):
    """The command-line debugger ``qb.debug.breakpoint`` enters (JAX's ``jdb`` commands):
    ``p``/``pp`` print an expression, ``u``/``d`` move up/down the stack, ``l`` lists the
    source, ``w`` prints the stack, ``c`` continues, ``q`` quits the debugger (the program
    goes on); any other line is executed in the selected frame."""

    prompt = "(jdb) "

    def __init__(self, frames, stdin=None, stdout=None):
        super().__init__(stdin=stdin, stdout=stdout)
        self.use_rawinput = stdin is None and sys.stdin.isatty()
        self.frames, self.index = frames, 0

    def _frame(self):
        return self.frames[self.index]

    def _eval(self, expr):
        f = self._frame()
        return eval(expr, f.globals, dict(f.locals))

    def _error(self):
        self.stdout.write("".join(traceback.format_exception_only(*sys.exc_info()[:2])))

    def default(self, line):
        f = self._frame()
        try:
            code = compile(line + "\n", "<jdb>", "single")
            exec(code, f.globals, dict(f.locals))
        except Exception:
            self._error()

    def emptyline(self):
        return False

    def do_p(self, arg):
        """p expression: print the value of the expression."""
        try:
            self.stdout.write(repr(self._eval(arg)) + "\n")
        except Exception:
            self._error()

    def do_pp(self, arg):
        """pp expression: pretty-print the value of the expression."""
        try:
            self.stdout.write(pprint.pformat(self._eval(arg)) + "\n")
        except Exception:
            self._error()

    def do_up(self, _):
        """u(p): select the frame of the caller."""
        if self.index + 1 >= len(self.frames):
            self.stdout.write("At topmost frame.\n")
        else:
            self.index += 1
        self._where_one(self.index)

    def do_down(self, _):
        """d(own): select the frame the current one called."""
        if self.index == 0:
            self.stdout.write("At bottommost frame.\n")
        else:
            self.index -= 1
        self._where_one(self.index)

    def _where_one(self, i):
        f = self.frames[i]
        mark = "->" if i == self.index else "  "
        line = linecache.getline(f.filename, f.lineno).strip()
        self.stdout.write(f"{mark} {f.filename}({f.lineno}) {f.function}()\n   {line}\n")

    def do_where(self, _):
        """w(here): print the stack, the newest frame last."""
        for i in reversed(range(len(self.frames))):
            self._where_one(i)

    def do_list(self, _):
        """l(ist): print the source around the current line."""
        f = self._frame()
        lines = linecache.getlines(f.filename, f.globals)
        lo = max(f.lineno - 6, 0)
        for k in range(lo, min(f.lineno + 5, len(lines))):
            mark = "->" if k + 1 == f.lineno else "  "
            self.stdout.write(f"{k + 1:4d} {mark} {lines[k].rstrip()}\n")

    def do_continue(self, _):
        """c(ontinue): leave the debugger; the program goes on."""
        return True

    def do_EOF(self, _):
        self.stdout.write("\n")
        return True

    do_p.__doc__ = do_p.__doc__
    do_u, do_d, do_w, do_bt, do_l = do_up, do_down, do_where, do_where, do_list
    do_c = do_cont = do_q = do_quit = do_exit = do_continue


def _frames(skip, filter_frames, num_frames):
    out = []
    f = sys._getframe(skip)
    while f is not None:
        name = os.path.abspath(f.f_code.co_filename)
        if not (filter_frames and name.startswith(_PACKAGE_DIR + os.sep)):
            out.append(f)
        f = f.f_back
    return out if num_frames is None else out[:num_frames]


def breakpoint(*, backend=None, filter_frames=True, num_frames=None, ordered=False, token=None, **kwargs):  # noqa: A001 (JAX's name)
    """Stops the program at this point and opens a command-line debugger on its stack, as
    ``jax.debug.breakpoint``: inside ``jit`` when the compiled program reaches it, with the
    runtime values of the traced local variables (under ``vmap`` once per example, under
    ``grad`` the primal values; in a ``cond`` branch only when that branch runs).

    The debugger reads commands from ``sys.stdin``: ``p expr`` / ``pp expr`` print,
    ``u`` / ``d`` move up and down the stack, ``l`` lists the source, ``w`` prints the stack,
    ``c`` (or ``q``, or the end of the input) continues; any other line runs in the selected
    frame. Local variables that are not arrays have the values they had when the function
    was traced.

    Args:
        backend: ``None`` or ``"cli"``: the command-line debugger (JAX's colab and web
            debuggers are not available).
        filter_frames: leave Quabla's own frames out of the stack.
        num_frames: show only this many frames, the innermost first (None: all).
        ordered: accepted for JAX compatibility; breakpoints run in program order.
        token: optional pytree returned unchanged (JAX's alternative to ``ordered``).
        **kwargs: accepted for JAX compatibility (options of other debugger backends).

    Returns:
        ``token`` (None when not given).

    Example:
        >>> import io, sys
        >>> stdin, sys.stdin = sys.stdin, io.StringIO("p y\\nc\\n")
        >>> f = qb.jit(lambda x: (y := x * 2, qb.debug.breakpoint(), y + 1)[2])
        >>> f(qb.array(3.0)).item()
        Entering jdb:
        (jdb) Tensor(6., dtype=float64)
        (jdb) 7.0
        >>> sys.stdin = stdin
    """
    if backend not in (None, "cli"):
        raise InvalidArgumentError(f"qb.debug.breakpoint: backend must be None or 'cli' (the command-line debugger), got {backend!r}")
    if token is not None and ordered:
        raise InvalidArgumentError("qb.debug.breakpoint: ordered and token are mutually exclusive")
    if num_frames is not None and (not isinstance(num_frames, int) or isinstance(num_frames, bool) or num_frames < 1):
        raise InvalidArgumentError(f"qb.debug.breakpoint: num_frames must be a positive int or None, got {num_frames!r}")
    frames = _frames(2, filter_frames, num_frames)
    info = [(f.f_code.co_filename, f.f_lineno, f.f_code.co_name, f.f_globals) for f in frames]
    local_values = [{k: _local(v) for k, v in f.f_locals.items()} for f in frames]
    del frames

    def enter(values):
        shown = [
            _Frame(fn, ln, name, g, {k: (v.value if isinstance(v, _Opaque) else v) for k, v in loc.items()})
            for (fn, ln, name, g), loc in zip(info, values)
        ]
        sys.stdout.write("Entering jdb:\n")
        _Debugger(shown, stdin=sys.stdin, stdout=sys.stdout).cmdloop()

    _stage(enter, (local_values,), {})
    return token


from . import dtypes as _dtypes  # noqa: E402
