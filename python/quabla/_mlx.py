"""The ``mlx`` executor's Python half: the helpers that the MLX emitter's source calls (``q.*``,
each writing one quabla op's semantics of docs/spec.md with ``mlx.core`` ops), and
:func:`build`, which executes that source and returns the program's callable.

Path of a call (docs/ARCHITECTURE.md, "MLX"): Quabla traces and optimizes the function as for
every device (transforms expanded by Quabla's passes; MLX's ``grad``/``vmap`` are never used);
the Rust emitter (``lowering/src/mlx``) writes the optimized module as Python source; the
extension's ``mlx`` executor (python/src/mlx.rs) calls :func:`build` once per program text,
then per call converts the inputs (:func:`to_mx`), runs the entry function and keeps the
outputs as ``mx.array``s behind device buffers (:func:`outputs`).

Straight-line functions (the names in the source's ``COMPILED``) are wrapped with
``mx.compile``; functions with control flow stay Python and call them. MLX runs on its CPU
stream here (``mx.set_default_device(mx.cpu)`` when no GPU backend exists); float64 exists on
that stream only.
"""

import math
import threading

import numpy as np

_state = {}
_lock = threading.Lock()


def available():
    """True when ``mlx.core`` imports (checked once)."""
    if "ok" not in _state:
        try:
            import mlx.core as mx  # noqa: F401
        except Exception:  # noqa: BLE001 - any import failure means "not available"
            _state["ok"] = False
        else:
            _state["ok"] = True
            _state["mx"] = mx
            gpu = False
            try:
                gpu = bool(mx.metal.is_available()) or bool(mx.cuda.is_available())
            except Exception:  # noqa: BLE001 - backends missing from the wheel
                gpu = False
            if not gpu:
                mx.set_default_device(mx.cpu)
    return _state["ok"]


def _mx():
    if not available():
        from .errors import UnsupportedOperationError

        raise UnsupportedOperationError("device 'mlx' is not available: mlx.core does not import (pip install 'mlx[cpu]')", op="jit", device="mlx")
    return _state["mx"]


# ---------------------------------------------------------------------------------------------
# Helpers called by the emitted source (`q.<name>`). They run while mx.compile traces, so they
# branch on dtypes and static attributes only, never on values.

def _bits(dt):
    mx = _state["mx"]
    return {mx.int32: 32, mx.int64: 64, mx.uint8: 8, mx.uint32: 32, mx.bool_: 1}[dt]


def _unsigned(dt):
    mx = _state["mx"]
    return dt in (mx.uint8, mx.uint32)


def _limits(dt):
    mx = _state["mx"]
    return {mx.int32: (-(2**31), 2**31 - 1), mx.int64: (-(2**63), 2**63 - 1), mx.uint8: (0, 255), mx.uint32: (0, 2**32 - 1)}[dt]


def const(hexbytes, dtype, shape):
    """A constant from its little-endian bytes."""
    mx = _state["mx"]
    np_dt = {mx.float32: np.float32, mx.float64: np.float64, mx.bool_: np.bool_, mx.int32: np.int32, mx.int64: np.int64, mx.uint8: np.uint8, mx.uint32: np.uint32}[dtype]
    return mx.array(np.frombuffer(bytes.fromhex(hexbytes), dtype=np_dt).reshape(shape), dtype=dtype)


def splat(hexbytes, dtype, shape):
    """A constant whose elements all equal one element given by its little-endian bytes."""
    mx = _state["mx"]
    return mx.broadcast_to(const(hexbytes, dtype, ()), shape)


def iota(shape, dim, dtype):
    mx = _state["mx"]
    n = shape[dim]
    src = mx.int32 if dtype == mx.bool_ else dtype
    r = mx.arange(n, dtype=src)
    r = mx.reshape(r, tuple(n if i == dim else 1 for i in range(len(shape))))
    r = mx.broadcast_to(r, shape)
    return mx.not_equal(r, 0) if dtype == mx.bool_ else r


def sign(x):
    """-1/0/+1; NaN and signed zeros unchanged; unsigned 0 or 1."""
    mx = _state["mx"]
    if x.dtype in (mx.float32, mx.float64):
        return mx.where(mx.equal(x, 0) | mx.isnan(x), x, mx.sign(x))
    if _unsigned(x.dtype):
        return mx.not_equal(x, 0).astype(x.dtype)
    return mx.sign(x)


