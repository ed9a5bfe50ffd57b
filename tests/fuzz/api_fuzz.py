"""Property-based fuzzing of Quabla's Python API (Hypothesis), shared by the CI slice
(tests/fuzz/test_fuzz.py) and the long run (`QUABLA_FUZZ_EXAMPLES=20000 pytest tests/fuzz`).

Two oracles:

* **valid calls** (`check_valid`): a random op of the NumPy-equivalent table on random
  shapes (0-d, zero extents, rank up to 4, broadcasting) and dtypes, run eagerly and under
  `jit`, must equal NumPy (NaN where NumPy gives NaN); where NumPy rejects the operands
  Quabla must raise a QuablaError. Float unary ops are also checked under `grad` against a
  central difference and under `vmap` against a loop.
* **bad calls** (`check_bad_call`): any public function of `quabla` called with arguments
  drawn from a pool of hostile values (wrong types, huge and negative ints, NaN, nested
  tuples, strings, arrays of every dtype and odd shapes) either returns or raises a
  QuablaError subclass: never a `PanicException`, a bare builtin exception, a segfault (the
  process would die) or a hang.
"""

from __future__ import annotations

import inspect
import math
import warnings

import numpy as np
from hypothesis import strategies as st

import quabla as qb
from quabla import errors

# --- valid calls -------------------------------------------------------------------------

UNARY = {
    "negative": np.negative,
    "abs": np.abs,
    "sign": np.sign,
    "exp": np.exp,
    "log": np.log,
    "log1p": np.log1p,
    "expm1": np.expm1,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "tanh": np.tanh,
    "sqrt": np.sqrt,
    "floor": np.floor,
    "ceil": np.ceil,
    "exp2": np.exp2,
}
BINARY = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": np.divide,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "power": np.power,
    "logaddexp": np.logaddexp,
}
REDUCE = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "mean": np.mean}
DTYPES = {"float32": np.float32, "float64": np.float64, "int32": np.int32, "int64": np.int64}
FLOAT_UNARY = ["negative", "abs", "exp", "sin", "cos", "tanh", "expm1", "log1p"]

# Quabla tensors have positive extents (docs/api.md); zero extents are among the hostile
# arguments, where they must raise ShapeError.
shapes = st.lists(st.integers(1, 4), min_size=0, max_size=4).map(tuple)


@st.composite
def arrays(draw, shape=None, dtype=None):
    shape = draw(shapes) if shape is None else shape
    dtype = draw(st.sampled_from(sorted(DTYPES))) if dtype is None else dtype
    n = int(np.prod(shape, dtype=np.int64))
    if dtype.startswith("float"):
        # No subnormals: compiled CPU code flushes them to zero, as XLA's (docs/ARCHITECTURE.md,
        # "Departures"), where NumPy keeps them (floor(-1e-45) is -1 there, -0 here).
        vals = draw(st.lists(st.floats(-3, 3, allow_nan=False, allow_subnormal=False, width=32), min_size=n, max_size=n))
    else:
        vals = draw(st.lists(st.integers(-5, 5), min_size=n, max_size=n))
    return np.asarray(vals, dtype=DTYPES[dtype]).reshape(shape)


def broadcastable(draw, shape):
    """A shape that broadcasts with `shape` (dropped leading dims, some extents 1)."""
    k = draw(st.integers(0, len(shape)))
    tail = list(shape[k:])
    for i in range(len(tail)):
        if draw(st.booleans()):
            tail[i] = 1
    return tuple(tail)


def _numpy(fn, *args, **kw):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args, **kw)


def _close(got, want, rtol, what):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != NumPy's {want.shape}"
    if want.dtype.kind == "f" or got.dtype.kind == "f":
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=rtol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def _rtol(*xs):
    return 2e-5 if any(np.asarray(x).dtype == np.float32 for x in xs) else 1e-12


