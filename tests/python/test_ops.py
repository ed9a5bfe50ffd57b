"""One table over every op of the Python front: eager and jit results equal NumPy (float32,
float64, ints, bools where they apply; broadcasting; keepdims; negative axes), and jit equals
eager. Each row: (id, quabla function, NumPy reference, argument builders)."""

import math

import numpy as np
import pytest

import quabla as qb

RNG = np.random.default_rng(0)


# ---------------------------------------------------------------------------------------------
# Argument builders: each returns a NumPy array (or a Python scalar, passed as is).


def rand(shape, dtype, lo=-2.0, hi=2.0):
    def make():
        if np.dtype(dtype) == np.bool_:
            return RNG.random(shape) < 0.5
        if np.dtype(dtype).kind == "i":
            return RNG.integers(int(lo), int(hi) + 1, size=shape).astype(dtype)
        return RNG.uniform(lo, hi, size=shape).astype(dtype)

    return make


def nonzero_int(shape, dtype):
    def make():
        v = RNG.integers(1, 6, size=shape) * RNG.choice([-1, 1], size=shape)
        return v.astype(dtype)

    return make


def away_from_zero(shape, dtype):
    def make():
        v = RNG.uniform(0.5, 3.0, size=shape) * RNG.choice([-1.0, 1.0], size=shape)
        return v.astype(dtype)

    return make


def const(v):
    return lambda: v


F = ["float32", "float64"]
I = ["int32", "int64"]  # noqa: E741
N = F + I


def _erf(x):
    return np.vectorize(math.erf, otypes=[x.dtype])(x)