def fmax(a, b):
    """NaN-propagating maximum with -0.0 < +0.0."""
    mx = _state["mx"]
    z = mx.equal(a, 0) & mx.equal(b, 0)
    return mx.where(z, a + b, mx.maximum(a, b))


def fmin(a, b):
    mx = _state["mx"]
    z = mx.equal(a, 0) & mx.equal(b, 0)
    return mx.where(z, -((-a) + (-b)), mx.minimum(a, b))


def fmod(a, b):
    """C fmod: the sign of the dividend; exact (MLX's remainder of two non-negative floats is fmod)."""
    mx = _state["mx"]
    r = mx.remainder(mx.abs(a), mx.abs(b))
    return mx.where(mx.less(a, 0), -r, r)


def _safe_divisor(a, b):
    """(divisor with 0 and the MIN / -1 case replaced by 1, mask of b == 0, mask of MIN / -1)."""
    mx = _state["mx"]
    zero = mx.equal(b, 0)
    if _unsigned(a.dtype):
        ovf = mx.zeros(a.shape, dtype=mx.bool_) if a.ndim else mx.array(False)
    else:
        lo, _ = _limits(a.dtype)
        ovf = mx.equal(a, mx.array(lo, dtype=a.dtype)) & mx.equal(b, mx.array(-1, dtype=a.dtype))
    one = mx.array(1, dtype=a.dtype)
    return mx.where(zero | ovf, one, b), zero, ovf


def int_div(a, b):
    """Integer division truncating toward zero; x / 0 = -1 (unsigned: the maximum); MIN / -1 = MIN."""
    mx = _state["mx"]
    bs, zero, ovf = _safe_divisor(a, b)
    if _unsigned(a.dtype):
        q = mx.floor_divide(a, bs)
        return mx.where(zero, mx.array(_limits(a.dtype)[1], dtype=a.dtype), q)
    q = mx.floor_divide(a, bs)
    r = mx.subtract(a, mx.multiply(q, bs))
    # floor -> trunc: one up where the remainder is nonzero and the signs differ.
    fix = mx.not_equal(r, 0) & mx.not_equal(mx.less(a, 0), mx.less(bs, 0))
    q = mx.where(fix, q + mx.array(1, dtype=a.dtype), q)
    return mx.where(zero, mx.array(-1, dtype=a.dtype), q)


def int_rem(a, b):
    """C %: the sign of the dividend; x % 0 = x; MIN % -1 = 0."""
    mx = _state["mx"]
    bs, zero, ovf = _safe_divisor(a, b)
    r = mx.remainder(a, bs)
    if not _unsigned(a.dtype):
        # Python-style (sign of the divisor) -> C-style (sign of the dividend).
        fix = mx.not_equal(r, 0) & mx.not_equal(mx.less(r, 0), mx.less(a, 0))
        r = mx.where(fix, mx.subtract(r, bs), r)
        r = mx.where(ovf, mx.array(0, dtype=a.dtype), r)
    return mx.where(zero, a, r)


def _shift_amount(a, b):
    """(amount as a's unsigned dtype with out-of-range amounts set to 0, mask of amounts >= width)."""
    mx = _state["mx"]
    w = _bits(a.dtype)
    big = mx.greater_equal(b, mx.array(w, dtype=b.dtype))
    if not _unsigned(b.dtype):
        big = big | mx.less(b, 0)
    return mx.where(big, mx.array(0, dtype=b.dtype), b), big


def _as_unsigned(dt):
    mx = _state["mx"]
    return {mx.int32: mx.uint32, mx.int64: mx.uint64, mx.uint8: mx.uint8, mx.uint32: mx.uint32}[dt]


def _as_signed(dt):
    mx = _state["mx"]
    return {mx.int32: mx.int32, mx.int64: mx.int64, mx.uint8: mx.int8, mx.uint32: mx.int32}[dt]


def _logical_shift(shift, a, b):
    """``shift`` (mx.left_shift or mx.right_shift) on the bits of ``a`` as unsigned, 0 where
    the amount is negative or at least the width."""
    mx = _state["mx"]
    s, big = _shift_amount(a, b)
    ut = _as_unsigned(a.dtype)
    r = shift(a.view(ut), s.astype(ut)).view(a.dtype)
    return mx.where(big, mx.zeros_like(a), r)


def shift_left(a, b):
    return _logical_shift(_state["mx"].left_shift, a, b)


def shift_right_logical(a, b):
    return _logical_shift(_state["mx"].right_shift, a, b)