def check_valid(data):
    """One random valid (or NumPy-rejected) call; see the module docstring."""
    kind = data.draw(st.sampled_from(["unary", "binary", "reduce", "grad", "vmap"]))
    if kind == "unary":
        name = data.draw(st.sampled_from(sorted(UNARY)))
        x = data.draw(arrays(dtype=data.draw(st.sampled_from(["float32", "float64"]))))
        want = _numpy(UNARY[name], x)
        f = getattr(qb, name)
        _close(f(qb.array(x)), want, _rtol(x), f"{name}{x.shape}")
        _close(qb.jit(f)(qb.array(x)), want, _rtol(x), f"jit({name}){x.shape}")
    elif kind == "binary":
        name = data.draw(st.sampled_from(sorted(BINARY)))
        dt = data.draw(st.sampled_from(["float32", "float64"]))
        x = data.draw(arrays(dtype=dt))
        if data.draw(st.booleans()):
            y = data.draw(arrays(shape=broadcastable(data.draw, x.shape), dtype=dt))
        else:
            y = data.draw(arrays(dtype=dt))
        try:
            want = _numpy(BINARY[name], x, y)
        except ValueError:
            # NumPy cannot broadcast the shapes: Quabla raises a typed error.
            try:
                getattr(qb, name)(qb.array(x), qb.array(y))
            except errors.QuablaError:
                return
            raise AssertionError(f"{name}{x.shape}{y.shape}: NumPy rejects the shapes, Quabla did not")
        f = getattr(qb, name)
        _close(f(qb.array(x), qb.array(y)), want, _rtol(x, y), f"{name}{x.shape}{y.shape}")
        _close(qb.jit(f)(qb.array(x), qb.array(y)), want, _rtol(x, y), f"jit({name}){x.shape}{y.shape}")
    elif kind == "reduce":
        name = data.draw(st.sampled_from(sorted(REDUCE)))
        x = data.draw(arrays(dtype=data.draw(st.sampled_from(["float64", "int64"]))))
        axis = data.draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1))) if x.ndim else None
        keepdims = data.draw(st.booleans())
        try:
            want = _numpy(REDUCE[name], x, axis=axis, keepdims=keepdims)
        except ValueError:
            # An empty max/min: no identity.
            try:
                getattr(qb, name)(qb.array(x), axis=axis, keepdims=keepdims)
            except errors.QuablaError:
                return
            raise AssertionError(f"{name}{x.shape} axis={axis}: NumPy rejects it, Quabla did not")
        got = getattr(qb, name)(qb.array(x), axis=axis, keepdims=keepdims)
        _close(got, want, 1e-12, f"{name}{x.shape} axis={axis} keepdims={keepdims}")
    elif kind == "grad":
        name = data.draw(st.sampled_from(FLOAT_UNARY))
        # Away from abs's kink at 0, where a central difference is not a derivative.
        v = data.draw(st.floats(-2, 2, allow_nan=False).filter(lambda t: abs(t) > 1e-2))
        f = getattr(qb, name)
        g = float(qb.grad(f)(v))

        def central(h):
            return (float(f(qb.array(v + h))) - float(f(qb.array(v - h)))) / (2 * h)

        fd = central(1e-6)
        if not math.isfinite(fd):
            # A domain edge within h (log1p at -1, log at 0): no central difference.
            return
        # Near a singularity the difference's truncation error (h^2 times the third
        # derivative over 6) exceeds the tolerance (log1p at -0.99999: 100335 for 100000 at
        # h = 1e-6): shrink the step until two successive estimates agree.
        for h in (1e-7, 1e-8):
            finer = central(h)
            if not math.isfinite(finer) or math.isclose(finer, fd, rel_tol=1e-7, abs_tol=1e-9):
                break
            fd = finer
        assert math.isclose(g, fd, rel_tol=1e-5, abs_tol=1e-6), f"grad({name})({v}) = {g}, central difference {fd}"
    else:
        name = data.draw(st.sampled_from(FLOAT_UNARY))
        x = data.draw(arrays(shape=(data.draw(st.integers(1, 4)), data.draw(st.integers(1, 3))), dtype="float64"))
        f = getattr(qb, name)
        got = qb.vmap(lambda r: qb.sum(f(r)))(qb.array(x))
        want = [float(qb.sum(f(qb.array(r)))) for r in x]
        _close(got, np.asarray(want), 1e-12, f"vmap({name}){x.shape}")


# --- bad calls ---------------------------------------------------------------------------

# Functions whose contract is to call user code or to run forever on some inputs are called
# with hostile non-callables only (they must reject them with a QuablaError).
CALLS_USER_CODE = {"cond", "switch", "while_loop", "fori_loop", "grad", "value_and_grad", "jvp", "vjp", "vmap", "jit",
                   "jacobian", "jacfwd", "jacrev", "hessian", "linearize", "export", "scan", "custom_jvp", "custom_vjp"}

hostile = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, -1, 2**31, 2**62, 2**63, -(2**63) - 1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=4),
    st.binary(max_size=4),
    st.sampled_from([(), (2**62, 4), (-1,), (1.5,), ((),), [1, [2, 3]], {"a": 1}, {1, 2}, slice(None), Ellipsis, object(), np.float64, "float32", "ij->j"]),
    st.builds(lambda n, d: np.zeros(n, dtype=d), st.sampled_from([(), (0,), (3,), (2, 0, 3), (1,) * 9]),
              st.sampled_from([np.float32, np.float64, np.int32, np.int64, np.bool_, np.complex64, np.float16, np.uint16, object])),
    st.builds(lambda n: qb.ones(n), st.sampled_from([(), (1,), (3,), (2, 3)])),
)


def public_functions():
    out = []
    for name in sorted(dir(qb)):
        if name.startswith("_"):
            continue
        obj = getattr(qb, name)
        if callable(obj) and not inspect.isclass(obj) and not inspect.ismodule(obj):
            out.append(name)
    return out


def _arity(fn):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return 0, 3
    req = [p for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
    opt = [p for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is not p.empty]
    var = any(p.kind == p.VAR_POSITIONAL for p in sig.parameters.values())
    return len(req), len(req) + len(opt) + (2 if var else 0)


def check_bad_call(data, name):
    fn = getattr(qb, name)
    lo, hi = _arity(fn)
    n = data.draw(st.integers(lo, max(lo, min(hi, 4))))
    args = [data.draw(hostile) for _ in range(n)]
    try:
        out = fn(*args)
        if name in CALLS_USER_CODE and callable(out) and args[1:2]:
            # A transform of a hostile "function": calling it must fail cleanly too.
            out(*args[1:2])
    except errors.QuablaError:
        pass
    except BaseException as e:  # noqa: BLE001 - the point: nothing else may escape
        if name in CALLS_USER_CODE and _raises_itself(args, type(e)):
            # The hostile "function" (a callable such as np.float64) raised on its own
            # arguments: its own exception propagates, as in JAX.
            return
        raise AssertionError(f"qb.{name}({', '.join(_short(a) for a in args)}) raised {type(e).__module__}.{type(e).__name__}: {e}") from None


def _raises_itself(args, kind):
    """Whether the callable ``args[0]`` raises ``kind`` when called on the rest of ``args``
    (on all of them, or on the first only, as the transforms call it)."""
    if not args or not callable(args[0]):
        return False
    for rest in (args[1:], args[1:2]):
        try:
            args[0](*rest)
        except kind:
            return True
        except BaseException:  # noqa: BLE001 - another exception: not the same failure
            pass
    return False


def _short(a):
    r = repr(a)
    return r if len(r) < 60 else r[:57] + "..."