def _logsumexp(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    r = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return r if keepdims else np.squeeze(r, axis=axis) if axis is not None else r.reshape(())


def _softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def _floor_div(x, y):
    r = np.floor_divide(x, y)
    return r


CASES = []


def case(name, qf, nf, *builders, dtypes=None, tol=None):
    for dt in dtypes or [None]:
        bs = [b(dt) if callable(b) and getattr(b, "_per_dtype", False) else b for b in builders]
        CASES.append(pytest.param(qf, nf, bs, tol, id=f"{name}-{dt}" if dt else name))


def per(fn):
    fn._per_dtype = True
    return fn


def R(shape, lo=-2.0, hi=2.0):
    return per(lambda dt: rand(shape, dt, lo, hi))


# Unary float ops
for name, qf, nf, lo, hi in [
    ("exp", qb.exp, np.exp, -2, 2),
    ("exp2", qb.exp2, np.exp2, -3, 3),
    ("expm1", qb.expm1, np.expm1, -2, 2),
    ("log", qb.log, np.log, 0.1, 3),
    ("log1p", qb.log1p, np.log1p, -0.5, 3),
    ("sin", qb.sin, np.sin, -3, 3),
    ("cos", qb.cos, np.cos, -3, 3),
    ("tan", qb.tan, np.tan, -1.2, 1.2),
    ("tanh", qb.tanh, np.tanh, -3, 3),
    ("sqrt", qb.sqrt, np.sqrt, 0.1, 4),
    ("rsqrt", qb.rsqrt, lambda x: 1 / np.sqrt(x), 0.1, 4),
    ("sigmoid", qb.sigmoid, lambda x: 1 / (1 + np.exp(-x)), -4, 4),
    ("softplus", qb.softplus, lambda x: np.logaddexp(0, x).astype(x.dtype), -4, 4),
    ("erf", qb.erf, _erf, -2, 2),
    ("floor", qb.floor, np.floor, -3, 3),
    ("ceil", qb.ceil, np.ceil, -3, 3),
    ("round", qb.round, np.round, -3, 3),
]:
    case(name, qf, nf, R((3, 4), lo, hi), dtypes=F)
case("sin-int-promotes", qb.sin, np.sin, R((5,)), dtypes=["int64"])
case("isfinite", qb.isfinite, np.isfinite, const(np.array([1.0, -0.0, np.inf, -np.inf, np.nan, 1e308])))
case("isfinite-f32", qb.isfinite, np.isfinite, const(np.array([1.0, np.inf, np.nan], dtype=np.float32)))
case("isfinite-int", qb.isfinite, np.isfinite, R((2, 3), -9, 9), dtypes=I)
case("logaddexp", qb.logaddexp, np.logaddexp, R((3, 4), -30, 30), R((3, 4), -30, 30), dtypes=F)
case("logaddexp-bcast", qb.logaddexp, np.logaddexp, R((3, 4)), R((4,)), dtypes=F)
case("logaddexp-inf", qb.logaddexp, np.logaddexp, const(np.array([-np.inf, np.inf, -np.inf, 0.0, np.nan])), const(np.array([-np.inf, np.inf, 1.0, -np.inf, 1.0])))
case("exp-bool-promotes", qb.exp, lambda x: np.exp(x.astype(np.float32)), R((5,)), dtypes=["bool"])  # JAX x64: bool -> float32
case("round-half-even", qb.round, np.round, const(np.array([0.5, 1.5, 2.5, -0.5, -1.5])))
case("round-int", qb.round, np.round, R((5,), -9, 9), dtypes=I)
for name, qf, nf in [
    ("abs", qb.abs, np.abs),
    ("sign", qb.sign, np.sign),
    ("negative", qb.negative, np.negative),
    ("relu", qb.relu, lambda x: np.maximum(x, 0).astype(x.dtype)),
]:
    case(name, qf, nf, R((3, 4), -5, 5), dtypes=N)
case("neg-operator", lambda x: -x, np.negative, R((4,), -5, 5), dtypes=N)
case("pos-operator", lambda x: +x, lambda x: x, R((4,)), dtypes=F)
case("abs-operator", lambda x: abs(x), np.abs, R((4,)), dtypes=N)
case("invert-bool", lambda x: ~x, np.logical_not, R((2, 3)), dtypes=["bool"])
case("invert-int", lambda x: ~x, np.invert, R((2, 3), -9, 9), dtypes=I)

# Binary arithmetic, with broadcasting and weak scalars
BIN = [
    ("add", qb.add, np.add, lambda a, b: a + b),
    ("subtract", qb.subtract, np.subtract, lambda a, b: a - b),
    ("multiply", qb.multiply, np.multiply, lambda a, b: a * b),
    ("maximum", qb.maximum, np.maximum, None),
    ("minimum", qb.minimum, np.minimum, None),
]
for name, qf, nf, op in BIN:
    case(name, qf, nf, R((3, 4)), R((3, 4)), dtypes=N)
    case(name + "-bcast", qf, nf, R((3, 4)), R((4,)), dtypes=N)
    case(name + "-bcast2", qf, nf, R((3, 1)), R((1, 4)), dtypes=F)
    if op is not None:
        case(name + "-op", op, op, R((2, 3)), R((2, 3)), dtypes=N)
        case(name + "-rscalar", op, op, R((2, 3)), const(3), dtypes=N)
        case(name + "-lscalar", op, op, const(2), R((2, 3)), dtypes=N)
        case(name + "-fscalar", op, lambda a, b, op=op: op(a, np.asarray(b, dtype=a.dtype)), R((2, 3)), const(0.5), dtypes=F)
case("maximum-bool", qb.maximum, np.maximum, R((5,)), R((5,)), dtypes=["bool"])
case("minimum-bool", qb.minimum, np.minimum, R((5,)), R((5,)), dtypes=["bool"])
case("maximum-nan", qb.maximum, np.maximum, const(np.array([1.0, np.nan, 3.0])), const(np.array([np.nan, 2.0, 1.0])))
case("add-int-float-scalar", lambda a: a + 0.5, lambda a: a + 0.5, R((4,), -5, 5), dtypes=["int64"])
case("mul-bool-int-scalar", lambda a: a * 3, lambda a: a.astype(np.int64) * 3, R((4,)), dtypes=["bool"])
case("add-int32-int64", qb.add, np.add, R((4,), -5, 5), per(lambda dt: rand((4,), "int64", -5, 5)), dtypes=["int32"])
case("add-int-float", qb.add, np.add, R((4,), -5, 5), per(lambda dt: rand((4,), "float64")), dtypes=["int64"])
case("divide", qb.divide, np.divide, R((3, 4)), per(lambda dt: away_from_zero((3, 4), dt)), dtypes=F)
case("divide-op", lambda a, b: a / b, np.divide, R((3, 4)), per(lambda dt: away_from_zero((4,), dt)), dtypes=F)
case("rtruediv", lambda a: 1.0 / a, lambda a: (1.0 / a).astype(a.dtype), per(lambda dt: away_from_zero((4,), dt)), dtypes=F)
case("divide-int", qb.divide, lambda a, b: np.divide(a, b).astype(np.float32 if a.dtype == np.int32 else np.float64), R((3, 4), -9, 9), per(lambda dt: nonzero_int((3, 4), dt)), dtypes=I)
case("floor_divide", lambda a, b: a // b, np.floor_divide, R((3, 4), -9, 9), per(lambda dt: nonzero_int((3, 4), dt)), dtypes=I)
case("floor_divide-f", lambda a, b: a // b, np.floor_divide, R((3, 4), -9, 9), per(lambda dt: away_from_zero((3, 4), dt)), dtypes=F)
case("remainder", lambda a, b: a % b, np.remainder, R((3, 4), -9, 9), per(lambda dt: nonzero_int((3, 4), dt)), dtypes=I)
case("remainder-f", lambda a, b: a % b, np.remainder, R((3, 4), -9, 9), per(lambda dt: away_from_zero((3, 4), dt)), dtypes=F, tol=1e-5)
case("rmod-scalar", lambda a: 7 % a, lambda a: np.remainder(np.asarray(7, a.dtype), a), per(lambda dt: nonzero_int((5,), dt)), dtypes=I)
case("pow-int-exp", lambda a: a ** 3, lambda a: a ** 3, R((3, 4)), dtypes=N)
case("pow-zero-exp", lambda a: a ** 0, lambda a: a ** 0, R((3,)), dtypes=N)
case("pow-float-exp", lambda a: a ** 0.5, lambda a: (a ** 0.5).astype(a.dtype), R((3, 4), 0.1, 4), dtypes=F)
case("pow-neg-int-exp", lambda a: a ** -2, lambda a: (a ** -2.0).astype(a.dtype), R((4,), 0.5, 3), dtypes=F)
case("pow-tensor", qb.power, np.power, R((3, 4), 0.1, 3), R((3, 4), -2, 2), dtypes=F)
case("rpow", lambda a: 2.0 ** a, lambda a: (2.0 ** a).astype(a.dtype), R((4,)), dtypes=F)
case("pow-neg-base", qb.power, np.power, const(np.array([-2.0, -8.0, 0.0, 0.0])), const(np.array([0.5, 3.0, 0.0, 2.0])))
# Python float exponents with an exact cheaper form (sqrt, 1/sqrt, powi, 1/powi): pow's values
# (C99, as JAX gives them), including -0, +-inf and NaN bases.
_SPECIAL_BASES = np.array([-0.0, 0.0, -np.inf, np.inf, 4.0, -4.0, np.nan, 2.5, -2.0, 1e-30, 3e30])


def _c99_pow(a, p):
    def one(v):
        if v == 0 and p < 0:
            return math.copysign(math.inf, v) if p == int(p) and int(p) % 2 else math.inf
        if v < 0 and p != int(p):
            return (math.inf if p > 0 else 0.0) if math.isinf(v) else math.nan
        return math.pow(v, p)
    return np.array([one(v) for v in a.astype(np.float64).ravel()]).reshape(a.shape).astype(a.dtype)


for _p in (0.5, -0.5, 2.0, 3.0, -1.0, -2.0, 0.0, 1.0, 8.0, -8.0, 1.5, -1.5, 2.5, 8.5, -8.5):
    case(f"pow-special-{_p}", lambda a, p=_p: a ** p, lambda a, p=_p: _c99_pow(a, p), const(_SPECIAL_BASES), dtypes=F)
case("reciprocal", qb.reciprocal, lambda a: (1.0 / a).astype(a.dtype), R((3, 4), 0.5, 3), dtypes=F)
case("pow-fast-exps", lambda a: a ** 0.5 + a ** -0.5 + a ** 2.0 + a ** -1.0 + a ** 3.0, lambda a: (a ** 0.5 + a ** -0.5 + a ** 2.0 + a ** -1.0 + a ** 3.0).astype(a.dtype), R((3, 4), 0.5, 3), dtypes=F)
case("matmul-op", lambda a, b: a @ b, np.matmul, R((3, 4)), R((4, 2)), dtypes=N)

# Comparisons and logic
for name, op in [("eq", lambda a, b: a == b), ("ne", lambda a, b: a != b), ("lt", lambda a, b: a < b),
                 ("le", lambda a, b: a <= b), ("gt", lambda a, b: a > b), ("ge", lambda a, b: a >= b)]:
    case("cmp-" + name, op, op, R((3, 4), -2, 2), R((4,), -2, 2), dtypes=N)
    case("cmp-" + name + "-scalar", op, op, R((3, 4), -2, 2), const(1), dtypes=I)
case("cmp-nan", lambda a, b: qb.stack([a == b, a != b, a < b]),
     lambda a, b: np.stack([a == b, a != b, a < b]), const(np.array([np.nan, 1.0])), const(np.array([np.nan, np.nan])))
for name, op in [("and", lambda a, b: a & b), ("or", lambda a, b: a | b), ("xor", lambda a, b: a ^ b)]:
    case("logic-" + name, op, op, R((3, 4)), R((4,)), dtypes=["bool"] + I)
    case("logic-" + name + "-scalar", op, op, R((3, 4)), const(True), dtypes=["bool"])
case("where", qb.where, np.where, R((3, 4)), R((3, 4)), R((3, 4)), dtypes=None)
case("where-bcast", qb.where, np.where, per(lambda dt: rand((3, 1), "bool")), R((4,)), R((3, 4)), dtypes=N)
case("where-scalar", lambda c, x: qb.where(c > 0, x, 0.0), lambda c, x: np.where(c > 0, x, np.asarray(0.0, x.dtype)), R((5,)), R((5,)), dtypes=F)
case("clip", lambda x: qb.clip(x, -1, 1), lambda x: np.clip(x, -1, 1), R((3, 4)), dtypes=N)
case("clip-method", lambda x: x.clip(0.0), lambda x: np.clip(x, 0.0, None), R((3, 4)), dtypes=F)
case("astype-f-i32", lambda x: x.astype(qb.int32), lambda x: x.astype(np.int32), R((6,), -9, 9), dtypes=F)
case("astype-i-f32", lambda x: qb.astype(x, qb.float32), lambda x: x.astype(np.float32), R((6,), -9, 9), dtypes=I)
case("astype-bool", lambda x: x.astype(qb.bool_), lambda x: x.astype(np.bool_), R((6,), -1, 1), dtypes=N)
case("astype-from-bool", lambda x: x.astype(qb.float32), lambda x: x.astype(np.float32), R((6,)), dtypes=["bool"])

# Reductions (axis None / int / negative / tuple, keepdims)
AXES = [None, 0, -1, (0, 2), (-1, 1)]
for name, qf, nf, dts, lohi in [
    # JAX x64 (promote_integers): bool and int32 sum and multiply as int64.
    ("sum", qb.sum, lambda x, **k: np.sum(x, dtype=np.int64 if x.dtype in (np.bool_, np.int32) else x.dtype, **k), N + ["bool"], (-3, 3)),
    ("prod", qb.prod, lambda x, **k: np.prod(x, dtype=np.int64 if x.dtype == np.int32 else x.dtype, **k), N, (-2, 2)),
    ("max", qb.max, np.max, N + ["bool"], (-3, 3)),
    ("min", qb.min, np.min, N + ["bool"], (-3, 3)),
    ("mean", qb.mean, lambda x, **k: np.mean(x, **k).astype(np.float32 if x.dtype == np.int32 else np.float64 if x.dtype == np.int64 else x.dtype), N, (-3, 3)),  # JAX x64: int32 -> float32
    ("var", qb.var, np.var, F, (-3, 3)),
    ("std", qb.std, np.std, F, (-3, 3)),
    ("any", qb.any, np.any, ["bool"] + I, (-1, 1)),
    ("all", qb.all, np.all, ["bool"] + I, (-1, 1)),
    ("logsumexp", qb.logsumexp, _logsumexp, F, (-3, 3)),
    ("norm", qb.norm, lambda x, axis=None, keepdims=False: np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdims)), F, (-3, 3)),
]:
    for ax in AXES:
        for kd in (False, True):
            if (ax in (0, (-1, 1))) and kd and name not in ("sum", "max"):
                continue
            case(f"{name}-ax{ax}-kd{int(kd)}", lambda x, qf=qf, ax=ax, kd=kd: qf(x, axis=ax, keepdims=kd),
                 lambda x, nf=nf, ax=ax, kd=kd: nf(x, axis=ax, keepdims=kd), R((2, 3, 4), *lohi), dtypes=dts)
case("mean-method", lambda x: x.mean(axis=1), lambda x: x.mean(axis=1), R((3, 4)), dtypes=F)
case("sum-method", lambda x: x.sum(), lambda x: x.sum(), R((3, 4)), dtypes=F)
case("var-ddof", lambda x: qb.var(x, axis=0, ddof=1), lambda x: np.var(x, axis=0, ddof=1), R((5, 2)), dtypes=F)
case("max-nan", qb.max, np.max, const(np.array([1.0, np.nan, 3.0])))
for name, qf, nf in [("argmax", qb.argmax, np.argmax), ("argmin", qb.argmin, np.argmin)]:
    for ax in [None, 0, -1, 1]:
        case(f"{name}-ax{ax}", lambda x, qf=qf, ax=ax: qf(x, axis=ax), lambda x, nf=nf, ax=ax: nf(x, axis=ax), R((3, 4, 5), -9, 9), dtypes=N)
    case(f"{name}-keepdims", lambda x, qf=qf: qf(x, axis=1, keepdims=True), lambda x, nf=nf: nf(x, axis=1, keepdims=True), R((3, 4)), dtypes=F)
    case(f"{name}-nan", qf, nf, const(np.array([1.0, np.nan, 5.0, np.nan])))
    case(f"{name}-ties", qf, nf, const(np.array([3, 1, 3, 1])))
for ax in [-1, 0, 1]:
    case(f"softmax-ax{ax}", lambda x, ax=ax: qb.softmax(x, axis=ax), lambda x, ax=ax: _softmax(x, ax), R((3, 4)), dtypes=F)

# Products
case("matmul-2d", qb.matmul, np.matmul, R((3, 4)), R((4, 5)), dtypes=N)
case("matmul-vec-mat", qb.matmul, np.matmul, R((4,)), R((4, 5)), dtypes=F)
case("matmul-mat-vec", qb.matmul, np.matmul, R((3, 4)), R((4,)), dtypes=F)
case("matmul-vec-vec", qb.matmul, np.matmul, R((4,)), R((4,)), dtypes=F)
case("matmul-batch", qb.matmul, np.matmul, R((2, 3, 4)), R((4, 5)), dtypes=F)
case("matmul-batch-bcast", qb.matmul, np.matmul, R((2, 1, 3, 4)), R((5, 4, 2)), dtypes=F)
case("dot-vec", qb.dot, np.dot, R((4,)), R((4,)), dtypes=N)
case("dot-mat", qb.dot, np.dot, R((3, 4)), R((4, 2)), dtypes=F)
case("dot-nd", qb.dot, np.dot, R((2, 3, 4)), R((5, 4, 2)), dtypes=F)
case("dot-nd-vec", qb.dot, np.dot, R((2, 3, 4)), R((4,)), dtypes=F)
case("dot-scalar", qb.dot, np.dot, R((3,)), const(np.array(2.0)), dtypes=["float64"])
case("tensordot-2", qb.tensordot, np.tensordot, R((2, 3, 4)), R((3, 4, 5)), dtypes=F)
case("tensordot-1", lambda a, b: qb.tensordot(a, b, 1), lambda a, b: np.tensordot(a, b, 1), R((2, 3)), R((3, 4)), dtypes=F)
case("tensordot-lists", lambda a, b: qb.tensordot(a, b, ([1, 0], [0, 1])), lambda a, b: np.tensordot(a, b, ([1, 0], [0, 1])), R((3, 4, 2)), R((4, 3, 5)), dtypes=F)
for spec, shapes in [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("ijk->kj", [(2, 3, 4)]),
    ("i,i->", [(4,), (4,)]),
    ("ij,j->i", [(3, 4), (4,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("bik,bjk->bij", [(2, 3, 4), (2, 5, 4)]),
]:
    case(f"einsum-{spec}", lambda *xs, s=spec: qb.einsum(s, *xs), lambda *xs, s=spec: np.einsum(s, *xs),
         *[R(s) for s in shapes], dtypes=["float64", "int64"] if spec == "ij,jk->ik" else F)

# Shape manipulation
case("reshape", lambda x: qb.reshape(x, (4, -1)), lambda x: x.reshape(4, -1), R((2, 3, 4)), dtypes=N + ["bool"])
case("reshape-method", lambda x: x.reshape(6, 4), lambda x: x.reshape(6, 4), R((2, 3, 4)), dtypes=F)
case("ravel", qb.ravel, np.ravel, R((2, 3)), dtypes=F)
case("transpose", qb.transpose, np.transpose, R((2, 3, 4)), dtypes=N + ["bool"])
case("transpose-axes", lambda x: qb.transpose(x, (1, -1, 0)), lambda x: np.transpose(x, (1, -1, 0)), R((2, 3, 4)), dtypes=F)
case("T", lambda x: x.T, lambda x: x.T, R((2, 3)), dtypes=F)
case("swapaxes", lambda x: qb.swapaxes(x, 0, -1), lambda x: np.swapaxes(x, 0, -1), R((2, 3, 4)), dtypes=F)
case("expand_dims", lambda x: qb.expand_dims(x, -1), lambda x: np.expand_dims(x, -1), R((2, 3)), dtypes=F)
case("expand_dims-tuple", lambda x: qb.expand_dims(x, (0, 2)), lambda x: np.expand_dims(x, (0, 2)), R((2, 3)), dtypes=F)
case("squeeze", qb.squeeze, np.squeeze, R((1, 3, 1, 2)), dtypes=F)
case("squeeze-axis", lambda x: qb.squeeze(x, -2), lambda x: np.squeeze(x, -2), R((1, 3, 1, 2)), dtypes=F)
case("broadcast_to", lambda x: qb.broadcast_to(x, (2, 3, 4)), lambda x: np.broadcast_to(x, (2, 3, 4)), R((3, 1)), dtypes=N + ["bool"])
case("concatenate", lambda a, b: qb.concatenate([a, b], axis=-1), lambda a, b: np.concatenate([a, b], axis=-1), R((2, 3)), R((2, 2)), dtypes=N)
case("concat-axis0", lambda a, b: qb.concat([a, b, a]), lambda a, b: np.concatenate([a, b, a]), R((2, 3)), R((1, 3)), dtypes=F)
case("stack", lambda a, b: qb.stack([a, b]), lambda a, b: np.stack([a, b]), R((2, 3)), R((2, 3)), dtypes=N)
case("stack-axis", lambda a, b: qb.stack([a, b], axis=-1), lambda a, b: np.stack([a, b], axis=-1), R((2, 3)), R((2, 3)), dtypes=F)
case("split-sections", lambda x: qb.split(x, 3, axis=1), lambda x: np.split(x, 3, axis=1), R((2, 6)), dtypes=F)
case("split-indices", lambda x: qb.split(x, [1, 4]), lambda x: np.split(x, [1, 4]), R((6, 2)), dtypes=I)

# Indexing
for key in [1, -1, slice(1, 3), slice(None, None, 2), slice(None, None, -1), (slice(None), 1), (Ellipsis, 0),
            (None, slice(1, None), slice(None, None, -2)), (1, None, 2), (slice(None), slice(3, 0, -2)),
            (-1, Ellipsis, slice(1, 2))]:
    case(f"getitem-{key!r}", lambda x, k=key: x[k], lambda x, k=key: x[k], R((4, 5, 3)), dtypes=F)
case("getitem-array", lambda x: x[np.array([2, 0, -1])], lambda x: x[np.array([2, 0, -1])], R((4, 5)), dtypes=F)
case("getitem-list-axis1", lambda x: x[:, [2, 0, 1, 1]], lambda x: x[:, [2, 0, 1, 1]], R((4, 5)), dtypes=I)
case("take-axis", lambda x: qb.take(x, np.array([[0, 2], [1, 1]]), axis=1), lambda x: np.take(x, np.array([[0, 2], [1, 1]]), axis=1), R((3, 4)), dtypes=F)
case("take-flat", lambda x: qb.take(x, [5, 0, -1]), lambda x: np.take(x, [5, 0, -1]), R((3, 4)), dtypes=F)
case("take-scalar-index", lambda x: qb.take(x, 2, axis=0), lambda x: np.take(x, 2, axis=0), R((3, 4)), dtypes=F)


# ---------------------------------------------------------------------------------------------


def _to_qb(a):
    return qb.array(a) if isinstance(a, np.ndarray) else a


def _leaves(r):
    if isinstance(r, (list, tuple)):
        out = []
        for x in r:
            out.extend(_leaves(x))
        return out
    return [r]


def _check(got, want, tol):
    gs, ws = _leaves(got), _leaves(want)
    assert len(gs) == len(ws)
    for g, w in zip(gs, ws):
        w = np.asarray(w)
        assert isinstance(g, qb.Tensor), type(g)
        g_np = g.numpy()
        assert g_np.shape == w.shape, (g_np.shape, w.shape)
        assert g_np.dtype == w.dtype, (g_np.dtype, w.dtype)
        if w.dtype.kind == "f":
            rtol = tol or (2e-5 if w.dtype == np.float32 else 1e-12)
            np.testing.assert_allclose(g_np, w, rtol=rtol, atol=rtol, equal_nan=True)
        else:
            np.testing.assert_array_equal(g_np, w)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("qf,nf,builders,tol", CASES)
def test_op(qf, nf, builders, tol):
    args_np = [b() for b in builders]
    want = nf(*[np.array(a) if isinstance(a, np.ndarray) else a for a in args_np])
    args = [_to_qb(a) for a in args_np]
    eager = qf(*args)
    _check(eager, want, tol)
    jitted = qb.jit(lambda *xs: qf(*xs))(*args)
    _check(jitted, want, tol)
    # jit equals eager (tight: both are quabla programs)
    for j, e in zip(_leaves(jitted), _leaves(eager)):
        if e.dtype in (qb.float32, qb.float64):
            np.testing.assert_allclose(j.numpy(), e.numpy(), rtol=1e-5 if e.dtype == qb.float32 else 1e-12, equal_nan=True)
        else:
            np.testing.assert_array_equal(j.numpy(), e.numpy())