def shift_right_arithmetic(a, b):
    mx = _state["mx"]
    s, big = _shift_amount(a, b)
    st = _as_signed(a.dtype)
    sa = a.view(st)
    r = mx.right_shift(sa, s.astype(st))
    fill = mx.where(mx.less(sa, 0), mx.array(-1, dtype=st), mx.array(0, dtype=st))
    return mx.where(big, fill, r).view(a.dtype)


# Float64 exp, sin, cos and sigmoid: MLX's CPU kernels for these are float32-accurate
# approximations even for float64 (relative errors 3e-7 .. 5e-6); these formulas use MLX's
# float64 sinh, cosh and tan, which are accurate to an ulp or two, so each result is within a
# few ulps.


def exp64(x):
    """e^x = sinh|x| + cosh|x| (no cancellation), inverted for negative x."""
    mx = _state["mx"]
    ax = mx.abs(x)
    e = mx.sinh(ax) + mx.cosh(ax)
    return mx.where(mx.less(x, 0), 1.0 / e, e)


def sin64(x):
    """2t / (1 + t^2), t = tan(x / 2)."""
    mx = _state["mx"]
    t = mx.tan(x * 0.5)
    return mx.where(mx.isinf(t), mx.zeros_like(x), (2.0 * t) / (1.0 + t * t))


def cos64(x):
    """(1 - t^2) / (1 + t^2), t = tan(x / 2)."""
    mx = _state["mx"]
    t = mx.tan(x * 0.5)
    t2 = t * t
    return mx.where(mx.isinf(t), -mx.ones_like(x), (1.0 - t2) / (1.0 + t2))


def sigmoid64(x):
    mx = _state["mx"]
    return 1.0 / (1.0 + exp64(-x))


def _exp(x):
    mx = _state["mx"]
    return exp64(x) if x.dtype == mx.float64 else mx.exp(x)


def logaddexp(a, b):
    """max + log1p(exp(-|a - b|)); a + b where a - b is NaN."""
    mx = _state["mx"]
    d = a - b
    r = mx.maximum(a, b) + mx.log1p(_exp(-mx.abs(d)))
    return mx.where(mx.isnan(d), a + b, r)


def powi(x, n):
    """x ** n by repeated squaring (n static); n = 0 gives 1; floats n < 0: 1 / x^|n|;
    integers n < 0: 1 if x == 1, (-1)^n if x == -1, else 0."""
    mx = _state["mx"]
    one = mx.ones_like(x)
    if n == 0:
        return one
    is_float = x.dtype in (mx.float32, mx.float64)
    if n < 0 and not is_float:
        if _unsigned(x.dtype):
            return mx.where(mx.equal(x, 1), one, mx.zeros_like(x))
        m1 = one if n % 2 == 0 else -one
        return mx.where(mx.equal(x, 1), one, mx.where(mx.equal(x, -1), m1, mx.zeros_like(x)))
    k = abs(n)
    acc = None
    base = x
    while k:
        if k & 1:
            acc = base if acc is None else acc * base
        k >>= 1
        if k:
            base = base * base
    return one / acc if n < 0 else acc


def convert(x, dt):
    """quabla.convert: float -> int truncates toward zero and saturates (NaN 0, negative 0 for
    unsigned); any -> bool is x != 0; otherwise a cast."""
    mx = _state["mx"]
    src = x.dtype
    if dt == src:
        return x
    if dt == mx.bool_:
        return mx.not_equal(x, 0)
    if src in (mx.float32, mx.float64) and dt not in (mx.float32, mx.float64):
        lo, hi = _limits(dt)
        t = mx.where(mx.isnan(x), mx.zeros_like(x), x)
        big = mx.greater_equal(t, float(hi) + 1.0)
        small = mx.less(t, float(lo)) if lo < 0 else mx.less_equal(t, -1.0)
        t = mx.where(big | small, mx.zeros_like(t), t)
        r = t.astype(dt)
        r = mx.where(big, mx.array(hi, dtype=dt), r)
        return mx.where(small, mx.array(lo, dtype=dt), r)
    return x.astype(dt)


def pad(x, value, lo, hi, interior):
    """quabla.pad (edges and interior padding non-negative, pad_c3): interior padding
    interleaves ``value``, then ``mx.pad`` adds the edges."""
    mx = _state["mx"]
    value = value.astype(x.dtype)
    if any(interior):
        shape = tuple(n + (n - 1) * p for n, p in zip(x.shape, interior))
        out = mx.array(mx.broadcast_to(value, shape))
        out[tuple(slice(None, None, p + 1) for p in interior)] = x
        x = out
    widths = list(zip(lo, hi))
    if any(w != (0, 0) for w in widths):
        x = mx.pad(x, widths, constant_values=value)
    return x


def _clamped_starts(starts, extents, sizes):
    mx = _state["mx"]
    s = [mx.clip(st.astype(mx.int64), 0, e - k) for st, e, k in zip(starts, extents, sizes)]
    return mx.stack(s).astype(mx.int32) if s else mx.zeros((0,), dtype=mx.int32)


def dynamic_slice(x, starts, sizes):
    mx = _state["mx"]
    if x.ndim == 0:
        return x
    st = _clamped_starts(starts, x.shape, sizes)
    return mx.slice(x, st, tuple(range(x.ndim)), sizes)


def dynamic_update_slice(x, u, starts):
    mx = _state["mx"]
    if x.ndim == 0:
        return u
    st = _clamped_starts(starts, x.shape, u.shape)
    return mx.slice_update(x, u, st, tuple(range(x.ndim)))


def gather(x, idx, axis):
    mx = _state["mx"]
    n = x.shape[axis]
    return mx.take(x, mx.clip(idx, 0, n - 1), axis=axis)


def dot_general(a, b, lb, rb, lc, rc):
    mx = _state["mx"]
    lf = [d for d in range(a.ndim) if d not in lb and d not in lc]
    rf = [d for d in range(b.ndim) if d not in rb and d not in rc]
    bshape = [a.shape[d] for d in lb]
    lfs = [a.shape[d] for d in lf]
    rfs = [b.shape[d] for d in rf]
    B, M, N = math.prod(bshape), math.prod(lfs), math.prod(rfs)  # noqa: N806
    K = math.prod(a.shape[d] for d in lc)  # noqa: N806
    at = mx.reshape(mx.transpose(a, list(lb) + lf + list(lc)), (B, M, K))
    bt = mx.reshape(mx.transpose(b, list(rb) + list(rc) + rf), (B, K, N))
    if a.dtype in (mx.float32, mx.float64):
        r = mx.matmul(at, bt)
    elif a.dtype == mx.bool_:
        r = mx.any(at[:, :, :, None] & bt[:, None, :, :], axis=2)
    else:
        r = mx.sum(at[:, :, :, None] * bt[:, None, :, :], axis=2)
    return mx.reshape(r, tuple(bshape + lfs + rfs))


def scatter(x, idx, upd, axis, combiner):
    """Scatter along ``axis`` (the take form); out-of-bounds indices are skipped."""
    mx = _state["mx"]
    n = x.shape[axis]
    k = idx.size

    def axis_first(u):
        # [pre..., index..., post...] -> [K, pre..., post...]
        return mx.moveaxis(mx.reshape(u, u.shape[:axis] + (k,) + u.shape[axis + idx.ndim :]), axis, 0)

    xt = mx.moveaxis(x, axis, 0)
    rest = xt.shape[1:]
    ut = axis_first(upd)
    flat = mx.reshape(idx, (k,)).astype(mx.int64)
    oob = mx.less(flat, 0) | mx.greater_equal(flat, n)
    flat = mx.where(oob, n, flat).astype(mx.int32)
    # One extra slot at position n receives the out-of-bounds updates and is cut off.
    xe = mx.concatenate([xt, mx.zeros((1,) + rest, dtype=x.dtype)], axis=0)
    if combiner == "set":
        # The last update in row-major order wins: scatter the update ids with maximum, then
        # send every other update to the extra slot.
        ids = axis_first(mx.reshape(mx.arange(upd.size, dtype=mx.int32), upd.shape))
        win = mx.full((n + 1,) + rest, -1, dtype=mx.int32).at[flat].maximum(ids)
        pos = mx.broadcast_to(mx.reshape(flat, (k,) + (1,) * len(rest)), ut.shape)
        pos = mx.where(mx.equal(win[flat], ids), pos, n)
        out = mx.put_along_axis(xe, pos, ut, axis=0)
    elif combiner == "add":
        out = xe.at[flat].add(ut)
    elif combiner == "multiply":
        out = xe.at[flat].multiply(ut)
    elif combiner == "minimum":
        out = xe.at[flat].minimum(ut)
    else:
        out = xe.at[flat].maximum(ut)
    return mx.moveaxis(out[:n], 0, axis)


def sort(x, dim, descending):
    mx = _state["mx"]
    if x.ndim == 0:
        return x
    s = mx.sort(x, axis=dim)
    if descending:
        s = _flip(s, dim)
    return s


def _flip(x, dim):
    idx = [slice(None)] * x.ndim
    idx[dim] = slice(None, None, -1)
    return x[tuple(idx)]


def argsort(x, dim, descending, dtype):
    mx = _state["mx"]
    if x.ndim == 0:
        return mx.zeros((), dtype=dtype)
    n = x.shape[dim]
    if not descending:
        return mx.argsort(x, axis=dim).astype(dtype)
    # Stable descending: ascending order of the reversed lane, reversed back and re-indexed.
    r = mx.argsort(_flip(x, dim), axis=dim)
    return (n - 1 - _flip(r, dim)).astype(dtype)


# Control flow (Python; the region functions are compiled segments or themselves Python).


def cond(pred, then_fn, else_fn, *args):
    return then_fn(*args) if pred.item() else else_fn(*args)


def case(index, branches, *args):
    i = int(index.item())
    if i < 0 or i >= len(branches):
        i = len(branches) - 1
    return branches[i](*args)


def while_loop(cond_fn, body_fn, *carries):
    while cond_fn(*carries)[0].item():
        carries = body_fn(*carries)
    return tuple(carries)


# ---------------------------------------------------------------------------------------------
# The executor's side.

_programs = {}

#: Counters of the executor's host traffic: ``host_inputs`` counts inputs copied from host
#: memory into MLX (resident MLX inputs are not counted: they go in without a copy).
stats = {"host_inputs": 0}


class _Helpers:
    """The namespace the emitted source calls as ``q``."""


def _helpers():
    h = _state.get("helpers")
    if h is None:
        h = _Helpers()
        g = globals()
        for n in ("const", "splat", "iota", "sign", "fmax", "fmin", "fmod", "int_div", "int_rem", "shift_left", "shift_right_logical",
                  "shift_right_arithmetic", "logaddexp", "exp64", "sin64", "cos64", "sigmoid64", "powi", "convert", "pad", "dynamic_slice", "dynamic_update_slice",
                  "gather", "dot_general", "scatter", "sort", "argsort", "cond", "case", "while_loop"):
            setattr(h, n, g[n])
        _state["helpers"] = h
    return h


def build(source, entry):
    """The callable of an emitted program: executes ``source`` with ``mx`` and ``q`` in scope,
    wraps its straight-line functions with ``mx.compile`` and returns the function ``entry``.
    Cached per source text."""
    with _lock:
        fn = _programs.get(source)
        if fn is not None:
            return fn
        mx = _mx()
        ns = {"mx": mx, "q": _helpers()}
        exec(compile(source, "<quabla-mlx>", "exec"), ns)  # noqa: S102 - source emitted by Quabla
        for name in ns["COMPILED"]:
            ns[name] = mx.compile(ns[name])
        fn = ns[entry]
        _programs[source] = fn
        return fn


_NP = {"f32": np.float32, "f64": np.float64, "i1": np.bool_, "i32": np.int32, "i64": np.int64, "ui8": np.uint8, "ui32": np.uint32}


_MX = {
    "f32": lambda: _state["mx"].float32,
    "f64": lambda: _state["mx"].float64,
    "i1": lambda: _state["mx"].bool_,
    "i32": lambda: _state["mx"].int32,
    "i64": lambda: _state["mx"].int64,
    "ui8": lambda: _state["mx"].uint8,
    "ui32": lambda: _state["mx"].uint32,
}


def to_mx(view, dtype, shape):
    """An ``mx.array`` of host bytes (a read-only memoryview over a quabla host buffer). MLX
    copies host data into its own allocation here (``mx.array`` of a NumPy view copies)."""
    mx = _state["mx"]
    stats["host_inputs"] += 1
    a = np.frombuffer(view, dtype=_NP[dtype]).reshape(shape)
    # The dtype is explicit: mx.array of a float64 NumPy array would otherwise be float32.
    return mx.array(a, dtype=_MX[dtype]())


def run(fn, args):
    """Calls the program and evaluates its outputs; returns them as a list of ``mx.array``s."""
    mx = _state["mx"]
    outs = fn(*args)
    mx.eval(*outs)
    return list(outs)


def host_bytes(arr):
    """The bytes of an ``mx.array`` as a C-contiguous NumPy array (a view of MLX's memory when
    the array is contiguous)."""
    return np.ascontiguousarray(np.asarray(arr))
